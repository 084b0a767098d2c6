//! Every kernel of the shallow-water solver, in the stencil language: the central-upwind
//! scheme of Kurganov & Petrova (2007), "A second-order well-balanced positivity preserving
//! central-upwind scheme for the Saint-Venant system", Commun. Math. Sci. 5(1).
//!
//! The grid is cell-centred, `nx x ny` cells of `dx x dy`. The state is the cell averages
//! of the surface elevation `w = h + B`, and the discharges `q = h u` and `p = h v`. The
//! bed `B` is continuous and bilinear in each cell, given by its values at the cell
//! corners: a corner field `bed` of the same extent as the state, `bed[(0, 0)]` being the
//! south-west corner of the cell and the last row and column of corners lying in the
//! halo. All fields have a halo of two cells; the state's halo is read only where a
//! periodic side wraps it (see [`crate::Boundary`]).
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

    /// The desingularised velocity `sqrt(2) h q / sqrt(h^4 + max(h^4, eps))` (KP07 2.17):
    /// `q / h` where `h^4 >> eps`, tending to 0 with `h`.
    #[stencil_fn]
    fn velocity<T: Real>(h: T, q: T, eps: T) -> T {
        let h2 = h * h;
        let h4 = h2 * h2;
        1.4142135623730951 * h * q / (h4 + h4.max(eps)).sqrt()
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
    /// the side's inflow discharge over the outer depth `h` on a fixed-discharge side
    /// (kind 2; `inward` is +1 on a low side and -1 on a high one), else the same.
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
    /// as `f_l + a- (f_l - f_r + a+ (u_r - u_l)) / (a+ - a-)`, which is exactly `f_l`
    /// when the two sides agree (a lake at rest stays balanced to the last bit).
    #[stencil_fn]
    fn central_upwind<T: Real>(ap: T, am: T, fl: T, fr: T, ul: T, ur: T) -> T {
        let d = ap - am;
        let flux = fl + am * (fl - fr + ap * (ur - ul)) / d;
        if d > 0.0 {
            flux
        } else {
            0.0
        }
    }

    /// The rates of change of the cell averages (KP07 3.6: minus the flux differences,
    /// plus the well-balanced bed-slope source `-g (w - B) dB/dx` of 3.12), and the
    /// largest `a / dx` over the cell's faces and axes (the CFL time step is `C` over its
    /// maximum: a reduction fused into this pass).
    ///
    /// The surface and the velocities are reconstructed, and the face discharges are the
    /// face depths times the face velocities (as Kurganov recommends in his 2018 review,
    /// Acta Numerica 27). Reconstructing the discharges instead lets a deep neighbour's
    /// discharge meet a nearly dry face: velocities of thousands of m/s at wet-dry fronts
    /// and time steps a thousand times too short (measured on Malpasset).
    #[stencil]
    pub fn rates<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        bed: In<T>,
        rate_w: Out<T>,
        rate_q: Out<T>,
        rate_p: Out<T>,
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

        // The mean bed of this cell and of the cells up to two away along each axis.
        let base = cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        let base_w = cell_bed(bed[(-1, 0)], bed, bed[(-1, 1)], bed[(0, 1)]);
        let base_ww = cell_bed(bed[(-2, 0)], bed[(-1, 0)], bed[(-2, 1)], bed[(-1, 1)]);
        let base_e = cell_bed(bed[(1, 0)], bed[(2, 0)], bed[(1, 1)], bed[(2, 1)]);
        let base_ee = cell_bed(bed[(2, 0)], bed[(3, 0)], bed[(2, 1)], bed[(3, 1)]);
        let base_s = cell_bed(bed[(0, -1)], bed[(1, -1)], bed, bed[(1, 0)]);
        let base_ss = cell_bed(bed[(0, -2)], bed[(1, -2)], bed[(0, -1)], bed[(1, -1)]);
        let base_n = cell_bed(bed[(0, 1)], bed[(1, 1)], bed[(0, 2)], bed[(1, 2)]);
        let base_nn = cell_bed(bed[(0, 2)], bed[(1, 2)], bed[(0, 3)], bed[(1, 3)]);

        // The velocities of those cells.
        let u = cell_velocity(w, base, q, eps);
        let v = cell_velocity(w, base, p, eps);
        let u_w = cell_velocity(w[(-1, 0)], base_w, q[(-1, 0)], eps);
        let v_w = cell_velocity(w[(-1, 0)], base_w, p[(-1, 0)], eps);
        let u_ww = cell_velocity(w[(-2, 0)], base_ww, q[(-2, 0)], eps);
        let v_ww = cell_velocity(w[(-2, 0)], base_ww, p[(-2, 0)], eps);
        let u_e = cell_velocity(w[(1, 0)], base_e, q[(1, 0)], eps);
        let v_e = cell_velocity(w[(1, 0)], base_e, p[(1, 0)], eps);
        let u_ee = cell_velocity(w[(2, 0)], base_ee, q[(2, 0)], eps);
        let v_ee = cell_velocity(w[(2, 0)], base_ee, p[(2, 0)], eps);
        let u_s = cell_velocity(w[(0, -1)], base_s, q[(0, -1)], eps);
        let v_s = cell_velocity(w[(0, -1)], base_s, p[(0, -1)], eps);
        let u_ss = cell_velocity(w[(0, -2)], base_ss, q[(0, -2)], eps);
        let v_ss = cell_velocity(w[(0, -2)], base_ss, p[(0, -2)], eps);
        let u_n = cell_velocity(w[(0, 1)], base_n, q[(0, 1)], eps);
        let v_n = cell_velocity(w[(0, 1)], base_n, p[(0, 1)], eps);
        let u_nn = cell_velocity(w[(0, 2)], base_nn, q[(0, 2)], eps);
        let v_nn = cell_velocity(w[(0, 2)], base_nn, p[(0, 2)], eps);

        // Along x: the bed at the faces i - 3/2 .. i + 3/2, the differences of the cells
        // i - 1, i, i + 1.
        let bx0 = 0.5 * (bed[(-1, 0)] + bed[(-1, 1)]);
        let bx1 = 0.5 * (bed + bed[(0, 1)]);
        let bx2 = 0.5 * (bed[(1, 0)] + bed[(1, 1)]);
        let bx3 = 0.5 * (bed[(2, 0)] + bed[(2, 1)]);
        let fxm = flat(i - 1, nx, west, east);
        let fxc = flat(i, nx, west, east);
        let fxp = flat(i + 1, nx, west, east);
        let swm = slope(w[(-2, 0)], w[(-1, 0)], w, theta, fxm);
        let swc = slope(w[(-1, 0)], w, w[(1, 0)], theta, fxc);
        let swp = slope(w, w[(1, 0)], w[(2, 0)], theta, fxp);
        let sum = slope(u_ww, u_w, u, theta, fxm);
        let suc = slope(u_w, u, u_e, theta, fxc);
        let sup = slope(u, u_e, u_ee, theta, fxp);
        let svm = slope(v_ww, v_w, v, theta, fxm);
        let svc = slope(v_w, v, v_e, theta, fxc);
        let svp = slope(v, v_e, v_ee, theta, fxp);

        // The west face: this cell's lower values, the west neighbour's upper ones (or the
        // west side's condition).
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
            outer_normal(west, uw_in, (ww_out - bx1).max(0.0), west_value, 1.0, eps)
        } else {
            u_w + 0.5 * sum
        };
        let vw_out = if west_edge { vw_in } else { v_w + 0.5 * svm };

        // The east face.
        let we_in = upper_surface(w, swc, base, bx1, bx2);
        let ue_in = u + 0.5 * suc;
        let ve_in = v + 0.5 * svc;
        let east_edge = i == nx - 1 && east != 4;
        let we_out = if east_edge {
            outer_surface(east, we_in, bx2, east_value)
        } else {
            lower_surface(w[(1, 0)], swp, base_e, bx2, bx3)
        };
        let ue_out = if east_edge {
            outer_normal(east, ue_in, (we_out - bx2).max(0.0), east_value, -1.0, eps)
        } else {
            u_e - 0.5 * sup
        };
        let ve_out = if east_edge { ve_in } else { v_e - 0.5 * svp };

        let west_w = face_flux(0, ww_out, uw_out, vw_out, ww_in, uw_in, vw_in, bx1, g);
        let west_q = face_flux(1, ww_out, uw_out, vw_out, ww_in, uw_in, vw_in, bx1, g);
        let west_p = face_flux(2, ww_out, uw_out, vw_out, ww_in, uw_in, vw_in, bx1, g);
        let west_a = face_flux(3, ww_out, uw_out, vw_out, ww_in, uw_in, vw_in, bx1, g);
        let east_w = face_flux(0, we_in, ue_in, ve_in, we_out, ue_out, ve_out, bx2, g);
        let east_q = face_flux(1, we_in, ue_in, ve_in, we_out, ue_out, ve_out, bx2, g);
        let east_p = face_flux(2, we_in, ue_in, ve_in, we_out, ue_out, ve_out, bx2, g);
        let east_a = face_flux(3, we_in, ue_in, ve_in, we_out, ue_out, ve_out, bx2, g);

        // Along y, the same with v normal and u tangential.
        let by0 = 0.5 * (bed[(0, -1)] + bed[(1, -1)]);
        let by1 = 0.5 * (bed + bed[(1, 0)]);
        let by2 = 0.5 * (bed[(0, 1)] + bed[(1, 1)]);
        let by3 = 0.5 * (bed[(0, 2)] + bed[(1, 2)]);
        let fym = flat(j - 1, ny, south, north);
        let fyc = flat(j, ny, south, north);
        let fyp = flat(j + 1, ny, south, north);
        let twm = slope(w[(0, -2)], w[(0, -1)], w, theta, fym);
        let twc = slope(w[(0, -1)], w, w[(0, 1)], theta, fyc);
        let twp = slope(w, w[(0, 1)], w[(0, 2)], theta, fyp);
        let tum = slope(u_ss, u_s, u, theta, fym);
        let tuc = slope(u_s, u, u_n, theta, fyc);
        let tup = slope(u, u_n, u_nn, theta, fyp);
        let tvm = slope(v_ss, v_s, v, theta, fym);
        let tvc = slope(v_s, v, v_n, theta, fyc);
        let tvp = slope(v, v_n, v_nn, theta, fyp);

        let ws_in = lower_surface(w, twc, base, by1, by2);
        let us_in = u - 0.5 * tuc;
        let vs_in = v - 0.5 * tvc;
        let south_edge = j == 0 && south != 4;
        let ws_out = if south_edge {
            outer_surface(south, ws_in, by1, south_value)
        } else {
            upper_surface(w[(0, -1)], twm, base_s, by0, by1)
        };
        let us_out = if south_edge { us_in } else { u_s + 0.5 * tum };
        let vs_out = if south_edge {
            outer_normal(south, vs_in, (ws_out - by1).max(0.0), south_value, 1.0, eps)
        } else {
            v_s + 0.5 * tvm
        };

        let wn_in = upper_surface(w, twc, base, by1, by2);
        let un_in = u + 0.5 * tuc;
        let vn_in = v + 0.5 * tvc;
        let north_edge = j == ny - 1 && north != 4;
        let wn_out = if north_edge {
            outer_surface(north, wn_in, by2, north_value)
        } else {
            lower_surface(w[(0, 1)], twp, base_n, by2, by3)
        };
        let un_out = if north_edge { un_in } else { u_n - 0.5 * tup };
        let vn_out = if north_edge {
            outer_normal(
                north,
                vn_in,
                (wn_out - by2).max(0.0),
                north_value,
                -1.0,
                eps,
            )
        } else {
            v_n - 0.5 * tvp
        };

        let south_w = face_flux(0, ws_out, vs_out, us_out, ws_in, vs_in, us_in, by1, g);
        let south_p = face_flux(1, ws_out, vs_out, us_out, ws_in, vs_in, us_in, by1, g);
        let south_q = face_flux(2, ws_out, vs_out, us_out, ws_in, vs_in, us_in, by1, g);
        let south_a = face_flux(3, ws_out, vs_out, us_out, ws_in, vs_in, us_in, by1, g);
        let north_w = face_flux(0, wn_in, vn_in, un_in, wn_out, vn_out, un_out, by2, g);
        let north_p = face_flux(1, wn_in, vn_in, un_in, wn_out, vn_out, un_out, by2, g);
        let north_q = face_flux(2, wn_in, vn_in, un_in, wn_out, vn_out, un_out, by2, g);
        let north_a = face_flux(3, wn_in, vn_in, un_in, wn_out, vn_out, un_out, by2, g);

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
        rate_w = (west_w - east_w) * dx_inv + (south_w - north_w) * dy_inv;
        rate_q = ((west_q - east_q) + (push_e - push_w)) * dx_inv
            - g * depth * (we_in - ww_in) * dx_inv
            + (south_q - north_q) * dy_inv;
        rate_p = ((south_p - north_p) + (push_n - push_s)) * dy_inv
            - g * depth * (wn_in - ws_in) * dy_inv
            + (west_p - east_p) * dx_inv;
        speed.reduce((west_a.max(east_a) * dx_inv).max(south_a.max(north_a) * dy_inv));
    }

    /// One Runge-Kutta stage: `U_to = keep U_to + (1 - keep) (U + dt R)` (`keep` 0 for a
    /// forward Euler step or the first stage of SSP-RK2, 1/2 for its second), then the
    /// surface kept on or above the bed (the depth never negative; dry cells lose their
    /// discharge) and Manning friction applied semi-implicitly:
    /// `q / (1 + (1 - keep) dt g n^2 |u| / h^(4/3))`, `g_n2 = g n^2`.
    #[stencil]
    pub fn advance<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        rate_w: In<T>,
        rate_q: In<T>,
        rate_p: In<T>,
        bed: In<T>,
        w_to: InOut<T>,
        q_to: InOut<T>,
        p_to: InOut<T>,
        dt: T,
        keep: T,
        g_n2: T,
        eps: T,
    ) {
        let fresh = 1.0 - keep;
        let old_w = if keep > 0.0 { keep * w_to } else { 0.0 };
        let old_q = if keep > 0.0 { keep * q_to } else { 0.0 };
        let old_p = if keep > 0.0 { keep * p_to } else { 0.0 };
        let wn = old_w + fresh * (w + dt * rate_w);
        let qn = old_q + fresh * (q + dt * rate_q);
        let pn = old_p + fresh * (p + dt * rate_p);
        let base = cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        let h = (wn - base).max(0.0);
        let u = velocity(h, qn, eps);
        let v = velocity(h, pn, eps);
        // The floor keeps 0 / 0 out of films thin enough to underflow.
        let drag = g_n2 * (u * u + v * v).sqrt() / h.powf(4.0 / 3.0).max(1e-30);
        let h2 = h * h;
        let damp = if h2 * h2 > eps {
            1.0 / (1.0 + fresh * dt * drag)
        } else {
            0.0
        };
        w_to = wn.max(base);
        q_to = qn * damp;
        p_to = pn * damp;
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

    /// The first level of the wet-block map: the largest depth of each 2 x 2 group of
    /// cells (on the grid half as fine; cells beyond the grid's far edges count too,
    /// which can only keep a block on).
    #[stencil]
    pub fn wet_pairs<T: Real>(w: Fine<T>, bed: Fine<T>, deepest: Out<T>) {
        let h00 = w - cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        let h10 = w[(1, 0)] - cell_bed(bed[(1, 0)], bed[(2, 0)], bed[(1, 1)], bed[(2, 1)]);
        let h01 = w[(0, 1)] - cell_bed(bed[(0, 1)], bed[(1, 1)], bed[(0, 2)], bed[(1, 2)]);
        let h11 = w[(1, 1)] - cell_bed(bed[(1, 1)], bed[(2, 1)], bed[(1, 2)], bed[(2, 2)]);
        deepest = h00.max(h10).max(h01).max(h11);
    }

    /// The next level of the wet-block map: the largest of each 2 x 2 group.
    #[stencil]
    pub fn coarser<T: Real>(fine: Fine<T>, coarse: Out<T>) {
        coarse = fine.max(fine[(1, 0)]).max(fine[(0, 1)]).max(fine[(1, 1)]);
    }

    /// Whether a side of kind `kind` can bring water into a dry domain (a fixed depth or
    /// discharge).
    #[stencil_fn]
    fn feeds(kind: i64) -> bool {
        kind == 1 || kind == 2
    }

    /// The block mask of a step from the largest depth per block (`deepest`, halo 1: zero
    /// beyond the sides, wrapped along periodic axes): a block is on if it or one of its
    /// eight neighbours holds water, if it lies on a side that feeds water in, or if it
    /// was on by that rule at the last step (`previous`, then updated). Water moves less
    /// than a block per step, so nothing outside the mask changes; keeping a block on
    /// one step longer makes sure its RK stage copy equals its state before it is skipped.
    #[stencil]
    pub fn block_mask<T: Real>(
        deepest: In<T>,
        previous: InOut<T>,
        mask: Out<T>,
        west: i64,
        east: i64,
        south: i64,
        north: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let below = deepest[(-1, -1)]
            .max(deepest[(0, -1)])
            .max(deepest[(1, -1)]);
        let level = deepest[(-1, 0)].max(deepest).max(deepest[(1, 0)]);
        let above = deepest[(-1, 1)].max(deepest[(0, 1)]).max(deepest[(1, 1)]);
        let near = below.max(level).max(above);
        let fed = (i == 0 && feeds(west))
            || (i == nx - 1 && feeds(east))
            || (j == 0 && feeds(south))
            || (j == ny - 1 && feeds(north));
        let on = if near > 0.0 || fed { 1.0 } else { 0.0 };
        mask = on.max(previous);
        previous = on;
    }
}
