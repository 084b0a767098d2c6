//! Precision changes, the penalty form, and the defect correction's residuals of 2nd, 4th and 6th order.

use stencil_runtime::prelude::*;

/// The kernels (see [`super`] for the grids, sides and operators they share).
#[stencils(helpers = [super::rows])]
pub mod kernels {
    use super::super::rows::Level;

    /// Converts an f64 field to the preconditioner's precision.
    #[stencil(dims = [2, 3])]
    pub fn narrow<T: Real>(u: In<f64>, out: Out<T>) {
        out = u as T;
    }

    /// Replaces the solution by a full-multigrid result, except at nodes fixed by a
    /// Dirichlet side (whose f64 values must not pass through the preconditioner's
    /// precision).
    #[stencil(dims = [2, 3])]
    pub fn replace<T: Real>(u: InOut<f64>, e: In<T>, lo: Axes<i64>, hi: Axes<i64>) {
        if !on_side(lo, hi, 0) {
            u = e as f64;
        }
    }

    /// The right-hand side of the penalty form: `f + kappa g / h^2` on penalty sides, `g`
    /// being the boundary value held by `u`; `f` elsewhere.
    #[stencil(dims = [2, 3])]
    pub fn penalty_rhs(u: In<f64>, f: In<f64>, rhs: Out<f64>, l: Level<f64>) {
        let penalty = if on_side(l.lo, l.hi, 2) { l.kappa } else { 0.0 };
        rhs = f + penalty * l.h2inv * u;
    }

    /// Sets a field to zero.
    #[stencil(dims = [2, 3])]
    pub fn zero<T: Real>(e: Out<T>) {
        e = 0.0;
    }

    /// The defect-correction update `u = u + e`: `u` in f64, the correction in the
    /// preconditioner's precision.
    #[stencil(dims = [2, 3])]
    pub fn correct<T: Real>(u: InOut<f64>, e: In<T>) {
        u = u + e as f64;
    }

    /// The 2nd-order residual `res = f - A u` in f64, stored in the preconditioner's
    /// precision, with its sum of squares.
    #[stencil(dims = [2, 3])]
    pub fn defect2<T: Real>(u: In<f64>, f: In<f64>, res: Out<T>, norm2: Sum<f64>, l: Level<f64>) {
        let au = diagonal(l) * u - coupling(u, l);
        let d = if fixed(l) { 0.0 } else { f - au };
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The defect-correction update and the next 2nd-order defect in one pass:
    /// `out = u + e` and `res = f - A out` (as [`defect2`]), with its sum of squares. `out`
    /// must be another field than `u`: every node reads its neighbours' `u + e`.
    #[stencil(dims = [2, 3])]
    pub fn correct_defect2<T: Real>(
        u: In<f64>,
        e: In<T>,
        f: In<f64>,
        out: Out<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        l: Level<f64>,
    ) {
        let centre = u + e as f64;
        let au = diagonal(l) * centre - corrected_coupling(u, e, l);
        let d = if fixed(l) { 0.0 } else { f - au };
        out = centre;
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The distance of a node from a side, as the one-sided stencils see it: a periodic
    /// side is never near.
    #[stencil_fn]
    fn reach(dist: i64, kind: i64) -> i64 {
        if kind == 3 {
            1000
        } else {
            dist
        }
    }

    /// `-u''` to 4th order at the node next to a boundary, one-sided: `b1` the node on
    /// the boundary's side, `c` the node, `f1..f4` the nodes inward.
    #[stencil_fn]
    fn o4_next_to_side(b1: f64, c: f64, f1: f64, f2: f64, f3: f64, f4: f64) -> f64 {
        -(10.0 * b1 - 15.0 * c - 4.0 * f1 + 14.0 * f2 - 6.0 * f3 + f4) / 12.0
    }

    /// `-u''` to 4th order along axis `a`: centred 5-point inside, one-sided 6-point next
    /// to a boundary of kind `lo` or `hi`.
    #[stencil_fn]
    fn d2_o4(u: In<f64>, a: i64, lo: i64, hi: i64) -> f64 {
        let e = unit(a);
        let (m4, m3, m2, m1) = (u[-4 * e], u[-3 * e], u[-2 * e], u[-e]);
        let (p1, p2, p3, p4) = (u[e], u[2 * e], u[3 * e], u[4 * e]);
        let c = u;
        if reach(index(a), lo) == 1 {
            o4_next_to_side(m1, c, p1, p2, p3, p4)
        } else if reach(extent(a) - 1 - index(a), hi) == 1 {
            o4_next_to_side(p1, c, m1, m2, m3, m4)
        } else {
            -(-m2 + 16.0 * m1 - 30.0 * c + 16.0 * p1 - p2) / 12.0
        }
    }

    /// `-u''` to 6th order one node from a boundary, one-sided 8-point: `b1` the node on
    /// the boundary's side, `c` the node, `f1..f6` the nodes inward.
    #[stencil_fn]
    fn o6_next_to_side(b1: f64, c: f64, f: (f64, f64, f64, f64, f64, f64)) -> f64 {
        let (f1, f2, f3, f4, f5, f6) = f;
        -(126.0 * b1 - 70.0 * c - 486.0 * f1 + 855.0 * f2 - 670.0 * f3 + 324.0 * f4 - 90.0 * f5
            + 11.0 * f6)
            / 180.0
    }

    /// `-u''` to 6th order two nodes from a boundary, one-sided 8-point: `b2`, `b1` the
    /// nodes on the boundary's side (`b2` the farther), `c` the node, `f1..f5` inward.
    #[stencil_fn]
    fn o6_two_from_side(b2: f64, b1: f64, c: f64, f: (f64, f64, f64, f64, f64)) -> f64 {
        let (f1, f2, f3, f4, f5) = f;
        -(-11.0 * b2 + 214.0 * b1 - 378.0 * c + 130.0 * f1 + 85.0 * f2 - 54.0 * f3 + 16.0 * f4
            - 2.0 * f5)
            / 180.0
    }

    /// `-u''` to 6th order along axis `a`: centred 7-point from three nodes in, one-sided
    /// 8-point at one and two nodes from a boundary.
    #[stencil_fn]
    fn d2_o6(u: In<f64>, a: i64, lo: i64, hi: i64) -> f64 {
        let e = unit(a);
        let (m6, m5, m4, m3) = (u[-6 * e], u[-5 * e], u[-4 * e], u[-3 * e]);
        let (m2, m1, c, p1, p2) = (u[-2 * e], u[-e], u, u[e], u[2 * e]);
        let (p3, p4, p5, p6) = (u[3 * e], u[4 * e], u[5 * e], u[6 * e]);
        let dist = reach(index(a), lo);
        let rdist = reach(extent(a) - 1 - index(a), hi);
        if dist == 1 {
            o6_next_to_side(m1, c, (p1, p2, p3, p4, p5, p6))
        } else if dist == 2 {
            o6_two_from_side(m2, m1, c, (p1, p2, p3, p4, p5))
        } else if rdist == 1 {
            o6_next_to_side(p1, c, (m1, m2, m3, m4, m5, m6))
        } else if rdist == 2 {
            o6_two_from_side(p2, p1, c, (m1, m2, m3, m4, m5))
        } else {
            -(2.0 * m3 - 27.0 * m2 + 270.0 * m1 - 490.0 * c + 270.0 * p1 - 27.0 * p2 + 2.0 * p3)
                / 180.0
        }
    }

    /// The residual of `-(sum c_a u_aa) = f` of order `order` (4 or 6) with Dirichlet
    /// sides imposed directly or periodic ones (`l.kappa` unused), in f64, stored in the
    /// preconditioner's precision; 0 at a node fixed by a Dirichlet side.
    #[stencil(dims = [2, 3], consts(order = [4, 6]))]
    pub fn defect<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        l: Level<f64>,
        order: i64,
    ) {
        let mut au: f64 = 0.0;
        for a in 0..ndims() {
            let d2 = if order == 4 {
                d2_o4(u, a, l.lo[a], l.hi[a])
            } else {
                d2_o6(u, a, l.lo[a], l.hi[a])
            };
            au = add_axis(a, au, l.c[a] * d2);
        }
        let d = if fixed(l) { 0.0 } else { f - au * l.h2inv };
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The sum of `u` over the distinct nodes of a periodic grid (the last node along a
    /// periodic axis, `periodic[a] == 1`, repeats the first and is left out), for
    /// zero-mean solutions.
    #[stencil(dims = [2, 3])]
    pub fn periodic_sum(u: In<f64>, total: Sum<f64>, periodic: Axes<i64>) {
        let mut repeat = false;
        for a in 0..ndims() {
            repeat = repeat || (periodic[a] == 1 && index(a) == extent(a) - 1);
        }
        total.reduce(if repeat { 0.0 } else { u });
    }

    /// `u = u - c`.
    #[stencil(dims = [2, 3])]
    pub fn shift(u: InOut<f64>, c: f64) {
        u = u - c;
    }
}
