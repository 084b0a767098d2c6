//! Every kernel of the shallow-water solver, in the stencil language: the central-upwind
//! scheme of Kurganov & Petrova (2007), "A second-order well-balanced positivity preserving
//! central-upwind scheme for the Saint-Venant system", Commun. Math. Sci. 5(1).
//!
//! The grid is cell-centred, `nx x ny` cells of `dx x dy`. The state is the cell averages
//! of the surface elevation `w = h + B`, and the discharges `q = h u` and `p = h v`. The
//! bed `B` is continuous and bilinear in each cell, given by its values at the cell
//! corners: a corner field `bed` of the same extent as the state, `bed[(0, 0)]` being the
//! south-west corner of the cell and the last row and column of corners lying in the
//! halo. The state (with its velocities `u`, `v`) has a halo of two cells, the face
//! fluxes one; both halos are read only where a periodic side wraps them (see
//! [`crate::Boundary`]).
//!
//! A stage is two passes: [`kp07::faces`] computes every face's flux once, and
//! [`kp07::advance`] takes their differences and steps the state.
//!
//! Each side of the rectangle has a kind, an `i64` chosen at run time, and a value:
//! 0 reflecting wall, 1 fixed depth (the value), 2 fixed discharge into the domain per
//! unit width (the value), 3 open (zero gradient), 4 periodic. On a side that is not
//! periodic the outermost cells are reconstructed as constants, and the state outside the
//! boundary face is the side's condition applied to the state inside it.
//!
//! The scheme's pieces (reconstruction, fluxes, boundary states, the update) are the
//! helper library [`scheme`] (the stage update from the fluxes, `update.rs`, a library of
//! its own over it); the kernels that step the state are in `stages.rs`, those
//! that look at it in `checks.rs`, and [`kp07`] names every kernel.

use stencil_runtime::prelude::*;

mod checks;
mod groups;
mod stages;
mod update;

/// Every kernel of the shallow-water solver, whichever module defines it.
pub mod kp07 {
    pub use super::checks::kernels::*;
    pub use super::scheme::{Fluxes, Kp07, StateFields};
    pub use super::stages::kernels::*;
}

/// The pieces of the scheme that the kernels share: limited slopes, the surface and
/// velocities at faces, the central-upwind fluxes, the boundary states and the update.
#[stencil_helpers]
mod scheme {
    /// The scalars of the KP07 kernels at one time: the physics, the grid's spacing and
    /// each side's kind and value (see the module's documentation).
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Kp07<T> {
        /// Gravity.
        pub g: T,
        /// `g n^2`, the friction's factor (Manning's `n`).
        pub g_n2: T,
        /// The limiter's parameter, in `[1, 2]`.
        pub theta: T,
        /// `eps` of the desingularisation.
        pub eps: T,
        /// `1 / dx`.
        pub dx_inv: T,
        /// `1 / dy`.
        pub dy_inv: T,
        /// The west side's kind.
        pub west: i64,
        /// The east side's kind.
        pub east: i64,
        /// The south side's kind.
        pub south: i64,
        /// The north side's kind.
        pub north: i64,
        /// The west side's value.
        pub west_value: T,
        /// The east side's value.
        pub east_value: T,
        /// The south side's value.
        pub south_value: T,
        /// The north side's value.
        pub north_value: T,
    }

    /// The fields of a state, taken as one group (`from: In<StateFields<T>>`): the
    /// conserved `w`, `q`, `p` and the velocities `u`, `v` the faces reconstruct. On the
    /// host, a struct of five (block) fields.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct StateFields<T> {
        /// The surface elevation.
        pub w: T,
        /// The x discharge.
        pub q: T,
        /// The y discharge.
        pub p: T,
        /// The x velocity.
        pub u: T,
        /// The y velocity.
        pub v: T,
    }

    /// The fluxes through each cell's west and south faces, taken as one group
    /// (`faces: In<Fluxes<T>>`): of the surface `w` and of the discharges `q` (along x)
    /// and `p` (along y), through either face. A cell reads its east and north faces as
    /// its neighbours' west and south ones.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Fluxes<T> {
        /// The flux of the surface elevation through the west face.
        pub west_w: T,
        /// The flux of the x discharge through the west face.
        pub west_q: T,
        /// The flux of the y discharge through the west face.
        pub west_p: T,
        /// The flux of the surface elevation through the south face.
        pub south_w: T,
        /// The flux of the x discharge through the south face.
        pub south_q: T,
        /// The flux of the y discharge through the south face.
        pub south_p: T,
    }

    /// [`low_face`] along x: the west face's fluxes `(w, q, p)` and the speeds `a` on
    /// its two sides, with `u` the normal velocity.
    #[stencil_fn]
    fn west_face<T: Real>(w: In<T>, u: In<T>, v: In<T>, bed: In<T>, s: Kp07<T>) -> (T, T, T, T, T) {
        low_face(w, u, v, bed, 0, s)
    }

    /// [`low_face`] along y: the south face's fluxes `(w, p, q)` (the normal discharge
    /// first) and speeds, with `v` the normal velocity.
    #[stencil_fn]
    fn south_face<T: Real>(
        w: In<T>,
        u: In<T>,
        v: In<T>,
        bed: In<T>,
        s: Kp07<T>,
    ) -> (T, T, T, T, T) {
        low_face(w, v, u, bed, 1, s)
    }

    /// The kinds of axis `a`'s low and high sides (west and east, or south and north),
    /// then their values.
    #[stencil_fn]
    fn axis_sides<T: Real>(a: i64, s: Kp07<T>) -> (i64, i64, T, T) {
        let x = a == 0;
        (
            if x { s.west } else { s.south },
            if x { s.east } else { s.north },
            if x { s.west_value } else { s.south_value },
            if x { s.east_value } else { s.north_value },
        )
    }

    /// The limited difference across a cell (the slope times the cell width) from the
    /// cell averages below, at and above it, with the generalised minmod limiter of
    /// parameter `theta` in `[1, 2]`; 0 where the cell is reconstructed as a constant.
    #[stencil_fn]
    fn slope<T: Real>(below: T, centre: T, above: T, theta: T, flat: bool) -> T {
        let s = minmod3(
            theta * (centre - below),
            0.5 * (above - below),
            theta * (above - centre),
        );
        if flat {
            0.0
        } else {
            s
        }
    }

    /// Whether cell `k` of `n` along an axis is reconstructed as a constant: an outermost
    /// cell on a side that is not periodic (kind 4).
    #[stencil_fn]
    fn flat(k: i64, n: i64, lo: i64, hi: i64) -> bool {
        (k == 0 && lo != 4) || (k == n - 1 && hi != 4)
    }

    /// The surface at a cell's upper face (east or north) from its average `w` and
    /// difference `s`, corrected so that it lies above the bed at both faces (KP07 2.14):
    /// where the upper value would fall below the bed there it is set to the bed, where
    /// the lower value would, the lower one is; the other keeps the average.
    /// A dry cell (`w` at or below the cell's bed `bed`) has the bed at its faces: no
    /// rounding in the bed's averages may leave a film there.
    #[stencil_fn]
    fn upper_surface<T: Real>(w: T, s: T, bed: T, bed_lower: T, bed_upper: T) -> T {
        if w <= bed {
            bed_upper
        } else if w + 0.5 * s < bed_upper {
            bed_upper
        } else if w - 0.5 * s < bed_lower {
            2.0 * w - bed_lower
        } else {
            w + 0.5 * s
        }
    }

    /// The surface at a cell's lower face (west or south), corrected as in
    /// [`upper_surface`].
    #[stencil_fn]
    fn lower_surface<T: Real>(w: T, s: T, bed: T, bed_lower: T, bed_upper: T) -> T {
        if w <= bed {
            bed_lower
        } else if w + 0.5 * s < bed_upper {
            2.0 * w - bed_upper
        } else if w - 0.5 * s < bed_lower {
            bed_lower
        } else {
            w - 0.5 * s
        }
    }

    /// A cell's mean bed from its corners (south-west, south-east, north-west,
    /// north-east), always summed in this order.
    #[stencil_fn]
    fn cell_bed<T: Real>(sw: T, se: T, nw: T, ne: T) -> T {
        0.25 * (sw + se + nw + ne)
    }

    /// The factor `sqrt(2) h / sqrt(h^4 + max(h^4, eps))` that turns a discharge at depth
    /// `h` into its desingularised velocity (KP07 2.17): `1 / h` where `h^4 >> eps`,
    /// tending to 0 with `h`. One division serves both discharges of a cell.
    #[stencil_fn]
    fn velocity_factor<T: Real>(h: T, eps: T) -> T {
        let h2 = h * h;
        let h4 = h2 * h2;
        1.4142135623730951 * h / (h4 + h4.max(eps)).sqrt()
    }

    /// The desingularised velocity of discharge `q` at depth `h` (see
    /// [`velocity_factor`]).
    #[stencil_fn]
    fn velocity<T: Real>(h: T, q: T, eps: T) -> T {
        q * velocity_factor(h, eps)
    }

    /// The surface just outside a boundary face from the one just inside: the bed plus
    /// the side's depth on a fixed-depth side (kind 1), else the same.
    #[stencil_fn]
    fn outer_surface<T: Real>(kind: i64, inner: T, bed: T, value: T) -> T {
        if kind == 1 {
            bed + value
        } else {
            inner
        }
    }

    /// The normal velocity just outside a boundary face: mirrored at a wall (kind 0),
    /// the side's inflow discharge over the depth `h` at the face on a fixed-discharge
    /// side (kind 2, where the surface outside is the one inside, so `h` is the inner
    /// depth; `inward` is +1 on a low side and -1 on a high one), else the same.
    #[stencil_fn]
    fn outer_normal<T: Real>(kind: i64, inner: T, h: T, value: T, inward: T, eps: T) -> T {
        if kind == 0 {
            -inner
        } else if kind == 2 {
            velocity(h, inward * value, eps)
        } else {
            inner
        }
    }

    /// A cell's desingularised velocity from its surface `w`, mean bed `base` and
    /// discharge `q`.
    #[stencil_fn]
    fn cell_velocity<T: Real>(w: T, base: T, q: T, eps: T) -> T {
        velocity((w - base).max(0.0), q, eps)
    }

    /// The hydrostatic pressure force `g h^2 / 2` of a face depth `h` (0 below 0).
    #[stencil_fn]
    fn pressure<T: Real>(h: T, g: T) -> T {
        let d = h.max(0.0);
        0.5 * g * d * d
    }

    /// One component of the central-upwind flux across a face (KP07 3.7) with the states
    /// below (`l`) and above (`r`) it: surface `w`, normal velocity `u`, tangential
    /// velocity `v`; `bed` is the bed at the face. Component 0 is the flux of `w`, 1 of
    /// the normal discharge, 2 of the tangential one, 3 the largest wave speed at the face.
    /// The discharges are the face depths times the reconstructed velocities.
    #[stencil_fn]
    fn face_flux<T: Real>(
        component: i64,
        wl: T,
        ul: T,
        vl: T,
        wr: T,
        ur: T,
        vr: T,
        bed: T,
        g: T,
    ) -> T {
        let hl = (wl - bed).max(0.0);
        let hr = (wr - bed).max(0.0);
        let cl = (g * hl).sqrt();
        let cr = (g * hr).sqrt();
        let ap = (ur + cr).max(ul + cl).max(0.0);
        let am = (ur - cr).min(ul - cl).min(0.0);
        if component == 0 {
            central_upwind(ap, am, hl * ul, hr * ur, wl, wr)
        } else if component == 1 {
            central_upwind(
                ap,
                am,
                hl * ul * ul + pressure(hl, g),
                hr * ur * ur + pressure(hr, g),
                hl * ul,
                hr * ur,
            )
        } else if component == 2 {
            central_upwind(ap, am, hl * ul * vl, hr * ur * vr, hl * vl, hr * vr)
        } else {
            ap.max(-am)
        }
    }

    /// The central-upwind combination `(a+ f_l - a- f_r + a+ a- (u_r - u_l)) / (a+ - a-)`
    /// of the fluxes `f` and states `u` on the two sides of a face, with the one-sided
    /// speeds `a+ >= 0 >= a-`; 0 where both vanish (dry on both sides). It is evaluated
    /// as `f_l + a- / (a+ - a-) (f_l - f_r + a+ (u_r - u_l))`, which is exactly `f_l`
    /// when the two sides agree (a lake at rest stays balanced to the last bit); the
    /// weight `a- / (a+ - a-)` is the same for every component of a face's flux, so one
    /// division serves all three.
    #[stencil_fn]
    fn central_upwind<T: Real>(ap: T, am: T, fl: T, fr: T, ul: T, ur: T) -> T {
        let d = ap - am;
        let flux = fl + am / d * (fl - fr + ap * (ur - ul));
        if d > 0.0 {
            flux
        } else {
            0.0
        }
    }

    /// One component (as in [`face_flux`]) of the flux through a boundary face that is
    /// not periodic, from the state just inside it (surface `w_in`, normal velocity
    /// `n_in`, tangential velocity `t_in`) and the side's condition (`kind`, `value`);
    /// `inward` is +1 on a low side (west, south) and -1 on a high one, `bed` the bed at
    /// the face. The outermost cell is reconstructed as a constant, so `n_in` and `t_in`
    /// are that cell's velocities.
    #[stencil_fn]
    fn boundary_flux<T: Real>(
        component: i64,
        kind: i64,
        value: T,
        inward: T,
        w_in: T,
        n_in: T,
        t_in: T,
        bed: T,
        g: T,
        eps: T,
    ) -> T {
        let w_out = outer_surface(kind, w_in, bed, value);
        let n_out = outer_normal(kind, n_in, (w_in - bed).max(0.0), value, inward, eps);
        if inward > 0.0 {
            face_flux(component, w_out, n_out, t_in, w_in, n_in, t_in, bed, g)
        } else {
            face_flux(component, w_in, n_in, t_in, w_out, n_out, t_in, bed, g)
        }
    }

    /// The flux through the low face along axis `a` (between the cell below and this
    /// one, KP07 3.7 on the reconstruction of 3.9-3.11) and the largest wave speeds at it
    /// and, where it is a domain side not periodic, at the high face: `(flux of w, of the
    /// normal discharge, of the tangential one, speed low, speed high)`. `normal` and
    /// `tangent` are the velocity fields along and across the axis.
    #[stencil_fn]
    fn low_face<T: Real>(
        w: In<T>,
        normal: In<T>,
        tangent: In<T>,
        bed: In<T>,
        a: i64,
        s: Kp07<T>,
    ) -> (T, T, T, T, T) {
        let n = unit(a);
        let (_, _, _, w_out, n_out, t_out) = cell_sides(w, normal, tangent, bed, -n, a, s);
        let (w_in, n_in, t_in, w_hi, _, _) = cell_sides(w, normal, tangent, bed, (0, 0), a, s);
        let (below, above) = ((w_out, n_out, t_out), (w_in, n_in, t_in));
        face_of_sides(below, above, w_hi, normal, tangent, bed, a, s)
    }

    /// The sides of the cell `d` away along axis `a` (KP07 3.9-3.11, the surface corrected
    /// by 2.14): `(w, normal, tangent)` at its low face, then at its high face, from its
    /// limited slopes. `normal` and `tangent` are the velocity fields along and across the
    /// axis, `lo` and `hi` the kinds of the axis's two sides.
    #[stencil_fn]
    fn cell_sides<T: Real>(
        w: In<T>,
        normal: In<T>,
        tangent: In<T>,
        bed: In<T>,
        d: (i64, i64),
        a: i64,
        s: Kp07<T>,
    ) -> (T, T, T, T, T, T) {
        // The offsets one cell along the axis and one across it.
        let (n, t) = (unit(a), unit(1 - a));
        let (lo, hi, _, _) = axis_sides(a, s);
        let base = cell_bed(
            bed[d],
            bed[d + unit(0)],
            bed[d + unit(1)],
            bed[d + unit(0) + unit(1)],
        );
        // The bed at the cell's low and high faces: the corners summed in the same order
        // wherever a face is computed.
        let (b_lo, b_hi) = (
            0.5 * (bed[d] + bed[d + t]),
            0.5 * (bed[d + n] + bed[d + n + t]),
        );
        let f = flat(index(a) + d[a], extent(a), lo, hi);
        let sw = slope(w[d - n], w[d], w[d + n], s.theta, f);
        let sn = slope(normal[d - n], normal[d], normal[d + n], s.theta, f);
        let st = slope(tangent[d - n], tangent[d], tangent[d + n], s.theta, f);
        (
            lower_surface(w[d], sw, base, b_lo, b_hi),
            normal[d] - 0.5 * sn,
            tangent[d] - 0.5 * st,
            upper_surface(w[d], sw, base, b_lo, b_hi),
            normal[d] + 0.5 * sn,
            tangent[d] + 0.5 * st,
        )
    }

    /// The sides of a cell along x ([`cell_sides`] with `u` the normal velocity): its
    /// low (west) face's `(w, u, v)`, then its high (east) face's.
    #[stencil_fn]
    fn x_sides<T: Real>(from: In<StateFields<T>>, bed: In<T>, s: Kp07<T>) -> (T, T, T, T, T, T) {
        cell_sides(from.w, from.u, from.v, bed, (0, 0), 0, s)
    }

    /// The sides of a cell along y ([`cell_sides`] with `v` the normal velocity): its
    /// low (south) face's `(w, v, u)`, then its high (north) face's.
    #[stencil_fn]
    fn y_sides<T: Real>(from: In<StateFields<T>>, bed: In<T>, s: Kp07<T>) -> (T, T, T, T, T, T) {
        cell_sides(from.w, from.v, from.u, bed, (0, 0), 1, s)
    }

    /// The low face along axis `a` from the cells' sides staged along it ([`x_sides`],
    /// [`y_sides`]: `(lw, ln, lt)` the surface, normal and tangential velocity at a cell's
    /// low face, `(hw, hn, ht)` at its high face, the cell below read at `-unit(a)`), as
    /// [`low_face`] gives it, with the larger of its two speeds: `(flux of w, of the
    /// normal discharge, of the tangential one, speed)`.
    #[stencil_fn]
    fn face_of_staged_sides<T: Real>(
        lw: In<T>,
        ln: In<T>,
        lt: In<T>,
        hw: In<T>,
        hn: In<T>,
        ht: In<T>,
        from: In<StateFields<T>>,
        bed: In<T>,
        a: i64,
        s: Kp07<T>,
    ) -> (T, T, T, T) {
        let n = unit(a);
        // The cell's velocities along and across the axis.
        let x = a == 0;
        let (normal, tangent) = (
            if x { from.u } else { from.v },
            if x { from.v } else { from.u },
        );
        let below = (hw[-n], hn[-n], ht[-n]);
        let (f0, f1, f2, speed_lo, speed_hi) =
            face_of_sides(below, (lw, ln, lt), hw, normal, tangent, bed, a, s);
        (f0, f1, f2, speed_lo.max(speed_hi))
    }

    /// The low face along axis `a` from the sides of the cells either side of it
    /// ([`cell_sides`]: `below`'s high side, `above`'s low side, each `(w, normal,
    /// tangent)`), as [`low_face`] gives it; `w_hi`, `normal` and `tangent` are the cell
    /// above's surface at its high face and its velocities (for the speed at the high
    /// face of the domain's last cell).
    #[stencil_fn]
    fn face_of_sides<T: Real>(
        below: (T, T, T),
        above: (T, T, T),
        w_hi: T,
        normal: T,
        tangent: T,
        bed: In<T>,
        a: i64,
        s: Kp07<T>,
    ) -> (T, T, T, T, T) {
        let (n, t) = (unit(a), unit(1 - a));
        let i = index(a);
        let (lo, hi, lo_value, hi_value) = axis_sides(a, s);
        let (eps, g) = (s.eps, s.g);
        let (b1, b2) = (0.5 * (bed + bed[t]), 0.5 * (bed[n] + bed[n + t]));
        let (w_in, n_in, t_in) = above;
        let (w_below, n_below, t_below) = below;
        let edge = i == 0 && lo != 4;
        let w_out = if edge {
            outer_surface(lo, w_in, b1, lo_value)
        } else {
            w_below
        };
        let n_out = if edge {
            outer_normal(lo, n_in, (w_in - b1).max(0.0), lo_value, 1.0, eps)
        } else {
            n_below
        };
        let t_out = if edge { t_in } else { t_below };
        let f0 = face_flux(0, w_out, n_out, t_out, w_in, n_in, t_in, b1, g);
        let f1 = face_flux(1, w_out, n_out, t_out, w_in, n_in, t_in, b1, g);
        let f2 = face_flux(2, w_out, n_out, t_out, w_in, n_in, t_in, b1, g);
        let speed_lo = face_flux(3, w_out, n_out, t_out, w_in, n_in, t_in, b1, g);
        let speed_hi = if i == extent(a) - 1 && hi != 4 {
            boundary_flux(3, hi, hi_value, -1.0, w_hi, normal, tangent, b2, g, eps)
        } else {
            0.0
        };
        (f0, f1, f2, speed_lo, speed_hi)
    }

    /// The fluxes `(w, normal, tangential)` through the high face along axis `a`: the
    /// next cell's low face (`low_w`, `low_n`, `low_t` read one cell up the axis) or, on a
    /// domain side not periodic (`edge`, of `kind` and `value`), the boundary fluxes from
    /// this cell's state:
    /// `w_hi` the surface at the face, `normal` and `tangent` the cell's velocities,
    /// `b_hi` the bed at the face.
    #[stencil_fn]
    fn high_face<T: Real>(
        low_w: In<T>,
        low_n: In<T>,
        low_t: In<T>,
        a: i64,
        edge: bool,
        kind: i64,
        value: T,
        w_hi: T,
        normal: T,
        tangent: T,
        b_hi: T,
        g: T,
        eps: T,
    ) -> (T, T, T) {
        let fw = boundary_flux(0, kind, value, -1.0, w_hi, normal, tangent, b_hi, g, eps);
        let fn_ = boundary_flux(1, kind, value, -1.0, w_hi, normal, tangent, b_hi, g, eps);
        let ft = boundary_flux(2, kind, value, -1.0, w_hi, normal, tangent, b_hi, g, eps);
        (
            if edge { fw } else { low_w[unit(a)] },
            if edge { fn_ } else { low_n[unit(a)] },
            if edge { ft } else { low_t[unit(a)] },
        )
    }
}
