//! The Runge-Kutta stage update of a cell from its face fluxes: a helper library over
//! [`super::scheme`], which the kernels that step the state import beside it.

use stencil_runtime::prelude::*;

/// The stage update ([`update::rk_update`]), and its two halves ([`update::rk_rates`],
/// [`update::rk_apply`]).
#[stencil_helpers(helpers = super::scheme)]
pub(super) mod update {
    /// One Runge-Kutta stage at a cell from its face fluxes (the west and south ones,
    /// read one cell up for the east and north faces): the new `(w, q, p, u, v)`.
    /// `U_to = keep U_to + (1 - keep) (U + dt R)` (`keep` 0 for a forward Euler step or
    /// the first stage of SSP-RK2, 1/2 for its second), with the rates `R` of KP07 3.6
    /// ([`rk_rates`]), then [`rk_apply`].
    #[stencil_fn]
    fn rk_update<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        faces: In<Fluxes<T>>,
        to: In<StateFields<T>>,
        dt: T,
        keep: T,
        s: Kp07<T>,
    ) -> (T, T, T, T, T) {
        let (rate_w, rate_q, rate_p) = rk_rates(from, bed, faces, s);
        rk_apply(from, bed, rate_w, rate_q, rate_p, to, dt, keep, s)
    }

    /// The rates `R = (R_w, R_q, R_p)` of KP07 3.6 at a cell from its face fluxes (the
    /// west and south ones, read one cell up for the east and north faces): minus the
    /// flux differences, plus the well-balanced bed-slope source of 3.12.
    #[stencil_fn]
    fn rk_rates<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        faces: In<Fluxes<T>>,
        s: Kp07<T>,
    ) -> (T, T, T) {
        rk_rates_with(from, bed, faces, own_surfaces(from, bed, s), s)
    }

    /// The surface at a cell's own faces `(west, east, south, north)`, as the faces
    /// reconstruct it ([`x_sides`], [`y_sides`]).
    #[stencil_fn]
    fn own_surfaces<T: Real>(from: In<StateFields<T>>, bed: In<T>, s: Kp07<T>) -> (T, T, T, T) {
        let (ww_in, _, _, we_in, _, _) = x_sides(from, bed, s);
        let (ws_in, _, _, wn_in, _, _) = y_sides(from, bed, s);
        (ww_in, we_in, ws_in, wn_in)
    }

    /// [`rk_rates`] from the six face fluxes one by one (staged values, named as the
    /// members of [`Fluxes`]) and the surface at the cell's own faces (`own`, as
    /// [`own_surfaces`] gives it).
    #[stencil_fn]
    fn staged_rates<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        ww: In<T>,
        wq: In<T>,
        wp: In<T>,
        sw: In<T>,
        sq: In<T>,
        sp: In<T>,
        own: (T, T, T, T),
        s: Kp07<T>,
    ) -> (T, T, T) {
        rk_rates_with(
            from,
            bed,
            Fluxes {
                west_w: ww,
                west_q: wq,
                west_p: wp,
                south_w: sw,
                south_q: sq,
                south_p: sp,
            },
            own,
            s,
        )
    }

    /// [`rk_rates`] with the surface at the cell's own faces given (`own`, as
    /// [`own_surfaces`] gives it).
    #[stencil_fn]
    fn rk_rates_with<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        faces: In<Fluxes<T>>,
        own: (T, T, T, T),
        s: Kp07<T>,
    ) -> (T, T, T) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let base = cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        let bx1 = 0.5 * (bed + bed[(0, 1)]);
        let bx2 = 0.5 * (bed[(1, 0)] + bed[(1, 1)]);
        let by1 = 0.5 * (bed + bed[(1, 0)]);
        let by2 = 0.5 * (bed[(0, 1)] + bed[(1, 1)]);
        let (ww_in, we_in, ws_in, wn_in) = own;

        // The east and north faces: the next cells' west and south faces, or boundary
        // faces computed here from this cell's velocities (as [`velocities`] gives them;
        // only edge cells compute them).
        let east_edge = i == nx - 1 && s.east != 4;
        let north_edge = j == ny - 1 && s.north != 4;
        let on_edge = east_edge || north_edge;
        let u = if on_edge {
            cell_velocity(from.w, base, from.q, s.eps)
        } else {
            0.0
        };
        let v = if on_edge {
            cell_velocity(from.w, base, from.p, s.eps)
        } else {
            0.0
        };
        let (east_w, east_q, east_p) = high_face(
            faces.west_w,
            faces.west_q,
            faces.west_p,
            0,
            east_edge,
            s.east,
            s.east_value,
            we_in,
            u,
            v,
            bx2,
            s.g,
            s.eps,
        );
        let (north_w, north_p, north_q) = high_face(
            faces.south_w,
            faces.south_p,
            faces.south_q,
            1,
            north_edge,
            s.north,
            s.north_value,
            wn_in,
            v,
            u,
            by2,
            s.g,
            s.eps,
        );

        // The bed-slope source `-g h (B_e - B_w) / dx` written, with the cell's own face
        // depths (`h_e + h_w = 2 h` by construction), as
        // `(g h_e^2 / 2 - g h_w^2 / 2 - g h (w_e - w_w)) / dx`: at rest its first two
        // terms are bit for bit the hydrostatic fluxes through the faces, so that the
        // lake at rest is kept to the last bit.
        let depth = from.w - base;
        let push_w = pressure(ww_in - bx1, s.g);
        let push_e = pressure(we_in - bx2, s.g);
        let push_s = pressure(ws_in - by1, s.g);
        let push_n = pressure(wn_in - by2, s.g);
        let rate_w = (faces.west_w - east_w) * s.dx_inv + (faces.south_w - north_w) * s.dy_inv;
        let rate_q = ((faces.west_q - east_q) + (push_e - push_w)) * s.dx_inv
            - s.g * depth * (we_in - ww_in) * s.dx_inv
            + (faces.south_q - north_q) * s.dy_inv;
        let rate_p = ((faces.south_p - north_p) + (push_n - push_s)) * s.dy_inv
            - s.g * depth * (wn_in - ws_in) * s.dy_inv
            + (faces.west_p - east_p) * s.dx_inv;
        (rate_w, rate_q, rate_p)
    }

    /// One Runge-Kutta stage at a cell from its rates ([`rk_rates`]):
    /// `U_to = keep U_to + (1 - keep) (U + dt R)`; then the surface kept on or above the
    /// bed (the depth never negative; dry cells lose their discharge), Manning friction
    /// applied semi-implicitly, `q / (1 + (1 - keep) dt g n^2 |u| / h^(4/3))` with
    /// `g_n2 = g n^2`, and the new state's velocities for the next faces: the new
    /// `(w, q, p, u, v)`.
    #[stencil_fn]
    fn rk_apply<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        rate_w: T,
        rate_q: T,
        rate_p: T,
        to: In<StateFields<T>>,
        dt: T,
        keep: T,
        s: Kp07<T>,
    ) -> (T, T, T, T, T) {
        let base = cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        let fresh = 1.0 - keep;
        let old_w = if keep > 0.0 { keep * to.w } else { 0.0 };
        let old_q = if keep > 0.0 { keep * to.q } else { 0.0 };
        let old_p = if keep > 0.0 { keep * to.p } else { 0.0 };
        let wn = old_w + fresh * (from.w + dt * rate_w);
        let qn = old_q + fresh * (from.q + dt * rate_q);
        let pn = old_p + fresh * (from.p + dt * rate_p);
        let h = (wn - base).max(0.0);
        let un = velocity(h, qn, s.eps);
        let vn = velocity(h, pn, s.eps);
        // `1 / (1 + (1 - keep) dt g n^2 |u| / h^(4/3))` with one division; the floor keeps
        // 0 / 0 out of films thin enough to underflow.
        let h43 = h.powf(4.0 / 3.0).max(1e-30);
        let h2 = h * h;
        let damp = if h2 * h2 > s.eps {
            h43 / (h43 + fresh * dt * s.g_n2 * (un * un + vn * vn).sqrt())
        } else {
            0.0
        };
        // A step of 0 (a clock's step queued after the target was reached) leaves the
        // state as it was: `to` keeps its values, or takes `from`'s in a first stage.
        let moves = dt > 0.0;
        let first = keep == 0.0;
        let w_was = if first { from.w } else { to.w };
        let q_was = if first { from.q } else { to.q };
        let p_was = if first { from.p } else { to.p };
        let w_new = if moves { wn.max(base) } else { w_was };
        let q_new = if moves { qn * damp } else { q_was };
        let p_new = if moves { pn * damp } else { p_was };
        // Exactly what [`velocities`] gives for the new state (its depth `w_new - base`
        // is `h` to the bit), so that a state restored from its conserved fields goes on
        // bit for bit.
        let h_new = if moves { h } else { (w_was - base).max(0.0) };
        (
            w_new,
            q_new,
            p_new,
            velocity(h_new, q_new, s.eps),
            velocity(h_new, p_new, s.eps),
        )
    }
}
