//! Every kernel of the multigrid solvers, in the stencil language.
//!
//! Grids are vertex-centred: a level of `2^k + 1` nodes per axis stores every node,
//! boundary nodes included, as its interior, with a halo of one ghost layer that kernels
//! read only where a selection discards it (the mirrored neighbour of a Neumann node is
//! read from inside instead). Each side has a boundary kind, an `i64` chosen at run time
//! (see [`crate::Boundary`]): 0 Dirichlet imposed directly (the node is fixed), 1
//! homogeneous Neumann (mirror ghost), 2 Dirichlet by penalty (mirror ghost plus
//! `kappa / h^2 (u - g)`, with `kappa g / h^2` carried by the right-hand side), 3 periodic.
//! A kernel takes the kinds of the low and high sides of every axis as `lo` and `hi`, and
//! the operator's coefficients as `c`, one per axis.
//!
//! The operator is the anisotropic Laplacian `-(sum over axes a of c_a u_aa)` (`c_a = 1`
//! for Poisson), discretised by the 5- or 7-point stencil on the levels of the hierarchy;
//! the defect-correction residuals use 2nd, 4th or 6th-order stencils on the finest grid.
//! Kernels written once per axis serve 2D and 3D (`dims = [2, 3]`); the fused kernels of
//! the 2D Dirichlet levels come after them.

use stencil_runtime::prelude::*;

#[stencils]
pub mod mg {
    // ---- Sides, mirrors and the rows of the operator ----------------------------------

    /// The boundary kind of the side a node lies on along one axis, or -1 inside.
    #[stencil_fn]
    fn side(i: i64, n: i64, lo: i64, hi: i64) -> i64 {
        if i == 0 {
            lo
        } else if i == n - 1 {
            hi
        } else {
            -1
        }
    }

    /// Whether the node lies on a side of boundary kind `kind` along some axis.
    #[stencil_fn]
    fn on_side(lo: Axes<i64>, hi: Axes<i64>, kind: i64) -> bool {
        let mut on = false;
        for a in 0..ndims() {
            on = on || side(index(a), extent(a), lo[a], hi[a]) == kind;
        }
        on
    }

    /// The values `below` and `above` the node along axis `a`, each replaced by the other's
    /// mirror image at a mirrored end: an end of the axis on a side that is not periodic
    /// (at a fixed node the values are never used).
    #[stencil_fn]
    fn mirrored<T: Real>(a: i64, lo: Axes<i64>, hi: Axes<i64>, below: T, above: T) -> (T, T) {
        let (low_end, high_end) = (index(a) == 0, index(a) == extent(a) - 1);
        let b = if low_end && lo[a] != 3 { above } else { below };
        let t = if high_end && hi[a] != 3 { below } else { above };
        (b, t)
    }

    /// The first term of a sum over axes, or the sum so far plus the next: sums over axes
    /// start from their first term, as written out by hand, never from `0.0`.
    #[stencil_fn]
    fn add_axis<T: Real>(a: i64, sum: T, term: T) -> T {
        if a == 0 {
            term
        } else {
            sum + term
        }
    }

    /// The diagonal of the node's row, `(2 sum c_a + kappa on a penalty side) / h^2`.
    #[stencil_fn]
    fn diagonal<T: Real>(c: Axes<T>, h2inv: T, kappa: T, lo: Axes<i64>, hi: Axes<i64>) -> T {
        let mut sum: T = 0.0;
        for a in 0..ndims() {
            sum = add_axis(a, sum, c[a]);
        }
        let penalty = if on_side(lo, hi, 2) { kappa } else { 0.0 };
        (2.0 * sum + penalty) * h2inv
    }

    /// The node's coupling to its neighbours, `sum c_a (e below + e above) / h^2`, the
    /// mirror image taken beyond a Neumann or penalty side.
    #[stencil_fn]
    fn coupling<T: Real>(e: In<T>, c: Axes<T>, h2inv: T, lo: Axes<i64>, hi: Axes<i64>) -> T {
        let mut sum: T = 0.0;
        for a in 0..ndims() {
            let (below, above) = mirrored(a, lo, hi, e[-unit(a)], e[unit(a)]);
            sum = add_axis(a, sum, c[a] * (below + above));
        }
        sum * h2inv
    }

    /// [`coupling`] of `u + e` (in f64), for the defect after a correction.
    #[stencil_fn]
    fn corrected_coupling<T: Real>(
        u: In<f64>,
        e: In<T>,
        c: Axes<f64>,
        h2inv: f64,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) -> f64 {
        let mut sum: f64 = 0.0;
        for a in 0..ndims() {
            let below = u[-unit(a)] + e[-unit(a)] as f64;
            let above = u[unit(a)] + e[unit(a)] as f64;
            let (below, above) = mirrored(a, lo, hi, below, above);
            sum = add_axis(a, sum, c[a] * (below + above));
        }
        sum * h2inv
    }

    // ---- Smoothers and residuals, 2D and 3D -------------------------------------------

    /// Weighted Jacobi (and, with a schedule of `omega`, scheduled relaxation Jacobi):
    /// `out = e + omega (r - A e) / diag(A)`; fixed nodes keep their value.
    #[stencil(dims = [2, 3])]
    pub fn jacobi<T: Real>(
        e: In<T>,
        r: In<T>,
        out: Out<T>,
        c: Axes<T>,
        h2inv: T,
        kappa: T,
        lo: Axes<i64>,
        hi: Axes<i64>,
        omega: T,
    ) {
        let diag = diagonal(c, h2inv, kappa, lo, hi);
        let ae = diag * e - coupling(e, c, h2inv, lo, hi);
        out = if on_side(lo, hi, 0) {
            e
        } else {
            e + omega * (r - ae) / diag
        };
    }

    /// Red-black Gauss-Seidel: the points of one colour solve their row exactly (times the
    /// reciprocal of the diagonal, which every red-black kernel computes alike).
    #[stencil(dims = [2, 3], red_black = colour)]
    pub fn rbgs<T: Real>(
        e: InOut<T>,
        r: In<T>,
        c: Axes<T>,
        h2inv: T,
        kappa: T,
        lo: Axes<i64>,
        hi: Axes<i64>,
        colour: i64,
    ) {
        if !on_side(lo, hi, 0) {
            let inv = 1.0 / diagonal(c, h2inv, kappa, lo, hi);
            e = (r + coupling(e, c, h2inv, lo, hi)) * inv;
        }
    }

    /// The residual `res = r - A e` of the level operator; 0 at fixed nodes.
    #[stencil(dims = [2, 3])]
    pub fn residual<T: Real>(
        e: In<T>,
        r: In<T>,
        res: Out<T>,
        c: Axes<T>,
        h2inv: T,
        kappa: T,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) {
        let ae = diagonal(c, h2inv, kappa, lo, hi) * e - coupling(e, c, h2inv, lo, hi);
        res = if on_side(lo, hi, 0) { 0.0 } else { r - ae };
    }

    /// Row `i` of the tridiagonal system of a zebra line along `axis` (2D): lower,
    /// diagonal, upper coefficient and right-hand side, the other axis's neighbours moved
    /// to the right-hand side; mirror ghosts at Neumann and penalty ends double the inward
    /// coupling; a fixed node's row is the identity.
    #[stencil_fn]
    fn line_row<T: Real>(
        e: In<T>,
        r: In<T>,
        axis: i64,
        c: Axes<T>,
        h2inv: T,
        kappa: T,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) -> (T, T, T, T) {
        let (i, n, other) = (index(axis), extent(axis), 1 - axis);
        let (below, above) = mirrored(other, lo, hi, e[-unit(other)], e[unit(other)]);
        let diag = diagonal(c, h2inv, kappa, lo, hi);
        let inside = -c[axis] * h2inv;
        let inward = -2.0 * c[axis] * h2inv;
        let lower = if i == n - 1 { inward } else { inside };
        let upper = if i == 0 { inward } else { inside };
        let lower = if i == 0 { 0.0 } else { lower };
        let upper = if i == n - 1 { 0.0 } else { upper };
        let rhs = r + c[other] * (below + above) * h2inv;
        if on_side(lo, hi, 0) {
            (0.0, 1.0, 0.0, e)
        } else {
            (lower, diag, upper, rhs)
        }
    }

    /// Zebra line Gauss-Seidel along x: the lines (rows) of one colour solve their
    /// tridiagonal systems exactly, for problems strongly coupled along x.
    #[stencil(dims = 2, line = 0, red_black = colour)]
    pub fn zebra_x<T: Real>(
        e: InOut<T>,
        r: In<T>,
        c: Axes<T>,
        h2inv: T,
        kappa: T,
        lo: Axes<i64>,
        hi: Axes<i64>,
        colour: i64,
    ) {
        let (lower, diag, upper, rhs) = line_row(e, r, 0, c, h2inv, kappa, lo, hi);
        if side(index(1), extent(1), lo[1], hi[1]) != 0 {
            e = tridiagonal(lower, diag, upper, rhs);
        }
    }

    /// Zebra line Gauss-Seidel along y, for problems strongly coupled along y.
    #[stencil(dims = 2, line = 1, red_black = colour)]
    pub fn zebra_y<T: Real>(
        e: InOut<T>,
        r: In<T>,
        c: Axes<T>,
        h2inv: T,
        kappa: T,
        lo: Axes<i64>,
        hi: Axes<i64>,
        colour: i64,
    ) {
        let (lower, diag, upper, rhs) = line_row(e, r, 1, c, h2inv, kappa, lo, hi);
        if side(index(0), extent(0), lo[0], hi[0]) != 0 {
            e = tridiagonal(lower, diag, upper, rhs);
        }
    }

    // ---- Grid transfers -----------------------------------------------------------------

    /// Full weighting along one axis, `[1/4, 1/2, 1/4]` of the values below, at and above
    /// the node; at a mirrored end the two outer values coincide.
    #[stencil_fn]
    fn weigh<T: Real>(i: i64, n: i64, lo: i64, hi: i64, below: T, centre: T, above: T) -> T {
        if i == 0 && lo != 3 {
            0.5 * centre + 0.5 * above
        } else if i == n - 1 && hi != 3 {
            0.5 * below + 0.5 * centre
        } else {
            0.25 * below + 0.5 * centre + 0.25 * above
        }
    }

    /// [`weigh`] along axis `a` of `fine` at `d - e_a`, `d` and `d + e_a`.
    #[stencil_fn]
    fn weigh_at<T: Real>(fine: In<T>, a: i64, d: Axes<i64>, lo: Axes<i64>, hi: Axes<i64>) -> T {
        let (below, above) = (fine[d - unit(a)], fine[d + unit(a)]);
        weigh(index(a), extent(a), lo[a], hi[a], below, fine[d], above)
    }

    /// Full weighting across x and y of the fine plane `z` (3D).
    #[stencil_fn]
    fn weigh_plane<T: Real>(fine: In<T>, z: i64, lo: Axes<i64>, hi: Axes<i64>) -> T {
        let below = weigh_at(fine, 0, (0, -1, z), lo, hi);
        let centre = weigh_at(fine, 0, (0, 0, z), lo, hi);
        let above = weigh_at(fine, 0, (0, 1, z), lo, hi);
        weigh(index(1), extent(1), lo[1], hi[1], below, centre, above)
    }

    /// Full-weighting restriction (vertex-centred): the coarse node at `2I` of the fine
    /// grid takes 1/4 of it, 1/8 of each edge neighbour and 1/16 of each corner neighbour
    /// (the tensor product of `[1/4, 1/2, 1/4]`, along x first), neighbours beyond a
    /// Neumann or penalty side mirrored, beyond a periodic one read from the wrapped halo.
    #[stencil(dims = 2)]
    pub fn restrict_full<T: Real>(fine: Fine<T>, coarse: Out<T>, lo: Axes<i64>, hi: Axes<i64>) {
        let below = weigh_at(fine, 0, (0, -1), lo, hi);
        let centre = weigh_at(fine, 0, (0, 0), lo, hi);
        let above = weigh_at(fine, 0, (0, 1), lo, hi);
        coarse = weigh(index(1), extent(1), lo[1], hi[1], below, centre, above);
    }

    /// Full-weighting restriction in 3D: the tensor product of `[1/4, 1/2, 1/4]` over the
    /// 27 fine nodes around the coarse node (x, then y, then z).
    #[stencil(dims = 3)]
    pub fn restrict_full_3d<T: Real>(fine: Fine<T>, coarse: Out<T>, lo: Axes<i64>, hi: Axes<i64>) {
        let (below, centre) = (weigh_plane(fine, -1, lo, hi), weigh_plane(fine, 0, lo, hi));
        let above = weigh_plane(fine, 1, lo, hi);
        coarse = weigh(index(2), extent(2), lo[2], hi[2], below, centre, above);
    }

    /// Injection (vertex-centred): the coarse node takes the fine node it coincides with.
    #[stencil(dims = [2, 3])]
    pub fn restrict_inject<T: Real>(fine: Fine<T>, coarse: Out<T>) {
        coarse = fine;
    }

    /// The weight of the coarse node above along axis `a` in the linear interpolation at a
    /// fine node: 1/2 at an odd index (halfway between two), else 0.
    #[stencil_fn]
    fn odd_weight<T: Real>(a: i64) -> T {
        if index(a) % 2 == 1 {
            0.5
        } else {
            0.0
        }
    }

    /// A fine value plus the bilinear interpolation, with weights `wx` and `wy` (0 or
    /// 1/2), of the four coarse values around it (south-west, south-east, north-west,
    /// north-east).
    #[stencil_fn]
    fn corrected<T: Real>(e: T, c00: T, c10: T, c01: T, c11: T, wx: T, wy: T) -> T {
        let low = c00 + wx * (c10 - c00);
        let high = c01 + wx * (c11 - c01);
        e + low + wy * (high - low)
    }

    /// Bilinear prolongation (vertex-centred) added to the fine correction: a fine node at
    /// an even index coincides with a coarse node, an odd one lies halfway between two.
    /// Nodes fixed by a Dirichlet side keep their value.
    #[stencil]
    pub fn prolong_add<T: Real>(e: InOut<T>, coarse: Coarse<T>, lo: Axes<i64>, hi: Axes<i64>) {
        if !on_side(lo, hi, 0) {
            let x_odd = index(0) % 2 == 1;
            let low = if x_odd {
                coarse + 0.5 * (coarse[(1, 0)] - coarse)
            } else {
                coarse
            };
            e = if index(1) % 2 == 1 {
                let (c01, c11) = (coarse[(0, 1)], coarse[(1, 1)]);
                let high = if x_odd { c01 + 0.5 * (c11 - c01) } else { c01 };
                e + low + 0.5 * (high - low)
            } else {
                e + low
            };
        }
    }

    /// The coarse correction interpolated along x on the coarse line at `(y, z)` from the
    /// node's base.
    #[stencil_fn]
    fn along_x<T: Real>(coarse: In<T>, y: i64, z: i64) -> T {
        coarse[(0, y, z)] + odd_weight(0) * (coarse[(1, y, z)] - coarse[(0, y, z)])
    }

    /// Trilinear prolongation (vertex-centred) added to the fine correction: [`corrected`]
    /// across y and z of the four lines interpolated along x.
    #[stencil]
    pub fn prolong_add_3d<T: Real>(e: InOut<T>, coarse: Coarse<T>, lo: Axes<i64>, hi: Axes<i64>) {
        let (c00, c10) = (along_x(coarse, 0, 0), along_x(coarse, 1, 0));
        let (c01, c11) = (along_x(coarse, 0, 1), along_x(coarse, 1, 1));
        if !on_side(lo, hi, 0) {
            e = corrected(e, c00, c10, c01, c11, odd_weight(1), odd_weight(2));
        }
    }

    // ---- Precision changes, the penalty form and defect correction ----------------------

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
    pub fn penalty_rhs(
        u: In<f64>,
        f: In<f64>,
        rhs: Out<f64>,
        h2inv: f64,
        kappa: f64,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) {
        let penalty = if on_side(lo, hi, 2) { kappa } else { 0.0 };
        rhs = f + penalty * h2inv * u;
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
    pub fn defect2<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        c: Axes<f64>,
        h2inv: f64,
        kappa: f64,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) {
        let au = diagonal(c, h2inv, kappa, lo, hi) * u - coupling(u, c, h2inv, lo, hi);
        let d = if on_side(lo, hi, 0) { 0.0 } else { f - au };
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
        c: Axes<f64>,
        h2inv: f64,
        kappa: f64,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) {
        let centre = u + e as f64;
        let diag = diagonal(c, h2inv, kappa, lo, hi);
        let au = diag * centre - corrected_coupling(u, e, c, h2inv, lo, hi);
        let d = if on_side(lo, hi, 0) { 0.0 } else { f - au };
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

    /// `-u''` to 4th order along axis `a`: centred 5-point inside, one-sided 6-point next
    /// to a boundary of kind `lo` or `hi`.
    #[stencil_fn]
    fn d2_o4(u: In<f64>, a: i64, lo: i64, hi: i64) -> f64 {
        let e = unit(a);
        let (m4, m3, m2, m1) = (u[-4 * e], u[-3 * e], u[-2 * e], u[-e]);
        let (p1, p2, p3, p4) = (u[e], u[2 * e], u[3 * e], u[4 * e]);
        let c = u;
        if reach(index(a), lo) == 1 {
            -(10.0 * m1 - 15.0 * c - 4.0 * p1 + 14.0 * p2 - 6.0 * p3 + p4) / 12.0
        } else if reach(extent(a) - 1 - index(a), hi) == 1 {
            -(10.0 * p1 - 15.0 * c - 4.0 * m1 + 14.0 * m2 - 6.0 * m3 + m4) / 12.0
        } else {
            -(-m2 + 16.0 * m1 - 30.0 * c + 16.0 * p1 - p2) / 12.0
        }
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
            -(126.0 * m1 - 70.0 * c - 486.0 * p1 + 855.0 * p2 - 670.0 * p3 + 324.0 * p4 - 90.0 * p5
                + 11.0 * p6)
                / 180.0
        } else if dist == 2 {
            -(-11.0 * m2 + 214.0 * m1 - 378.0 * c + 130.0 * p1 + 85.0 * p2 - 54.0 * p3 + 16.0 * p4
                - 2.0 * p5)
                / 180.0
        } else if rdist == 1 {
            -(126.0 * p1 - 70.0 * c - 486.0 * m1 + 855.0 * m2 - 670.0 * m3 + 324.0 * m4 - 90.0 * m5
                + 11.0 * m6)
                / 180.0
        } else if rdist == 2 {
            -(-11.0 * p2 + 214.0 * p1 - 378.0 * c + 130.0 * m1 + 85.0 * m2 - 54.0 * m3 + 16.0 * m4
                - 2.0 * m5)
                / 180.0
        } else {
            -(2.0 * m3 - 27.0 * m2 + 270.0 * m1 - 490.0 * c + 270.0 * p1 - 27.0 * p2 + 2.0 * p3)
                / 180.0
        }
    }

    /// The 4th-order residual of `-(sum c_a u_aa) = f` with Dirichlet sides imposed
    /// directly or periodic ones, in f64, stored in the preconditioner's precision.
    #[stencil(dims = [2, 3])]
    pub fn defect4<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        c: Axes<f64>,
        h2inv: f64,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) {
        let mut au: f64 = 0.0;
        for a in 0..ndims() {
            au = add_axis(a, au, c[a] * d2_o4(u, a, lo[a], hi[a]));
        }
        let d = if on_side(lo, hi, 0) {
            0.0
        } else {
            f - au * h2inv
        };
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The 6th-order residual, as [`defect4`] (2D).
    #[stencil(dims = 2)]
    pub fn defect6<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        c: Axes<f64>,
        h2inv: f64,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) {
        let mut au: f64 = 0.0;
        for a in 0..ndims() {
            au = add_axis(a, au, c[a] * d2_o6(u, a, lo[a], hi[a]));
        }
        let d = if on_side(lo, hi, 0) {
            0.0
        } else {
            f - au * h2inv
        };
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

    // ---- Fused kernels of 2D levels with four Dirichlet sides imposed directly ----------
    //
    // Each equals a sequence of the launches above bit for bit (`tests/gpu_kernels.rs`).
    // Offsets `d` are from the kernel's point; a node's colour is the parity of its
    // index sum.

    /// Whether node `(i, j)` of the kernel's grid is on its boundary.
    #[stencil_fn]
    fn on_edge(i: i64, j: i64) -> bool {
        i == 0 || j == 0 || i == extent(0) - 1 || j == extent(1) - 1
    }

    /// The colour of the node at offset `d`.
    #[stencil_fn]
    fn colour_at(d: (i64, i64)) -> i64 {
        (index(0) + d[0] + index(1) + d[1]) % 2
    }

    /// The diagonal of an interior row on a Dirichlet level, as [`diagonal`] computes it.
    #[stencil_fn]
    fn dirichlet_diagonal<T: Real>(c: Axes<T>, h2inv: T) -> T {
        (2.0 * (c[0] + c[1]) + 0.0) * h2inv
    }

    /// The residual `r - A e` at an interior node from the values of `e` at and around it.
    #[stencil_fn]
    fn node_residual<T: Real>(r: T, e: T, w: T, east: T, s: T, n: T, c: Axes<T>, h2inv: T) -> T {
        let diag = dirichlet_diagonal(c, h2inv);
        r - (diag * e - (c[0] * (w + east) + c[1] * (s + n)) * h2inv)
    }

    /// The red-black update of the node at offset `d` from its value `e`, its neighbours'
    /// (`w`, `east`, `s`, `n`) and its right-hand side: the row solved exactly, as
    /// [`rbgs`] computes it, or `e` on the boundary.
    #[stencil_fn]
    fn dirichlet_update<T: Real>(
        d: (i64, i64),
        e: T,
        w: T,
        east: T,
        s: T,
        n: T,
        r: T,
        c: Axes<T>,
        h2inv: T,
    ) -> T {
        let inv = 1.0 / dirichlet_diagonal(c, h2inv);
        if on_edge(index(0) + d[0], index(1) + d[1]) {
            e
        } else {
            (r + (c[0] * (w + east) + c[1] * (s + n)) * h2inv) * inv
        }
    }

    /// [`dirichlet_update`] of the node at offset `d` with its neighbours' values in `e`.
    #[stencil_fn]
    fn updated_at<T: Real>(e: In<T>, r: In<T>, d: (i64, i64), c: Axes<T>, h2inv: T) -> T {
        let (w, east) = (e[d - unit(0)], e[d + unit(0)]);
        let (s, n) = (e[d - unit(1)], e[d + unit(1)]);
        dirichlet_update(d, e[d], w, east, s, n, r[d], c, h2inv)
    }

    /// The correction at node `(fi, fj)` of an `nf x mf` level after one red-black sweep
    /// from zero, from the right-hand side `r` read at offset `d` and its four neighbours:
    /// `r / diag(A)` at points of colour 0, at points of colour 1 the row solved with
    /// those neighbours, 0 on the boundary.
    #[stencil_fn]
    fn swept<T: Real>(
        r: In<T>,
        d: (i64, i64),
        fi: i64,
        fj: i64,
        nf: i64,
        mf: i64,
        c: Axes<T>,
        h2inv: T,
    ) -> T {
        let inv = 1.0 / dirichlet_diagonal(c, h2inv);
        let west = if fi == 1 { 0.0 } else { r[d - unit(0)] * inv };
        let east = if fi == nf - 2 {
            0.0
        } else {
            r[d + unit(0)] * inv
        };
        let south = if fj == 1 { 0.0 } else { r[d - unit(1)] * inv };
        let north = if fj == mf - 2 {
            0.0
        } else {
            r[d + unit(1)] * inv
        };
        let boundary = fi == 0 || fj == 0 || fi == nf - 1 || fj == mf - 1;
        if boundary {
            0.0
        } else if (fi + fj) % 2 == 0 {
            r[d] * inv
        } else {
            (r[d] + (c[0] * (west + east) + c[1] * (south + north)) * h2inv) * inv
        }
    }

    /// [`swept`] at offset `d` from the kernel's point, on the kernel's grid.
    #[stencil_fn]
    fn swept_at<T: Real>(r: In<T>, d: (i64, i64), c: Axes<T>, h2inv: T) -> T {
        let (i, j) = (index(0) + d[0], index(1) + d[1]);
        swept(r, d, i, j, extent(0), extent(1), c, h2inv)
    }

    /// The zero correction followed by the first (colour 0) red-black half-sweep, in one
    /// pass: from `e = 0` the points of colour 0 solve their rows with zero neighbours,
    /// `e = r / diag(A)`; every other point is set to 0 (any sides).
    #[stencil(dims = 2)]
    pub fn rbgs_from_zero<T: Real>(
        r: In<T>,
        e: Out<T>,
        c: Axes<T>,
        h2inv: T,
        kappa: T,
        lo: Axes<i64>,
        hi: Axes<i64>,
    ) {
        let first = (index(0) + index(1)) % 2 == 0;
        let inv = 1.0 / diagonal(c, h2inv, kappa, lo, hi);
        e = if first && !on_side(lo, hi, 0) {
            r * inv
        } else {
            0.0
        };
    }

    /// A whole red-black sweep (the colour-0 half-sweep, then the colour-1 one) in one
    /// out-of-place pass: `out` equals `e` after the two launches of [`rbgs`]. A colour-1
    /// node recomputes its four colour-0 neighbours' new values, so `e` is read two nodes
    /// out.
    #[stencil]
    pub fn rbgs_sweep<T: Real>(e: In<T>, r: In<T>, out: Out<T>, c: Axes<T>, h2inv: T) {
        out = if colour_at((0, 0)) == 0 {
            updated_at(e, r, (0, 0), c, h2inv)
        } else {
            let (w, east) = (
                updated_at(e, r, (-1, 0), c, h2inv),
                updated_at(e, r, (1, 0), c, h2inv),
            );
            let (s, n) = (
                updated_at(e, r, (0, -1), c, h2inv),
                updated_at(e, r, (0, 1), c, h2inv),
            );
            dirichlet_update((0, 0), e, w, east, s, n, r, c, h2inv)
        };
    }

    /// A whole red-black sweep from a zero correction in one pass ([`swept`]): the values
    /// of [`rbgs_from_zero`] and the colour-1 half-sweep.
    #[stencil]
    pub fn rbgs_sweep_from_zero<T: Real>(r: In<T>, e: Out<T>, c: Axes<T>, h2inv: T) {
        e = swept_at(r, (0, 0), c, h2inv);
    }

    /// The correction at offset `d` after one red-black sweep from zero and the colour-0
    /// half of a second: colour-0 nodes solve their rows with their neighbours'
    /// [`swept_at`] values, the others keep theirs.
    #[stencil_fn]
    fn swept_then_red<T: Real>(r: In<T>, d: (i64, i64), c: Axes<T>, h2inv: T) -> T {
        let here = swept_at(r, d, c, h2inv);
        if colour_at(d) == 0 {
            let w = swept_at(r, d - unit(0), c, h2inv);
            let east = swept_at(r, d + unit(0), c, h2inv);
            let s = swept_at(r, d - unit(1), c, h2inv);
            let n = swept_at(r, d + unit(1), c, h2inv);
            dirichlet_update(d, here, w, east, s, n, r[d], c, h2inv)
        } else {
            here
        }
    }

    /// Two whole red-black sweeps from a zero correction in one pass: the colour-1 half of
    /// the second sweep on [`swept_then_red`], the values of [`rbgs_sweep_from_zero`]
    /// followed by [`rbgs_sweep`]; the right-hand side is read three nodes out (halo 3).
    #[stencil]
    pub fn rbgs_two_sweeps_from_zero<T: Real>(r: In<T>, e: Out<T>, c: Axes<T>, h2inv: T) {
        let here = swept_then_red(r, (0, 0), c, h2inv);
        e = if colour_at((0, 0)) == 0 {
            here
        } else {
            let w = swept_then_red(r, (-1, 0), c, h2inv);
            let east = swept_then_red(r, (1, 0), c, h2inv);
            let s = swept_then_red(r, (0, -1), c, h2inv);
            let n = swept_then_red(r, (0, 1), c, h2inv);
            dirichlet_update((0, 0), here, w, east, s, n, r, c, h2inv)
        };
    }

    /// The correction `e` at offset `d` after a red-black half-sweep of colour `colour`:
    /// nodes of that colour solve their rows with their neighbours' values in `e`, the
    /// others keep theirs.
    #[stencil_fn]
    fn half_swept_at<T: Real>(
        e: In<T>,
        r: In<T>,
        colour: i64,
        d: (i64, i64),
        c: Axes<T>,
        h2inv: T,
    ) -> T {
        if colour_at(d) == colour {
            updated_at(e, r, d, c, h2inv)
        } else {
            e[d]
        }
    }

    /// [`half_swept_at`] of colour 1 followed by the colour-0 half-sweep, at offset `d`.
    #[stencil_fn]
    fn black_then_red_at<T: Real>(e: In<T>, r: In<T>, d: (i64, i64), c: Axes<T>, h2inv: T) -> T {
        let here = half_swept_at(e, r, 1, d, c, h2inv);
        if colour_at(d) == 0 {
            let w = half_swept_at(e, r, 1, d - unit(0), c, h2inv);
            let east = half_swept_at(e, r, 1, d + unit(0), c, h2inv);
            let s = half_swept_at(e, r, 1, d - unit(1), c, h2inv);
            let n = half_swept_at(e, r, 1, d + unit(1), c, h2inv);
            dirichlet_update(d, here, w, east, s, n, r[d], c, h2inv)
        } else {
            here
        }
    }

    /// The colour-1 half-sweep, then a whole red-black sweep (colour 0, colour 1), in one
    /// out-of-place pass: what follows [`prolong_rbgs`] in a V(., 2) cycle. `out` equals
    /// `e` after the three half-sweep launches of [`rbgs`]; `e` is read three nodes out
    /// (halo 3).
    #[stencil]
    pub fn rbgs_sweep_and_a_half<T: Real>(e: In<T>, r: In<T>, out: Out<T>, c: Axes<T>, h2inv: T) {
        let here = black_then_red_at(e, r, (0, 0), c, h2inv);
        out = if colour_at((0, 0)) == 0 {
            here
        } else {
            let w = black_then_red_at(e, r, (-1, 0), c, h2inv);
            let east = black_then_red_at(e, r, (1, 0), c, h2inv);
            let s = black_then_red_at(e, r, (0, -1), c, h2inv);
            let n = black_then_red_at(e, r, (0, 1), c, h2inv);
            dirichlet_update((0, 0), here, w, east, s, n, r, c, h2inv)
        };
    }

    /// One step of full weighting `[1/4, 1/2, 1/4]` summed from below as [`weigh`] does:
    /// the partial sum after adding `value` at offset `k` (-1, 0 or 1).
    #[stencil_fn]
    fn weigh_next<T: Real>(k: i64, sum: T, value: T) -> T {
        if k == -1 {
            0.25 * value
        } else if k == 0 {
            sum + 0.5 * value
        } else {
            sum + 0.25 * value
        }
    }

    /// The residual at the fine node at offset `d` (from the fine fields `e` and `r`).
    #[stencil_fn]
    fn residual_at<T: Real>(e: In<T>, r: In<T>, d: (i64, i64), c: Axes<T>, h2inv: T) -> T {
        let (w, east) = (e[d - unit(0)], e[d + unit(0)]);
        let (s, n) = (e[d - unit(1)], e[d + unit(1)]);
        node_residual(r[d], e[d], w, east, s, n, c, h2inv)
    }

    /// The residual at the fine node at offset `d` of the correction one sweep from zero
    /// gives, from the fine right-hand side `r` alone ([`swept`] at it and its neighbours).
    #[stencil_fn]
    fn swept_residual_at<T: Real>(r: In<T>, d: (i64, i64), c: Axes<T>, h2inv: T) -> T {
        let (x, y) = (2 * index(0) + d[0], 2 * index(1) + d[1]);
        let (nf, mf) = (2 * extent(0) - 1, 2 * extent(1) - 1);
        let centre = swept(r, d, x, y, nf, mf, c, h2inv);
        let w = swept(r, d - unit(0), x - 1, y, nf, mf, c, h2inv);
        let east = swept(r, d + unit(0), x + 1, y, nf, mf, c, h2inv);
        let s = swept(r, d - unit(1), x, y - 1, nf, mf, c, h2inv);
        let n = swept(r, d + unit(1), x, y + 1, nf, mf, c, h2inv);
        node_residual(r[d], centre, w, east, s, n, c, h2inv)
    }

    /// [`residual`] and [`restrict_full`] in one pass: each interior coarse node computes
    /// the residuals of the nine fine nodes it weighs (all interior fine nodes), the fine
    /// residual is never stored. Boundary coarse nodes get 0 (their right-hand side is
    /// never read). The fine fields need a halo of 2 (read, then discarded, at the
    /// boundary nodes).
    #[stencil]
    pub fn restrict_residual<T: Real>(
        e: Fine<T>,
        r: Fine<T>,
        coarse: Out<T>,
        c: Axes<T>,
        h2inv: T,
    ) {
        let mut rows: T = 0.0;
        for b in -1..=1 {
            let mut row: T = 0.0;
            for a in -1..=1 {
                row = weigh_next(a, row, residual_at(e, r, (a, b), c, h2inv));
            }
            rows = weigh_next(b, rows, row);
        }
        coarse = if on_edge(index(0), index(1)) {
            0.0
        } else {
            rows
        };
    }

    /// [`restrict_residual`] of the correction that one red-black sweep from zero gives
    /// ([`swept`]), computed from the right-hand side alone: the level's V(1, .) cycle
    /// needs neither its first sweep nor its residual stored. The fine right-hand side
    /// needs a halo of 3.
    #[stencil]
    pub fn restrict_swept_residual<T: Real>(r: Fine<T>, coarse: Out<T>, c: Axes<T>, h2inv: T) {
        let mut rows: T = 0.0;
        for b in -1..=1 {
            let mut row: T = 0.0;
            for a in -1..=1 {
                row = weigh_next(a, row, swept_residual_at(r, (a, b), c, h2inv));
            }
            rows = weigh_next(b, rows, row);
        }
        coarse = if on_edge(index(0), index(1)) {
            0.0
        } else {
            rows
        };
    }

    /// The prolongation added to a correction followed by the colour-0 half-sweep, at the
    /// kernel's fine node, from the correction at the node and its four neighbours and the
    /// coarse correction: points of colour 1 take `e + P coarse`, points of colour 0 solve
    /// their rows with their neighbours so corrected, boundary points keep `e`.
    #[stencil_fn]
    fn prolonged_sweep<T: Real>(
        e: T,
        ew: T,
        ee: T,
        es: T,
        en: T,
        coarse: In<T>,
        r: T,
        c: Axes<T>,
        h2inv: T,
    ) -> T {
        let (i, j) = (index(0), index(1));
        let (oi, oj) = (i % 2 == 1, j % 2 == 1);
        let (wx, wy) = (odd_weight(0), odd_weight(1));
        let (c00, c10, c01, c11) = (coarse, coarse[(1, 0)], coarse[(0, 1)], coarse[(1, 1)]);
        let here = corrected(e, c00, c10, c01, c11, wx, wy);
        // The neighbours' corrections: a neighbour across an odd index has the next coarse
        // node as its base (and weight 0), across an even one the same base (weight 1/2).
        let east = if oi {
            corrected(ee, c10, coarse[(2, 0)], c11, coarse[(2, 1)], 0.0, wy)
        } else {
            corrected(ee, c00, c10, c01, c11, 0.5, wy)
        };
        let west = if oi {
            corrected(ew, c00, c10, c01, c11, 0.0, wy)
        } else {
            corrected(ew, coarse[(-1, 0)], c00, coarse[(-1, 1)], c01, 0.5, wy)
        };
        let north = if oj {
            corrected(en, c01, c11, coarse[(0, 2)], coarse[(1, 2)], wx, 0.0)
        } else {
            corrected(en, c00, c10, c01, c11, wx, 0.5)
        };
        let south = if oj {
            corrected(es, c00, c10, c01, c11, wx, 0.0)
        } else {
            corrected(es, coarse[(0, -1)], coarse[(1, -1)], c00, c10, wx, 0.5)
        };
        // A neighbour on the boundary is fixed: it keeps its value.
        let west = if i == 1 { ew } else { west };
        let east = if i == extent(0) - 2 { ee } else { east };
        let south = if j == 1 { es } else { south };
        let north = if j == extent(1) - 2 { en } else { north };
        if (i + j) % 2 == 0 {
            dirichlet_update((0, 0), e, west, east, south, north, r, c, h2inv)
        } else if on_edge(i, j) {
            e
        } else {
            here
        }
    }

    /// [`prolong_add`] followed by the first (colour 0) red-black half-sweep, in one
    /// out-of-place pass ([`prolonged_sweep`]; `out` becomes the level's correction).
    #[stencil]
    pub fn prolong_rbgs<T: Real>(
        e: In<T>,
        coarse: Coarse<T>,
        r: In<T>,
        out: Out<T>,
        c: Axes<T>,
        h2inv: T,
    ) {
        let (w, east, s, n) = (e[(-1, 0)], e[(1, 0)], e[(0, -1)], e[(0, 1)]);
        out = prolonged_sweep(e, w, east, s, n, coarse, r, c, h2inv);
    }

    /// [`prolong_rbgs`] on a level whose correction is one red-black sweep from zero
    /// ([`swept`]), recomputed from the right-hand side instead of read (the companion of
    /// [`restrict_swept_residual`]).
    #[stencil]
    pub fn prolong_swept_rbgs<T: Real>(
        r: In<T>,
        coarse: Coarse<T>,
        out: Out<T>,
        c: Axes<T>,
        h2inv: T,
    ) {
        let e = swept_at(r, (0, 0), c, h2inv);
        let (w, east) = (
            swept_at(r, (-1, 0), c, h2inv),
            swept_at(r, (1, 0), c, h2inv),
        );
        let (s, n) = (
            swept_at(r, (0, -1), c, h2inv),
            swept_at(r, (0, 1), c, h2inv),
        );
        out = prolonged_sweep(e, w, east, s, n, coarse, r, c, h2inv);
    }
}
