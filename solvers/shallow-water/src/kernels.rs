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

use stencil_runtime::prelude::*;

#[stencils]
pub mod kp07 {
    /// The generalised minmod of three values: the smallest in magnitude if all three
    /// have one sign, else 0.
    #[stencil_fn]
    fn minmod<T: Real>(a: T, b: T, c: T) -> T {
        if a > 0.0 && b > 0.0 && c > 0.0 {
            a.min(b).min(c)
        } else if a < 0.0 && b < 0.0 && c < 0.0 {
            a.max(b).max(c)
        } else {
            0.0
        }
    }

    /// The limited difference across a cell (the slope times the cell width) from the
    /// cell averages below, at and above it, with the generalised minmod limiter of
    /// parameter `theta` in `[1, 2]`; 0 where the cell is reconstructed as a constant.
    #[stencil_fn]
    fn slope<T: Real>(below: T, centre: T, above: T, theta: T, flat: bool) -> T {
        let s = minmod(
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

    /// The desingularised velocities `u = q / h` and `v = p / h` of a state (KP07 2.17),
    /// which the face fluxes reconstruct: [`advance`] writes them with every new state;
    /// this kernel gives them for a state set from outside (the start, a restored
    /// checkpoint).
    #[stencil]
    pub fn velocities<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        bed: In<T>,
        u: Out<T>,
        v: Out<T>,
        eps: T,
    ) {
        let base = cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        u = cell_velocity(w, base, q, eps);
        v = cell_velocity(w, base, p, eps);
    }

    /// The central-upwind fluxes (KP07 3.7) through each cell's west and south faces,
    /// each face computed once, and the largest `a / dx` over them (the CFL time step is
    /// `C` over its maximum: a reduction fused into this pass). A face's two states are
    /// reconstructed from the four cells around it: the surface with the limited slopes
    /// and the positivity correction (KP07 2.14), the velocities `u`, `v` (those of
    /// [`velocities`]) with limited slopes, and the face discharges are the face depths
    /// times the face velocities (as Kurganov recommends in his 2018 review, Acta
    /// Numerica 27). Reconstructing the discharges instead lets a deep neighbour's
    /// discharge meet a nearly dry face: velocities of thousands of m/s at wet-dry fronts
    /// and time steps a thousand times too short (measured on Malpasset).
    ///
    /// `west_q` and `south_p` are the fluxes of the discharge normal to the face, the
    /// others of the tangential one. The east face of the last column and the north face
    /// of the last row belong to no cell: on a periodic side they are the first
    /// column's and row's (the caller wraps the flux fields), on any other [`advance`]
    /// computes them, and their speeds are counted here.
    #[stencil]
    pub fn faces<T: Real>(
        w: In<T>,
        u: In<T>,
        v: In<T>,
        bed: In<T>,
        west_w: Out<T>,
        west_q: Out<T>,
        west_p: Out<T>,
        south_w: Out<T>,
        south_q: Out<T>,
        south_p: Out<T>,
        speed: Max<T>,
        g: T,
        theta: T,
        eps: T,
        dx_inv: T,
        dy_inv: T,
        west: i64,
        east: i64,
        south: i64,
        north: i64,
        west_value: T,
        east_value: T,
        south_value: T,
        north_value: T,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let base = cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);

        // Along x: the face between the west neighbour (below) and this cell (above), the
        // bed at the faces i - 3/2, i - 1/2 and i + 1/2.
        let base_w = cell_bed(bed[(-1, 0)], bed, bed[(-1, 1)], bed[(0, 1)]);
        let bx0 = 0.5 * (bed[(-1, 0)] + bed[(-1, 1)]);
        let bx1 = 0.5 * (bed + bed[(0, 1)]);
        let bx2 = 0.5 * (bed[(1, 0)] + bed[(1, 1)]);
        let fxm = flat(i - 1, nx, west, east);
        let fxc = flat(i, nx, west, east);
        let swm = slope(w[(-2, 0)], w[(-1, 0)], w, theta, fxm);
        let swc = slope(w[(-1, 0)], w, w[(1, 0)], theta, fxc);
        let sum = slope(u[(-2, 0)], u[(-1, 0)], u, theta, fxm);
        let suc = slope(u[(-1, 0)], u, u[(1, 0)], theta, fxc);
        let svm = slope(v[(-2, 0)], v[(-1, 0)], v, theta, fxm);
        let svc = slope(v[(-1, 0)], v, v[(1, 0)], theta, fxc);
        let ww_in = lower_surface(w, swc, base, bx1, bx2);
        let uw_in = u - 0.5 * suc;
        let vw_in = v - 0.5 * svc;
        let west_edge = i == 0 && west != 4;
        let ww_out = if west_edge {
            outer_surface(west, ww_in, bx1, west_value)
        } else {
            upper_surface(w[(-1, 0)], swm, base_w, bx0, bx1)
        };
        let uw_out = if west_edge {
            outer_normal(west, uw_in, (ww_in - bx1).max(0.0), west_value, 1.0, eps)
        } else {
            u[(-1, 0)] + 0.5 * sum
        };
        let vw_out = if west_edge {
            vw_in
        } else {
            v[(-1, 0)] + 0.5 * svm
        };
        west_w = face_flux(0, ww_out, uw_out, vw_out, ww_in, uw_in, vw_in, bx1, g);
        west_q = face_flux(1, ww_out, uw_out, vw_out, ww_in, uw_in, vw_in, bx1, g);
        west_p = face_flux(2, ww_out, uw_out, vw_out, ww_in, uw_in, vw_in, bx1, g);
        let west_a = face_flux(3, ww_out, uw_out, vw_out, ww_in, uw_in, vw_in, bx1, g);
        let we_in = upper_surface(w, swc, base, bx1, bx2);
        let east_a = if i == nx - 1 && east != 4 {
            boundary_flux(3, east, east_value, -1.0, we_in, u, v, bx2, g, eps)
        } else {
            0.0
        };

        // Along y, the same with v normal and u tangential.
        let base_s = cell_bed(bed[(0, -1)], bed[(1, -1)], bed, bed[(1, 0)]);
        let by0 = 0.5 * (bed[(0, -1)] + bed[(1, -1)]);
        let by1 = 0.5 * (bed + bed[(1, 0)]);
        let by2 = 0.5 * (bed[(0, 1)] + bed[(1, 1)]);
        let fym = flat(j - 1, ny, south, north);
        let fyc = flat(j, ny, south, north);
        let twm = slope(w[(0, -2)], w[(0, -1)], w, theta, fym);
        let twc = slope(w[(0, -1)], w, w[(0, 1)], theta, fyc);
        let tum = slope(u[(0, -2)], u[(0, -1)], u, theta, fym);
        let tuc = slope(u[(0, -1)], u, u[(0, 1)], theta, fyc);
        let tvm = slope(v[(0, -2)], v[(0, -1)], v, theta, fym);
        let tvc = slope(v[(0, -1)], v, v[(0, 1)], theta, fyc);
        let ws_in = lower_surface(w, twc, base, by1, by2);
        let us_in = u - 0.5 * tuc;
        let vs_in = v - 0.5 * tvc;
        let south_edge = j == 0 && south != 4;
        let ws_out = if south_edge {
            outer_surface(south, ws_in, by1, south_value)
        } else {
            upper_surface(w[(0, -1)], twm, base_s, by0, by1)
        };
        let us_out = if south_edge {
            us_in
        } else {
            u[(0, -1)] + 0.5 * tum
        };
        let vs_out = if south_edge {
            outer_normal(south, vs_in, (ws_in - by1).max(0.0), south_value, 1.0, eps)
        } else {
            v[(0, -1)] + 0.5 * tvm
        };
        south_w = face_flux(0, ws_out, vs_out, us_out, ws_in, vs_in, us_in, by1, g);
        south_p = face_flux(1, ws_out, vs_out, us_out, ws_in, vs_in, us_in, by1, g);
        south_q = face_flux(2, ws_out, vs_out, us_out, ws_in, vs_in, us_in, by1, g);
        let south_a = face_flux(3, ws_out, vs_out, us_out, ws_in, vs_in, us_in, by1, g);
        let wn_in = upper_surface(w, twc, base, by1, by2);
        let north_a = if j == ny - 1 && north != 4 {
            boundary_flux(3, north, north_value, -1.0, wn_in, v, u, by2, g, eps)
        } else {
            0.0
        };
        speed.reduce((west_a.max(east_a) * dx_inv).max(south_a.max(north_a) * dy_inv));
    }

    /// One Runge-Kutta stage from the face fluxes of [`faces`]:
    /// `U_to = keep U_to + (1 - keep) (U + dt R)` (`keep` 0 for a forward Euler step or
    /// the first stage of SSP-RK2, 1/2 for its second), with the rates `R` of KP07 3.6
    /// (minus the flux differences, plus the well-balanced bed-slope source of 3.12);
    /// then the surface kept on or above the bed (the depth never negative; dry cells
    /// lose their discharge), Manning friction applied semi-implicitly,
    /// `q / (1 + (1 - keep) dt g n^2 |u| / h^(4/3))` with `g_n2 = g n^2`, and the new
    /// state's velocities written for the next [`faces`].
    #[stencil]
    pub fn advance<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        west_w: In<T>,
        west_q: In<T>,
        west_p: In<T>,
        south_w: In<T>,
        south_q: In<T>,
        south_p: In<T>,
        bed: In<T>,
        w_to: InOut<T>,
        q_to: InOut<T>,
        p_to: InOut<T>,
        u_to: Out<T>,
        v_to: Out<T>,
        dt: T,
        keep: T,
        g: T,
        g_n2: T,
        theta: T,
        eps: T,
        dx_inv: T,
        dy_inv: T,
        west: i64,
        east: i64,
        south: i64,
        north: i64,
        east_value: T,
        north_value: T,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let base = cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);

        // The surface at this cell's own faces, as [`faces`] reconstructs it.
        let bx1 = 0.5 * (bed + bed[(0, 1)]);
        let bx2 = 0.5 * (bed[(1, 0)] + bed[(1, 1)]);
        let by1 = 0.5 * (bed + bed[(1, 0)]);
        let by2 = 0.5 * (bed[(0, 1)] + bed[(1, 1)]);
        let swc = slope(w[(-1, 0)], w, w[(1, 0)], theta, flat(i, nx, west, east));
        let twc = slope(w[(0, -1)], w, w[(0, 1)], theta, flat(j, ny, south, north));
        let ww_in = lower_surface(w, swc, base, bx1, bx2);
        let we_in = upper_surface(w, swc, base, bx1, bx2);
        let ws_in = lower_surface(w, twc, base, by1, by2);
        let wn_in = upper_surface(w, twc, base, by1, by2);

        // The east and north faces: the next cells' west and south faces, or boundary
        // faces computed here from this cell's velocities (as [`velocities`] gives them;
        // only edge cells compute them).
        let east_edge = i == nx - 1 && east != 4;
        let north_edge = j == ny - 1 && north != 4;
        let on_edge = east_edge || north_edge;
        let u = if on_edge {
            cell_velocity(w, base, q, eps)
        } else {
            0.0
        };
        let v = if on_edge {
            cell_velocity(w, base, p, eps)
        } else {
            0.0
        };
        let east_w = if east_edge {
            boundary_flux(0, east, east_value, -1.0, we_in, u, v, bx2, g, eps)
        } else {
            west_w[(1, 0)]
        };
        let east_q = if east_edge {
            boundary_flux(1, east, east_value, -1.0, we_in, u, v, bx2, g, eps)
        } else {
            west_q[(1, 0)]
        };
        let east_p = if east_edge {
            boundary_flux(2, east, east_value, -1.0, we_in, u, v, bx2, g, eps)
        } else {
            west_p[(1, 0)]
        };
        let north_w = if north_edge {
            boundary_flux(0, north, north_value, -1.0, wn_in, v, u, by2, g, eps)
        } else {
            south_w[(0, 1)]
        };
        let north_p = if north_edge {
            boundary_flux(1, north, north_value, -1.0, wn_in, v, u, by2, g, eps)
        } else {
            south_p[(0, 1)]
        };
        let north_q = if north_edge {
            boundary_flux(2, north, north_value, -1.0, wn_in, v, u, by2, g, eps)
        } else {
            south_q[(0, 1)]
        };

        // The bed-slope source `-g h (B_e - B_w) / dx` written, with the cell's own face
        // depths (`h_e + h_w = 2 h` by construction), as
        // `(g h_e^2 / 2 - g h_w^2 / 2 - g h (w_e - w_w)) / dx`: at rest its first two
        // terms are bit for bit the hydrostatic fluxes through the faces, so that the
        // lake at rest is kept to the last bit.
        let depth = w - base;
        let push_w = pressure(ww_in - bx1, g);
        let push_e = pressure(we_in - bx2, g);
        let push_s = pressure(ws_in - by1, g);
        let push_n = pressure(wn_in - by2, g);
        let rate_w = (west_w - east_w) * dx_inv + (south_w - north_w) * dy_inv;
        let rate_q = ((west_q - east_q) + (push_e - push_w)) * dx_inv
            - g * depth * (we_in - ww_in) * dx_inv
            + (south_q - north_q) * dy_inv;
        let rate_p = ((south_p - north_p) + (push_n - push_s)) * dy_inv
            - g * depth * (wn_in - ws_in) * dy_inv
            + (west_p - east_p) * dx_inv;

        let fresh = 1.0 - keep;
        let old_w = if keep > 0.0 { keep * w_to } else { 0.0 };
        let old_q = if keep > 0.0 { keep * q_to } else { 0.0 };
        let old_p = if keep > 0.0 { keep * p_to } else { 0.0 };
        let wn = old_w + fresh * (w + dt * rate_w);
        let qn = old_q + fresh * (q + dt * rate_q);
        let pn = old_p + fresh * (p + dt * rate_p);
        let h = (wn - base).max(0.0);
        let un = velocity(h, qn, eps);
        let vn = velocity(h, pn, eps);
        // `1 / (1 + (1 - keep) dt g n^2 |u| / h^(4/3))` with one division; the floor keeps
        // 0 / 0 out of films thin enough to underflow.
        let h43 = h.powf(4.0 / 3.0).max(1e-30);
        let h2 = h * h;
        let damp = if h2 * h2 > eps {
            h43 / (h43 + fresh * dt * g_n2 * (un * un + vn * vn).sqrt())
        } else {
            0.0
        };
        let w_new = wn.max(base);
        let q_new = qn * damp;
        let p_new = pn * damp;
        w_to = w_new;
        q_to = q_new;
        p_to = p_new;
        // Exactly what [`velocities`] gives for the new state (its depth `w_new - base`
        // is `h` to the bit), so that a state restored from its conserved fields goes on
        // bit for bit.
        u_to = velocity(h, q_new, eps);
        v_to = velocity(h, p_new, eps);
    }

    /// What a check of the state needs: the water volume per unit cell area (in `f64`),
    /// the smallest depth, the largest depth and the largest speed `|u| + |v|` (where the
    /// depth exceeds `dry`). A NaN anywhere makes the volume NaN.
    #[stencil]
    pub fn survey<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        bed: In<T>,
        volume: Sum<f64>,
        shallowest: Min<T>,
        deepest: Max<T>,
        fastest: Max<T>,
        dry: T,
    ) {
        let h = w - cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        volume.reduce(h as f64 + 0.0 * ((q + p) as f64));
        shallowest.reduce(h);
        deepest.reduce(h);
        let s = (q.abs() + p.abs()) / h;
        if h > dry {
            fastest.reduce(s);
        }
    }

    /// How far each cell is from the dry state (the surface at the bed, no discharge):
    /// zero exactly where it is dry (NaN stays NaN). A sparse run's regridding keeps the
    /// blocks where it is not zero. Also counts the wet cells (depth above zero).
    #[stencil]
    pub fn activity<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        bed: In<T>,
        away: Out<T>,
        wet_cells: Sum<f64>,
    ) {
        let h = w - cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        away = h.abs() + q.abs() + p.abs();
        if h > 0.0 {
            wet_cells.reduce(1.0);
        }
    }

    /// Records the flood's extent: the largest depth so far (`deepest`) and the time at
    /// which the depth first exceeded `wet` (`arrival`, negative until then).
    #[stencil]
    pub fn track<T: Real>(
        w: In<T>,
        bed: In<T>,
        deepest: InOut<T>,
        arrival: InOut<T>,
        time: T,
        wet: T,
    ) {
        let h = w - cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        deepest = deepest.max(h);
        arrival = if arrival < 0.0 && h > wet {
            time
        } else {
            arrival
        };
    }
}
