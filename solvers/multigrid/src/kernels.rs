//! Every kernel of the multigrid solvers, in the stencil language.
//!
//! Grids are vertex-centred: a level of `2^k + 1` nodes per axis stores every node,
//! boundary nodes included, as its interior, with a halo of one ghost layer that kernels
//! read only where a selection discards it (the mirrored neighbour of a Neumann node is
//! read from inside instead). Each side of the square has a boundary kind, an `i64`
//! chosen at run time (see [`crate::Boundary`]): 0 Dirichlet imposed directly (the node is
//! fixed), 1 homogeneous Neumann (mirror ghost), 2 Dirichlet by penalty (mirror ghost plus
//! `kappa / h^2 (u - g)`, with `kappa g / h^2` carried by the right-hand side).
//!
//! The operator is the anisotropic Laplacian `-(ax u_xx + ay u_yy)` (`ax = ay = 1` for
//! Poisson), discretised by the 5-point stencil on the levels of the hierarchy; the
//! defect-correction residuals use 2nd, 4th or 6th-order stencils on the finest grid.

use stencil_runtime::prelude::*;

#[stencils]
pub mod mg {
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

    /// Whether the neighbour below along an axis is the mirror image of the one above: at
    /// the low end of a side that is not periodic (at a fixed node it is never used).
    #[stencil_fn]
    fn mirror_lo(i: i64, lo: i64) -> bool {
        i == 0 && lo != 3
    }

    /// Whether the neighbour above is the mirror image of the one below.
    #[stencil_fn]
    fn mirror_hi(i: i64, n: i64, hi: i64) -> bool {
        i == n - 1 && hi != 3
    }

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

    /// Whether the node is fixed by a Dirichlet side imposed directly.
    #[stencil_fn]
    fn fixed(sx: i64, sy: i64) -> bool {
        sx == 0 || sy == 0
    }

    /// The penalty coefficient of the node's row: `kappa` on a penalty side, else 0.
    #[stencil_fn]
    fn penalty<T: Real>(sx: i64, sy: i64, kappa: T) -> T {
        if sx == 2 || sy == 2 {
            kappa
        } else {
            0.0
        }
    }

    /// Weighted Jacobi (and, with a schedule of `omega`, scheduled relaxation Jacobi):
    /// `out = e + omega (r - A e) / diag(A)`; fixed nodes keep their value.
    #[stencil]
    pub fn jacobi<T: Real>(
        e: In<T>,
        r: In<T>,
        out: Out<T>,
        ax: T,
        ay: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        omega: T,
    ) {
        let i = index(0);
        let j = index(1);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let west = if mirror_lo(i, bw) {
            e[(1, 0)]
        } else {
            e[(-1, 0)]
        };
        let east = if mirror_hi(i, extent(0), be) {
            e[(-1, 0)]
        } else {
            e[(1, 0)]
        };
        let south = if mirror_lo(j, bs) {
            e[(0, 1)]
        } else {
            e[(0, -1)]
        };
        let north = if mirror_hi(j, extent(1), bn) {
            e[(0, -1)]
        } else {
            e[(0, 1)]
        };
        let pen = penalty(sx, sy, kappa);
        let diag = (2.0 * (ax + ay) + pen) * h2inv;
        let ae = diag * e - (ax * (west + east) + ay * (south + north)) * h2inv;
        out = if fixed(sx, sy) {
            e
        } else {
            e + omega * (r - ae) / diag
        };
    }

    /// Red-black Gauss-Seidel: the points of one colour solve their row exactly (times the
    /// reciprocal of the diagonal, which every red-black kernel computes alike).
    #[stencil(red_black = colour)]
    pub fn rbgs<T: Real>(
        e: InOut<T>,
        r: In<T>,
        ax: T,
        ay: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        colour: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let west = if mirror_lo(i, bw) {
            e[(1, 0)]
        } else {
            e[(-1, 0)]
        };
        let east = if mirror_hi(i, extent(0), be) {
            e[(-1, 0)]
        } else {
            e[(1, 0)]
        };
        let south = if mirror_lo(j, bs) {
            e[(0, 1)]
        } else {
            e[(0, -1)]
        };
        let north = if mirror_hi(j, extent(1), bn) {
            e[(0, -1)]
        } else {
            e[(0, 1)]
        };
        let diag = (2.0 * (ax + ay) + penalty(sx, sy, kappa)) * h2inv;
        if !fixed(sx, sy) {
            e = (r + (ax * (west + east) + ay * (south + north)) * h2inv) * (1.0 / diag);
        }
    }

    /// Zebra line Gauss-Seidel along x: the lines (rows) of one colour solve their
    /// tridiagonal systems exactly, for problems strongly coupled along x.
    #[stencil(line = 0, red_black = colour)]
    pub fn zebra_x<T: Real>(
        e: InOut<T>,
        r: In<T>,
        ax: T,
        ay: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        colour: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let south = if mirror_lo(j, bs) {
            e[(0, 1)]
        } else {
            e[(0, -1)]
        };
        let north = if mirror_hi(j, extent(1), bn) {
            e[(0, -1)]
        } else {
            e[(0, 1)]
        };
        let diag = (2.0 * (ax + ay) + penalty(sx, sy, kappa)) * h2inv;
        // Mirror ghosts at Neumann and penalty ends double the inward coupling.
        let lower = if i == 0 {
            0.0
        } else if i == extent(0) - 1 {
            -2.0 * ax * h2inv
        } else {
            -ax * h2inv
        };
        let upper = if i == extent(0) - 1 {
            0.0
        } else if i == 0 {
            -2.0 * ax * h2inv
        } else {
            -ax * h2inv
        };
        let rhs = r + ay * (south + north) * h2inv;
        let fix = fixed(sx, sy);
        let line_fixed = sy == 0;
        if !line_fixed {
            e = tridiagonal(
                if fix { 0.0 } else { lower },
                if fix { 1.0 } else { diag },
                if fix { 0.0 } else { upper },
                if fix { e } else { rhs },
            );
        }
    }

    /// Zebra line Gauss-Seidel along y, for problems strongly coupled along y.
    #[stencil(line = 1, red_black = colour)]
    pub fn zebra_y<T: Real>(
        e: InOut<T>,
        r: In<T>,
        ax: T,
        ay: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        colour: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let west = if mirror_lo(i, bw) {
            e[(1, 0)]
        } else {
            e[(-1, 0)]
        };
        let east = if mirror_hi(i, extent(0), be) {
            e[(-1, 0)]
        } else {
            e[(1, 0)]
        };
        let diag = (2.0 * (ax + ay) + penalty(sx, sy, kappa)) * h2inv;
        let lower = if j == 0 {
            0.0
        } else if j == extent(1) - 1 {
            -2.0 * ay * h2inv
        } else {
            -ay * h2inv
        };
        let upper = if j == extent(1) - 1 {
            0.0
        } else if j == 0 {
            -2.0 * ay * h2inv
        } else {
            -ay * h2inv
        };
        let rhs = r + ax * (west + east) * h2inv;
        let fix = fixed(sx, sy);
        let line_fixed = sx == 0;
        if !line_fixed {
            e = tridiagonal(
                if fix { 0.0 } else { lower },
                if fix { 1.0 } else { diag },
                if fix { 0.0 } else { upper },
                if fix { e } else { rhs },
            );
        }
    }

    /// The residual `res = r - A e` of the level operator; 0 at fixed nodes.
    #[stencil]
    pub fn residual<T: Real>(
        e: In<T>,
        r: In<T>,
        res: Out<T>,
        ax: T,
        ay: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let west = if mirror_lo(i, bw) {
            e[(1, 0)]
        } else {
            e[(-1, 0)]
        };
        let east = if mirror_hi(i, extent(0), be) {
            e[(-1, 0)]
        } else {
            e[(1, 0)]
        };
        let south = if mirror_lo(j, bs) {
            e[(0, 1)]
        } else {
            e[(0, -1)]
        };
        let north = if mirror_hi(j, extent(1), bn) {
            e[(0, -1)]
        } else {
            e[(0, 1)]
        };
        let diag = (2.0 * (ax + ay) + penalty(sx, sy, kappa)) * h2inv;
        let ae = diag * e - (ax * (west + east) + ay * (south + north)) * h2inv;
        res = if fixed(sx, sy) { 0.0 } else { r - ae };
    }

    /// Full-weighting restriction (vertex-centred): the coarse node at `2I` of the fine
    /// grid takes 1/4 of it, 1/8 of each edge neighbour and 1/16 of each corner neighbour
    /// (the tensor product of `[1/4, 1/2, 1/4]`), neighbours beyond a Neumann or penalty
    /// side mirrored, beyond a periodic one read from the wrapped halo.
    #[stencil]
    pub fn restrict_full<T: Real>(
        fine: Fine<T>,
        coarse: Out<T>,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let south = weigh(i, nx, bw, be, fine[(-1, -1)], fine[(0, -1)], fine[(1, -1)]);
        let centre = weigh(i, nx, bw, be, fine[(-1, 0)], fine, fine[(1, 0)]);
        let north = weigh(i, nx, bw, be, fine[(-1, 1)], fine[(0, 1)], fine[(1, 1)]);
        coarse = weigh(j, extent(1), bs, bn, south, centre, north);
    }

    /// Injection (vertex-centred): the coarse node takes the fine node it coincides with.
    #[stencil(dims = 2)]
    pub fn restrict_inject<T: Real>(fine: Fine<T>, coarse: Out<T>) {
        coarse = fine;
    }

    /// Bilinear prolongation (vertex-centred) added to the fine correction: a fine node at
    /// an even index coincides with a coarse node, an odd one lies halfway between two.
    /// Nodes fixed by a Dirichlet side keep their value.
    #[stencil]
    pub fn prolong_add<T: Real>(
        e: InOut<T>,
        coarse: Coarse<T>,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let sx = side(index(0), extent(0), bw, be);
        let sy = side(index(1), extent(1), bs, bn);
        let oi = index(0) % 2 == 1;
        let oj = index(1) % 2 == 1;
        let c00 = coarse;
        let c10 = coarse[(1, 0)];
        let c01 = coarse[(0, 1)];
        let c11 = coarse[(1, 1)];
        let wx = if oi { 0.5 } else { 0.0 };
        let wy = if oj { 0.5 } else { 0.0 };
        if !fixed(sx, sy) {
            e = corrected(e, c00, c10, c01, c11, wx, wy);
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

    /// The residual `r - A e` of the level operator at an interior node from the values
    /// of `e` at and around it.
    #[stencil_fn]
    fn node_residual<T: Real>(
        r: T,
        e: T,
        west: T,
        east: T,
        south: T,
        north: T,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        let diag = (2.0 * (ax + ay) + 0.0) * h2inv;
        r - (diag * e - (ax * (west + east) + ay * (south + north)) * h2inv)
    }

    /// [`residual`] and [`restrict_full`] in one pass, for a 2D level whose four sides are
    /// Dirichlet imposed directly: each interior coarse node computes the residuals of the
    /// nine fine nodes it weighs (all interior fine nodes), the fine residual is never
    /// stored. Boundary coarse nodes get 0 (their right-hand side is never read). The
    /// fine fields need a halo of 2 (read, then discarded, at the boundary nodes).
    #[stencil]
    pub fn restrict_residual<T: Real>(
        e: Fine<T>,
        r: Fine<T>,
        coarse: Out<T>,
        ax: T,
        ay: T,
        h2inv: T,
    ) {
        let i = index(0);
        let j = index(1);
        let edge = i == 0 || j == 0 || i == extent(0) - 1 || j == extent(1) - 1;
        let mut rows: T = 0.0;
        for b in -1..=1 {
            let mut row: T = 0.0;
            for a in -1..=1 {
                let res = node_residual(
                    r[(a, b)],
                    e[(a, b)],
                    e[(a - 1, b)],
                    e[(a + 1, b)],
                    e[(a, b - 1)],
                    e[(a, b + 1)],
                    ax,
                    ay,
                    h2inv,
                );
                row = weigh_next(a, row, res);
            }
            rows = weigh_next(b, rows, row);
        }
        coarse = if edge { 0.0 } else { rows };
    }

    /// The zero correction followed by the first (colour 0) red-black half-sweep, in one
    /// pass: from `e = 0` the points of colour 0 solve their rows with zero neighbours,
    /// `e = r / diag(A)`; every other point is set to 0.
    #[stencil(dims = 2)]
    pub fn rbgs_from_zero<T: Real>(
        r: In<T>,
        e: Out<T>,
        ax: T,
        ay: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let diag = (2.0 * (ax + ay) + penalty(sx, sy, kappa)) * h2inv;
        let first = (i + j) % 2 == 0;
        e = if first && !fixed(sx, sy) {
            r * (1.0 / diag)
        } else {
            0.0
        };
    }

    /// The correction at fine node `(fi, fj)` of an `nf x mf` level with four Dirichlet
    /// sides after one red-black sweep from zero, from the right-hand side at the node
    /// and its four neighbours: `r / diag(A)` at points of colour 0, at points of colour 1
    /// the row solved with those neighbours, 0 on the boundary.
    #[stencil_fn]
    fn swept<T: Real>(
        r: T,
        rw: T,
        re: T,
        rs: T,
        rn: T,
        fi: i64,
        fj: i64,
        nf: i64,
        mf: i64,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        let diag = (2.0 * (ax + ay) + 0.0) * h2inv;
        let inv = 1.0 / diag;
        let west = if fi == 1 { 0.0 } else { rw * inv };
        let east = if fi == nf - 2 { 0.0 } else { re * inv };
        let south = if fj == 1 { 0.0 } else { rs * inv };
        let north = if fj == mf - 2 { 0.0 } else { rn * inv };
        let boundary = fi == 0 || fj == 0 || fi == nf - 1 || fj == mf - 1;
        if boundary {
            0.0
        } else if (fi + fj) % 2 == 0 {
            r * inv
        } else {
            (r + (ax * (west + east) + ay * (south + north)) * h2inv) * inv
        }
    }

    /// A node's red-black Gauss-Seidel update on a 2D level with four Dirichlet sides
    /// imposed directly, from its value `e`, its neighbours' (`w`, `east`, `s`, `n`) and its
    /// right-hand side: the row solved exactly, as [`rbgs`] computes it, or `e` on the
    /// boundary.
    #[stencil_fn]
    fn dirichlet_update<T: Real>(
        e: T,
        w: T,
        east: T,
        s: T,
        n: T,
        r: T,
        i: i64,
        j: i64,
        nx: i64,
        ny: i64,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        let diag = (2.0 * (ax + ay) + 0.0) * h2inv;
        let boundary = i == 0 || j == 0 || i == nx - 1 || j == ny - 1;
        if boundary {
            e
        } else {
            (r + (ax * (w + east) + ay * (s + n)) * h2inv) * (1.0 / diag)
        }
    }

    /// A whole red-black sweep (the colour-0 half-sweep, then the colour-1 one) in one
    /// out-of-place pass, for a 2D level whose four sides are Dirichlet imposed directly:
    /// `out` equals `e` after the two launches of [`rbgs`] bit for bit. A colour-1 node
    /// recomputes its four colour-0 neighbours' new values, so `e` is read two nodes out.
    #[stencil]
    pub fn rbgs_sweep<T: Real>(e: In<T>, r: In<T>, out: Out<T>, ax: T, ay: T, h2inv: T) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let c = e;
        let w = e[(-1, 0)];
        let east = e[(1, 0)];
        let s = e[(0, -1)];
        let n = e[(0, 1)];
        out = if (i + j) % 2 == 0 {
            dirichlet_update(c, w, east, s, n, r, i, j, nx, ny, ax, ay, h2inv)
        } else {
            let sw = e[(-1, -1)];
            let se = e[(1, -1)];
            let nw = e[(-1, 1)];
            let ne = e[(1, 1)];
            let new_w = dirichlet_update(
                w,
                e[(-2, 0)],
                c,
                sw,
                nw,
                r[(-1, 0)],
                i - 1,
                j,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            );
            let new_e = dirichlet_update(
                east,
                c,
                e[(2, 0)],
                se,
                ne,
                r[(1, 0)],
                i + 1,
                j,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            );
            let new_s = dirichlet_update(
                s,
                sw,
                se,
                e[(0, -2)],
                c,
                r[(0, -1)],
                i,
                j - 1,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            );
            let new_n = dirichlet_update(
                n,
                nw,
                ne,
                c,
                e[(0, 2)],
                r[(0, 1)],
                i,
                j + 1,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            );
            dirichlet_update(
                c, new_w, new_e, new_s, new_n, r, i, j, nx, ny, ax, ay, h2inv,
            )
        };
    }

    /// A whole red-black sweep from a zero correction in one pass ([`swept`]), for a 2D
    /// level whose four sides are Dirichlet imposed directly. The values equal those of
    /// [`rbgs_from_zero`] and the colour-1 half-sweep bit for bit.
    #[stencil]
    pub fn rbgs_sweep_from_zero<T: Real>(r: In<T>, e: Out<T>, ax: T, ay: T, h2inv: T) {
        e = swept_here(r, index(0), index(1), extent(0), extent(1), ax, ay, h2inv);
    }

    /// [`swept`] at offset `(a, b)` from the kernel's point `(i, j)` of an `nx x ny` level,
    /// from the field `r` (`a`, `b` constants at every call).
    #[stencil_fn]
    fn swept_at<T: Real>(
        r: In<T>,
        a: i64,
        b: i64,
        i: i64,
        j: i64,
        nx: i64,
        ny: i64,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        swept(
            r[(a, b)],
            r[(a - 1, b)],
            r[(a + 1, b)],
            r[(a, b - 1)],
            r[(a, b + 1)],
            i + a,
            j + b,
            nx,
            ny,
            ax,
            ay,
            h2inv,
        )
    }

    /// The correction at offset `(a, b)` after one red-black sweep from zero and the
    /// colour-0 half of a second: colour-0 nodes solve their rows with their neighbours'
    /// [`swept_at`] values, the others keep theirs (Dirichlet sides imposed directly).
    #[stencil_fn]
    fn swept_then_red<T: Real>(
        r: In<T>,
        a: i64,
        b: i64,
        i: i64,
        j: i64,
        nx: i64,
        ny: i64,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        let here = swept_at(r, a, b, i, j, nx, ny, ax, ay, h2inv);
        if (i + a + j + b) % 2 == 0 {
            dirichlet_update(
                here,
                swept_at(r, a - 1, b, i, j, nx, ny, ax, ay, h2inv),
                swept_at(r, a + 1, b, i, j, nx, ny, ax, ay, h2inv),
                swept_at(r, a, b - 1, i, j, nx, ny, ax, ay, h2inv),
                swept_at(r, a, b + 1, i, j, nx, ny, ax, ay, h2inv),
                r[(a, b)],
                i + a,
                j + b,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            )
        } else {
            here
        }
    }

    /// Two whole red-black sweeps from a zero correction in one pass, for a 2D level whose
    /// four sides are Dirichlet imposed directly: the colour-1 half of the second sweep on
    /// [`swept_then_red`]. The values equal those of [`rbgs_sweep_from_zero`] followed by
    /// [`rbgs_sweep`] bit for bit; the right-hand side is read three nodes out (halo 3).
    #[stencil]
    pub fn rbgs_two_sweeps_from_zero<T: Real>(r: In<T>, e: Out<T>, ax: T, ay: T, h2inv: T) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let here = swept_then_red(r, 0, 0, i, j, nx, ny, ax, ay, h2inv);
        e = if (i + j) % 2 == 0 {
            here
        } else {
            dirichlet_update(
                here,
                swept_then_red(r, -1, 0, i, j, nx, ny, ax, ay, h2inv),
                swept_then_red(r, 1, 0, i, j, nx, ny, ax, ay, h2inv),
                swept_then_red(r, 0, -1, i, j, nx, ny, ax, ay, h2inv),
                swept_then_red(r, 0, 1, i, j, nx, ny, ax, ay, h2inv),
                r,
                i,
                j,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            )
        };
    }

    /// The correction `e` at offset `(a, b)` after a red-black half-sweep of colour
    /// `colour` (Dirichlet sides imposed directly): nodes of that colour solve their rows
    /// with their neighbours' values in `e`, the others keep theirs.
    #[stencil_fn]
    fn half_swept_at<T: Real>(
        e: In<T>,
        r: In<T>,
        colour: i64,
        a: i64,
        b: i64,
        i: i64,
        j: i64,
        nx: i64,
        ny: i64,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        if (i + a + j + b) % 2 == colour {
            dirichlet_update(
                e[(a, b)],
                e[(a - 1, b)],
                e[(a + 1, b)],
                e[(a, b - 1)],
                e[(a, b + 1)],
                r[(a, b)],
                i + a,
                j + b,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            )
        } else {
            e[(a, b)]
        }
    }

    /// [`half_swept_at`] of colour 1 followed by the colour-0 half-sweep, at offset
    /// `(a, b)`.
    #[stencil_fn]
    fn black_then_red_at<T: Real>(
        e: In<T>,
        r: In<T>,
        a: i64,
        b: i64,
        i: i64,
        j: i64,
        nx: i64,
        ny: i64,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        let here = half_swept_at(e, r, 1, a, b, i, j, nx, ny, ax, ay, h2inv);
        if (i + a + j + b) % 2 == 0 {
            dirichlet_update(
                here,
                half_swept_at(e, r, 1, a - 1, b, i, j, nx, ny, ax, ay, h2inv),
                half_swept_at(e, r, 1, a + 1, b, i, j, nx, ny, ax, ay, h2inv),
                half_swept_at(e, r, 1, a, b - 1, i, j, nx, ny, ax, ay, h2inv),
                half_swept_at(e, r, 1, a, b + 1, i, j, nx, ny, ax, ay, h2inv),
                r[(a, b)],
                i + a,
                j + b,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            )
        } else {
            here
        }
    }

    /// The colour-1 half-sweep, then a whole red-black sweep (colour 0, colour 1), in one
    /// out-of-place pass for a 2D level whose four sides are Dirichlet imposed directly:
    /// what follows [`prolong_rbgs`] in a V(., 2) cycle. `out` equals `e` after the three
    /// half-sweep launches of [`rbgs`] bit for bit; `e` is read three nodes out (halo 3).
    #[stencil]
    pub fn rbgs_sweep_and_a_half<T: Real>(e: In<T>, r: In<T>, out: Out<T>, ax: T, ay: T, h2inv: T) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let here = black_then_red_at(e, r, 0, 0, i, j, nx, ny, ax, ay, h2inv);
        out = if (i + j) % 2 == 0 {
            here
        } else {
            dirichlet_update(
                here,
                black_then_red_at(e, r, -1, 0, i, j, nx, ny, ax, ay, h2inv),
                black_then_red_at(e, r, 1, 0, i, j, nx, ny, ax, ay, h2inv),
                black_then_red_at(e, r, 0, -1, i, j, nx, ny, ax, ay, h2inv),
                black_then_red_at(e, r, 0, 1, i, j, nx, ny, ax, ay, h2inv),
                r,
                i,
                j,
                nx,
                ny,
                ax,
                ay,
                h2inv,
            )
        };
    }

    /// [`swept`] at the kernel's point `(i, j)` of an `nx x ny` level, from the field `r`.
    #[stencil_fn]
    fn swept_here<T: Real>(
        r: In<T>,
        i: i64,
        j: i64,
        nx: i64,
        ny: i64,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        swept(
            r,
            r[(-1, 0)],
            r[(1, 0)],
            r[(0, -1)],
            r[(0, 1)],
            i,
            j,
            nx,
            ny,
            ax,
            ay,
            h2inv,
        )
    }

    /// [`restrict_residual`] of the correction that one red-black sweep from zero gives
    /// ([`swept`]), computed from the right-hand side alone: the level's V(1, .) cycle
    /// needs neither its first sweep nor its residual stored. The fine right-hand side
    /// needs a halo of 3.
    #[stencil]
    pub fn restrict_swept_residual<T: Real>(r: Fine<T>, coarse: Out<T>, ax: T, ay: T, h2inv: T) {
        let i = index(0);
        let j = index(1);
        let edge = i == 0 || j == 0 || i == extent(0) - 1 || j == extent(1) - 1;
        let nf = 2 * extent(0) - 1;
        let mf = 2 * extent(1) - 1;
        let fi = 2 * i;
        let fj = 2 * j;
        let mut rows: T = 0.0;
        for b in -1..=1 {
            let mut row: T = 0.0;
            for a in -1..=1 {
                let x = fi + a;
                let y = fj + b;
                let centre = swept(
                    r[(a, b)],
                    r[(a - 1, b)],
                    r[(a + 1, b)],
                    r[(a, b - 1)],
                    r[(a, b + 1)],
                    x,
                    y,
                    nf,
                    mf,
                    ax,
                    ay,
                    h2inv,
                );
                let west = swept(
                    r[(a - 1, b)],
                    r[(a - 2, b)],
                    r[(a, b)],
                    r[(a - 1, b - 1)],
                    r[(a - 1, b + 1)],
                    x - 1,
                    y,
                    nf,
                    mf,
                    ax,
                    ay,
                    h2inv,
                );
                let east = swept(
                    r[(a + 1, b)],
                    r[(a, b)],
                    r[(a + 2, b)],
                    r[(a + 1, b - 1)],
                    r[(a + 1, b + 1)],
                    x + 1,
                    y,
                    nf,
                    mf,
                    ax,
                    ay,
                    h2inv,
                );
                let south = swept(
                    r[(a, b - 1)],
                    r[(a - 1, b - 1)],
                    r[(a + 1, b - 1)],
                    r[(a, b - 2)],
                    r[(a, b)],
                    x,
                    y - 1,
                    nf,
                    mf,
                    ax,
                    ay,
                    h2inv,
                );
                let north = swept(
                    r[(a, b + 1)],
                    r[(a - 1, b + 1)],
                    r[(a + 1, b + 1)],
                    r[(a, b)],
                    r[(a, b + 2)],
                    x,
                    y + 1,
                    nf,
                    mf,
                    ax,
                    ay,
                    h2inv,
                );
                let res = node_residual(r[(a, b)], centre, west, east, south, north, ax, ay, h2inv);
                row = weigh_next(a, row, res);
            }
            rows = weigh_next(b, rows, row);
        }
        coarse = if edge { 0.0 } else { rows };
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

    /// The prolongation added to a correction followed by the colour-0 half-sweep, at fine
    /// node `(i, j)` of an `nx x ny` level with four Dirichlet sides, from the correction
    /// at the node and its four neighbours and the coarse correction: points of colour 1
    /// take `e + P coarse`, points of colour 0 solve their rows with their neighbours so
    /// corrected, boundary points keep `e`.
    #[stencil_fn]
    fn prolonged_sweep<T: Real>(
        e: T,
        ew: T,
        ee: T,
        es: T,
        en: T,
        coarse: In<T>,
        r: T,
        i: i64,
        j: i64,
        nx: i64,
        ny: i64,
        ax: T,
        ay: T,
        h2inv: T,
    ) -> T {
        let oi = i % 2 == 1;
        let oj = j % 2 == 1;
        let wx = if oi { 0.5 } else { 0.0 };
        let wy = if oj { 0.5 } else { 0.0 };
        let c00 = coarse;
        let c10 = coarse[(1, 0)];
        let c01 = coarse[(0, 1)];
        let c11 = coarse[(1, 1)];
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
        let east = if i == nx - 2 { ee } else { east };
        let south = if j == 1 { es } else { south };
        let north = if j == ny - 2 { en } else { north };
        let boundary = i == 0 || j == 0 || i == nx - 1 || j == ny - 1;
        if (i + j) % 2 == 0 {
            dirichlet_update(e, west, east, south, north, r, i, j, nx, ny, ax, ay, h2inv)
        } else if boundary {
            e
        } else {
            here
        }
    }

    /// [`prolong_add`] followed by the first (colour 0) red-black half-sweep, in one
    /// out-of-place pass ([`prolonged_sweep`]; `out` becomes the level's correction), for a
    /// 2D level whose four sides are Dirichlet imposed directly. The values equal those of
    /// the two launches bit for bit.
    #[stencil]
    pub fn prolong_rbgs<T: Real>(
        e: In<T>,
        coarse: Coarse<T>,
        r: In<T>,
        out: Out<T>,
        ax: T,
        ay: T,
        h2inv: T,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        out = prolonged_sweep(
            e,
            e[(-1, 0)],
            e[(1, 0)],
            e[(0, -1)],
            e[(0, 1)],
            coarse,
            r,
            i,
            j,
            nx,
            ny,
            ax,
            ay,
            h2inv,
        );
    }

    /// [`prolong_rbgs`] on a level whose correction is one red-black sweep from zero
    /// ([`swept`]), recomputed from the right-hand side instead of read (the companion of
    /// [`restrict_swept_residual`]).
    #[stencil]
    pub fn prolong_swept_rbgs<T: Real>(
        r: In<T>,
        coarse: Coarse<T>,
        out: Out<T>,
        ax: T,
        ay: T,
        h2inv: T,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let e = swept_here(r, i, j, nx, ny, ax, ay, h2inv);
        let ew = swept(
            r[(-1, 0)],
            r[(-2, 0)],
            r,
            r[(-1, -1)],
            r[(-1, 1)],
            i - 1,
            j,
            nx,
            ny,
            ax,
            ay,
            h2inv,
        );
        let ee = swept(
            r[(1, 0)],
            r,
            r[(2, 0)],
            r[(1, -1)],
            r[(1, 1)],
            i + 1,
            j,
            nx,
            ny,
            ax,
            ay,
            h2inv,
        );
        let es = swept(
            r[(0, -1)],
            r[(-1, -1)],
            r[(1, -1)],
            r[(0, -2)],
            r,
            i,
            j - 1,
            nx,
            ny,
            ax,
            ay,
            h2inv,
        );
        let en = swept(
            r[(0, 1)],
            r[(-1, 1)],
            r[(1, 1)],
            r,
            r[(0, 2)],
            i,
            j + 1,
            nx,
            ny,
            ax,
            ay,
            h2inv,
        );
        out = prolonged_sweep(e, ew, ee, es, en, coarse, r, i, j, nx, ny, ax, ay, h2inv);
    }

    /// Converts an f64 field to the preconditioner's precision.
    #[stencil(dims = 2)]
    pub fn narrow<T: Real>(u: In<f64>, out: Out<T>) {
        out = u as T;
    }

    /// Replaces the solution by a full-multigrid result, except at nodes fixed by a
    /// Dirichlet side (whose f64 values must not pass through the preconditioner's
    /// precision).
    #[stencil(dims = 2)]
    pub fn replace<T: Real>(u: InOut<f64>, e: In<T>, bw: i64, be: i64, bs: i64, bn: i64) {
        let sx = side(index(0), extent(0), bw, be);
        let sy = side(index(1), extent(1), bs, bn);
        if !fixed(sx, sy) {
            u = e as f64;
        }
    }

    /// Cell-centred restriction: the coarse cell averages its four children.
    #[stencil]
    pub fn restrict_cells<T: Real>(fine: Fine<T>, coarse: Out<T>) {
        coarse = 0.25 * (fine + fine[(1, 0)] + fine[(0, 1)] + fine[(1, 1)]);
    }

    /// Cell-centred bilinear prolongation: 9/16 of the parent, 3/16 of each parent
    /// neighbour on the child's side, 1/16 of the diagonal one.
    #[stencil]
    pub fn prolong_cells<T: Real>(coarse: Coarse<T>, fine: Out<T>) {
        let ei = index(0) % 2 == 0;
        let ej = index(1) % 2 == 0;
        let cx = if ei { coarse[(-1, 0)] } else { coarse[(1, 0)] };
        let cy = if ej { coarse[(0, -1)] } else { coarse[(0, 1)] };
        let cxy = if ei {
            if ej {
                coarse[(-1, -1)]
            } else {
                coarse[(-1, 1)]
            }
        } else if ej {
            coarse[(1, -1)]
        } else {
            coarse[(1, 1)]
        };
        fine = 0.5625 * coarse + 0.1875 * (cx + cy) + 0.0625 * cxy;
    }

    /// The right-hand side of the penalty form: `f + kappa g / h^2` on penalty sides, `g`
    /// being the boundary value held by `u`; `f` elsewhere.
    #[stencil(dims = 2)]
    pub fn penalty_rhs(
        u: In<f64>,
        f: In<f64>,
        rhs: Out<f64>,
        h2inv: f64,
        kappa: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let sx = side(index(0), extent(0), bw, be);
        let sy = side(index(1), extent(1), bs, bn);
        rhs = f + penalty(sx, sy, kappa) * h2inv * u;
    }

    /// Sets a field to zero.
    #[stencil(dims = 2)]
    pub fn zero<T: Real>(e: Out<T>) {
        e = 0.0;
    }

    /// The defect-correction update `u = u + e`: `u` in f64, the correction in the
    /// preconditioner's precision.
    #[stencil(dims = 2)]
    pub fn correct<T: Real>(u: InOut<f64>, e: In<T>) {
        u = u + e as f64;
    }

    /// The value `A u` of the 2nd-order operator at a node from its own value `c` and its
    /// four neighbours' (west, east, south, north: below and above along x, then y), with
    /// the mirrored neighbour taken at a Neumann or penalty side and the penalty term on a
    /// penalty side.
    #[stencil_fn]
    fn apply2(
        i: i64,
        j: i64,
        nx: i64,
        ny: i64,
        c: f64,
        xm: f64,
        xp: f64,
        ym: f64,
        yp: f64,
        ax: f64,
        ay: f64,
        h2inv: f64,
        kappa: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) -> f64 {
        let west = if mirror_lo(i, bw) { xp } else { xm };
        let east = if mirror_hi(i, nx, be) { xm } else { xp };
        let south = if mirror_lo(j, bs) { yp } else { ym };
        let north = if mirror_hi(j, ny, bn) { ym } else { yp };
        let penalised = penalty(side(i, nx, bw, be), side(j, ny, bs, bn), kappa);
        let diag = (2.0 * (ax + ay) + penalised) * h2inv;
        diag * c - (ax * (west + east) + ay * (south + north)) * h2inv
    }

    /// The 2nd-order residual `res = f - A u` in f64, stored in the preconditioner's
    /// precision, with its sum of squares.
    #[stencil]
    pub fn defect2<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        ax: f64,
        ay: f64,
        h2inv: f64,
        kappa: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let au = apply2(
            i,
            j,
            nx,
            ny,
            u,
            u[(-1, 0)],
            u[(1, 0)],
            u[(0, -1)],
            u[(0, 1)],
            ax,
            ay,
            h2inv,
            kappa,
            bw,
            be,
            bs,
            bn,
        );
        let d = if fixed(side(i, nx, bw, be), side(j, ny, bs, bn)) {
            0.0
        } else {
            f - au
        };
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The defect-correction update and the next 2nd-order defect in one pass:
    /// `out = u + e` and `res = f - A out` (as [`defect2`]), with its sum of squares. `out`
    /// must be another field than `u`: every node reads its neighbours' `u + e`.
    #[stencil]
    pub fn correct_defect2<T: Real>(
        u: In<f64>,
        e: In<T>,
        f: In<f64>,
        out: Out<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        ax: f64,
        ay: f64,
        h2inv: f64,
        kappa: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let c = u + e as f64;
        let xm = u[(-1, 0)] + e[(-1, 0)] as f64;
        let xp = u[(1, 0)] + e[(1, 0)] as f64;
        let ym = u[(0, -1)] + e[(0, -1)] as f64;
        let yp = u[(0, 1)] + e[(0, 1)] as f64;
        let au = apply2(
            i, j, nx, ny, c, xm, xp, ym, yp, ax, ay, h2inv, kappa, bw, be, bs, bn,
        );
        let d = if fixed(side(i, nx, bw, be), side(j, ny, bs, bn)) {
            0.0
        } else {
            f - au
        };
        out = c;
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

    /// `-u''` to 4th order along one axis at a node `dist` nodes from the low boundary and
    /// `rdist` from the high one, from the values at offsets -1..=4 (`m1`, `c`, `p1`..`p4`)
    /// and their mirror images (`q1`..`q4` at -2..=-4, -1 is `m1`): centred 5-point inside,
    /// one-sided 6-point next to a boundary.
    #[stencil_fn]
    fn d2_o4(
        dist: i64,
        rdist: i64,
        m4: f64,
        m3: f64,
        m2: f64,
        m1: f64,
        c: f64,
        p1: f64,
        p2: f64,
        p3: f64,
        p4: f64,
    ) -> f64 {
        if dist == 1 {
            -(10.0 * m1 - 15.0 * c - 4.0 * p1 + 14.0 * p2 - 6.0 * p3 + p4) / 12.0
        } else if rdist == 1 {
            -(10.0 * p1 - 15.0 * c - 4.0 * m1 + 14.0 * m2 - 6.0 * m3 + m4) / 12.0
        } else {
            -(-m2 + 16.0 * m1 - 30.0 * c + 16.0 * p1 - p2) / 12.0
        }
    }

    /// `-u''` to 6th order: centred 7-point from three nodes in, one-sided 8-point at one
    /// and two nodes from a boundary.
    #[stencil_fn]
    fn d2_o6(
        dist: i64,
        rdist: i64,
        m6: f64,
        m5: f64,
        m4: f64,
        m3: f64,
        m2: f64,
        m1: f64,
        c: f64,
        p1: f64,
        p2: f64,
        p3: f64,
        p4: f64,
        p5: f64,
        p6: f64,
    ) -> f64 {
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

    /// The 4th-order residual of `-(ax u_xx + ay u_yy) = f` with Dirichlet boundaries
    /// imposed directly or periodic sides, in f64, stored in the preconditioner's precision.
    #[stencil]
    pub fn defect4<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        ax: f64,
        ay: f64,
        h2inv: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let uxx = d2_o4(
            reach(i, bw),
            reach(nx - 1 - i, be),
            u[(-4, 0)],
            u[(-3, 0)],
            u[(-2, 0)],
            u[(-1, 0)],
            u,
            u[(1, 0)],
            u[(2, 0)],
            u[(3, 0)],
            u[(4, 0)],
        );
        let uyy = d2_o4(
            reach(j, bs),
            reach(ny - 1 - j, bn),
            u[(0, -4)],
            u[(0, -3)],
            u[(0, -2)],
            u[(0, -1)],
            u,
            u[(0, 1)],
            u[(0, 2)],
            u[(0, 3)],
            u[(0, 4)],
        );
        let d = if fixed(side(i, nx, bw, be), side(j, ny, bs, bn)) {
            0.0
        } else {
            f - (ax * uxx + ay * uyy) * h2inv
        };
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The 6th-order residual, as [`defect4`].
    #[stencil]
    pub fn defect6<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        ax: f64,
        ay: f64,
        h2inv: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let nx = extent(0);
        let ny = extent(1);
        let uxx = d2_o6(
            reach(i, bw),
            reach(nx - 1 - i, be),
            u[(-6, 0)],
            u[(-5, 0)],
            u[(-4, 0)],
            u[(-3, 0)],
            u[(-2, 0)],
            u[(-1, 0)],
            u,
            u[(1, 0)],
            u[(2, 0)],
            u[(3, 0)],
            u[(4, 0)],
            u[(5, 0)],
            u[(6, 0)],
        );
        let uyy = d2_o6(
            reach(j, bs),
            reach(ny - 1 - j, bn),
            u[(0, -6)],
            u[(0, -5)],
            u[(0, -4)],
            u[(0, -3)],
            u[(0, -2)],
            u[(0, -1)],
            u,
            u[(0, 1)],
            u[(0, 2)],
            u[(0, 3)],
            u[(0, 4)],
            u[(0, 5)],
            u[(0, 6)],
        );
        let d = if fixed(side(i, nx, bw, be), side(j, ny, bs, bn)) {
            0.0
        } else {
            f - (ax * uxx + ay * uyy) * h2inv
        };
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The sum of `u` over the distinct nodes of a periodic grid (the last node along a
    /// periodic axis repeats the first and is left out), for zero-mean solutions.
    #[stencil(dims = 2)]
    pub fn periodic_sum(u: In<f64>, total: Sum<f64>, px: i64, py: i64) {
        let repeat_x = px == 1 && index(0) == extent(0) - 1;
        let repeat_y = py == 1 && index(1) == extent(1) - 1;
        total.reduce(if repeat_x || repeat_y { 0.0 } else { u });
    }

    /// `u = u - c`.
    #[stencil(dims = 2)]
    pub fn shift(u: InOut<f64>, c: f64) {
        u = u - c;
    }

    // ---- 3D: the same operators on the unit cube (7-point Laplacian) -------------------

    /// Whether the node is fixed by a Dirichlet side imposed directly (3D).
    #[stencil_fn]
    fn fixed_3d(sx: i64, sy: i64, sz: i64) -> bool {
        sx == 0 || sy == 0 || sz == 0
    }

    /// The penalty coefficient of the node's row (3D).
    #[stencil_fn]
    fn penalty_3d<T: Real>(sx: i64, sy: i64, sz: i64, kappa: T) -> T {
        if sx == 2 || sy == 2 || sz == 2 {
            kappa
        } else {
            0.0
        }
    }

    /// Weighted Jacobi on the 7-point operator `-(ax u_xx + ay u_yy + az u_zz)`; the
    /// boundary codes of the six sides (west, east, south, north, bottom, top) as in 2D.
    #[stencil]
    pub fn jacobi_3d<T: Real>(
        e: In<T>,
        r: In<T>,
        out: Out<T>,
        ax: T,
        ay: T,
        az: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
        omega: T,
    ) {
        let i = index(0);
        let j = index(1);
        let k = index(2);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let sz = side(k, extent(2), bb, bt);
        let west = if mirror_lo(i, bw) {
            e[(1, 0, 0)]
        } else {
            e[(-1, 0, 0)]
        };
        let east = if mirror_hi(i, extent(0), be) {
            e[(-1, 0, 0)]
        } else {
            e[(1, 0, 0)]
        };
        let south = if mirror_lo(j, bs) {
            e[(0, 1, 0)]
        } else {
            e[(0, -1, 0)]
        };
        let north = if mirror_hi(j, extent(1), bn) {
            e[(0, -1, 0)]
        } else {
            e[(0, 1, 0)]
        };
        let bottom = if mirror_lo(k, bb) {
            e[(0, 0, 1)]
        } else {
            e[(0, 0, -1)]
        };
        let top = if mirror_hi(k, extent(2), bt) {
            e[(0, 0, -1)]
        } else {
            e[(0, 0, 1)]
        };
        let diag = (2.0 * (ax + ay + az) + penalty_3d(sx, sy, sz, kappa)) * h2inv;
        let off = (ax * (west + east) + ay * (south + north) + az * (bottom + top)) * h2inv;
        out = if fixed_3d(sx, sy, sz) {
            e
        } else {
            e + omega * (r - (diag * e - off)) / diag
        };
    }

    /// Red-black Gauss-Seidel on the 7-point operator (colour by `i + j + k`).
    #[stencil(red_black = colour)]
    pub fn rbgs_3d<T: Real>(
        e: InOut<T>,
        r: In<T>,
        ax: T,
        ay: T,
        az: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
        colour: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let k = index(2);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let sz = side(k, extent(2), bb, bt);
        let west = if mirror_lo(i, bw) {
            e[(1, 0, 0)]
        } else {
            e[(-1, 0, 0)]
        };
        let east = if mirror_hi(i, extent(0), be) {
            e[(-1, 0, 0)]
        } else {
            e[(1, 0, 0)]
        };
        let south = if mirror_lo(j, bs) {
            e[(0, 1, 0)]
        } else {
            e[(0, -1, 0)]
        };
        let north = if mirror_hi(j, extent(1), bn) {
            e[(0, -1, 0)]
        } else {
            e[(0, 1, 0)]
        };
        let bottom = if mirror_lo(k, bb) {
            e[(0, 0, 1)]
        } else {
            e[(0, 0, -1)]
        };
        let top = if mirror_hi(k, extent(2), bt) {
            e[(0, 0, -1)]
        } else {
            e[(0, 0, 1)]
        };
        let diag = (2.0 * (ax + ay + az) + penalty_3d(sx, sy, sz, kappa)) * h2inv;
        let off = (ax * (west + east) + ay * (south + north) + az * (bottom + top)) * h2inv;
        if !fixed_3d(sx, sy, sz) {
            e = (r + off) / diag;
        }
    }

    /// The residual `res = r - A e` of the 7-point operator; 0 at fixed nodes.
    #[stencil]
    pub fn residual_3d<T: Real>(
        e: In<T>,
        r: In<T>,
        res: Out<T>,
        ax: T,
        ay: T,
        az: T,
        h2inv: T,
        kappa: T,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let k = index(2);
        let sx = side(i, extent(0), bw, be);
        let sy = side(j, extent(1), bs, bn);
        let sz = side(k, extent(2), bb, bt);
        let west = if mirror_lo(i, bw) {
            e[(1, 0, 0)]
        } else {
            e[(-1, 0, 0)]
        };
        let east = if mirror_hi(i, extent(0), be) {
            e[(-1, 0, 0)]
        } else {
            e[(1, 0, 0)]
        };
        let south = if mirror_lo(j, bs) {
            e[(0, 1, 0)]
        } else {
            e[(0, -1, 0)]
        };
        let north = if mirror_hi(j, extent(1), bn) {
            e[(0, -1, 0)]
        } else {
            e[(0, 1, 0)]
        };
        let bottom = if mirror_lo(k, bb) {
            e[(0, 0, 1)]
        } else {
            e[(0, 0, -1)]
        };
        let top = if mirror_hi(k, extent(2), bt) {
            e[(0, 0, -1)]
        } else {
            e[(0, 0, 1)]
        };
        let diag = (2.0 * (ax + ay + az) + penalty_3d(sx, sy, sz, kappa)) * h2inv;
        let off = (ax * (west + east) + ay * (south + north) + az * (bottom + top)) * h2inv;
        res = if fixed_3d(sx, sy, sz) {
            0.0
        } else {
            r - (diag * e - off)
        };
    }

    /// Full-weighting restriction in 3D: the tensor product of `[1/4, 1/2, 1/4]` over the
    /// 27 fine nodes around the coarse node, mirrored or wrapped at the sides.
    #[stencil]
    pub fn restrict_full_3d<T: Real>(
        fine: Fine<T>,
        coarse: Out<T>,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let k = index(2);
        let nx = extent(0);
        let ny = extent(1);
        let r_ss = weigh(
            i,
            nx,
            bw,
            be,
            fine[(-1, -1, -1)],
            fine[(0, -1, -1)],
            fine[(1, -1, -1)],
        );
        let r_cs = weigh(
            i,
            nx,
            bw,
            be,
            fine[(-1, 0, -1)],
            fine[(0, 0, -1)],
            fine[(1, 0, -1)],
        );
        let r_ns = weigh(
            i,
            nx,
            bw,
            be,
            fine[(-1, 1, -1)],
            fine[(0, 1, -1)],
            fine[(1, 1, -1)],
        );
        let r_sc = weigh(
            i,
            nx,
            bw,
            be,
            fine[(-1, -1, 0)],
            fine[(0, -1, 0)],
            fine[(1, -1, 0)],
        );
        let r_cc = weigh(i, nx, bw, be, fine[(-1, 0, 0)], fine, fine[(1, 0, 0)]);
        let r_nc = weigh(
            i,
            nx,
            bw,
            be,
            fine[(-1, 1, 0)],
            fine[(0, 1, 0)],
            fine[(1, 1, 0)],
        );
        let r_sn = weigh(
            i,
            nx,
            bw,
            be,
            fine[(-1, -1, 1)],
            fine[(0, -1, 1)],
            fine[(1, -1, 1)],
        );
        let r_cn = weigh(
            i,
            nx,
            bw,
            be,
            fine[(-1, 0, 1)],
            fine[(0, 0, 1)],
            fine[(1, 0, 1)],
        );
        let r_nn = weigh(
            i,
            nx,
            bw,
            be,
            fine[(-1, 1, 1)],
            fine[(0, 1, 1)],
            fine[(1, 1, 1)],
        );
        let below = weigh(j, ny, bs, bn, r_ss, r_cs, r_ns);
        let centre = weigh(j, ny, bs, bn, r_sc, r_cc, r_nc);
        let above = weigh(j, ny, bs, bn, r_sn, r_cn, r_nn);
        coarse = weigh(k, extent(2), bb, bt, below, centre, above);
    }

    /// Injection in 3D.
    #[stencil(dims = 3)]
    pub fn restrict_inject_3d<T: Real>(fine: Fine<T>, coarse: Out<T>) {
        coarse = fine;
    }

    /// Trilinear prolongation (vertex-centred) added to the fine correction; nodes fixed
    /// by a Dirichlet side keep their value.
    #[stencil]
    pub fn prolong_add_3d<T: Real>(
        e: InOut<T>,
        coarse: Coarse<T>,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) {
        let sx = side(index(0), extent(0), bw, be);
        let sy = side(index(1), extent(1), bs, bn);
        let sz = side(index(2), extent(2), bb, bt);
        let wx = if index(0) % 2 == 1 { 0.5 } else { 0.0 };
        let wy = if index(1) % 2 == 1 { 0.5 } else { 0.0 };
        let wz = if index(2) % 2 == 1 { 0.5 } else { 0.0 };
        let c00 = coarse + wx * (coarse[(1, 0, 0)] - coarse);
        let c10 = coarse[(0, 1, 0)] + wx * (coarse[(1, 1, 0)] - coarse[(0, 1, 0)]);
        let c01 = coarse[(0, 0, 1)] + wx * (coarse[(1, 0, 1)] - coarse[(0, 0, 1)]);
        let c11 = coarse[(0, 1, 1)] + wx * (coarse[(1, 1, 1)] - coarse[(0, 1, 1)]);
        let low = c00 + wy * (c10 - c00);
        let high = c01 + wy * (c11 - c01);
        if !fixed_3d(sx, sy, sz) {
            e = e + low + wz * (high - low);
        }
    }

    /// Converts an f64 field to the preconditioner's precision (3D).
    #[stencil(dims = 3)]
    pub fn narrow_3d<T: Real>(u: In<f64>, out: Out<T>) {
        out = u as T;
    }

    /// Replaces the solution by a full-multigrid result except at fixed nodes (3D).
    #[stencil(dims = 3)]
    pub fn replace_3d<T: Real>(
        u: InOut<f64>,
        e: In<T>,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) {
        let sx = side(index(0), extent(0), bw, be);
        let sy = side(index(1), extent(1), bs, bn);
        let sz = side(index(2), extent(2), bb, bt);
        if !fixed_3d(sx, sy, sz) {
            u = e as f64;
        }
    }

    /// The right-hand side of the penalty form (3D).
    #[stencil(dims = 3)]
    pub fn penalty_rhs_3d(
        u: In<f64>,
        f: In<f64>,
        rhs: Out<f64>,
        h2inv: f64,
        kappa: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) {
        let sx = side(index(0), extent(0), bw, be);
        let sy = side(index(1), extent(1), bs, bn);
        let sz = side(index(2), extent(2), bb, bt);
        rhs = f + penalty_3d(sx, sy, sz, kappa) * h2inv * u;
    }

    /// Sets a field to zero (3D).
    #[stencil(dims = 3)]
    pub fn zero_3d<T: Real>(e: Out<T>) {
        e = 0.0;
    }

    /// The defect-correction update `u = u + e` (3D).
    #[stencil(dims = 3)]
    pub fn correct_3d<T: Real>(u: InOut<f64>, e: In<T>) {
        u = u + e as f64;
    }

    /// The value `A u` of the 2nd-order operator at node `(i, j, k)` of a box of
    /// `nx x ny x nz` nodes (3D), from its own value `c` and its six neighbours' (below and
    /// above along x, y, z), as [`apply2`].
    #[stencil_fn]
    fn apply2_3d(
        i: i64,
        j: i64,
        k: i64,
        nx: i64,
        ny: i64,
        nz: i64,
        c: f64,
        xm: f64,
        xp: f64,
        ym: f64,
        yp: f64,
        zm: f64,
        zp: f64,
        ax: f64,
        ay: f64,
        az: f64,
        h2inv: f64,
        kappa: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) -> f64 {
        let west = if mirror_lo(i, bw) { xp } else { xm };
        let east = if mirror_hi(i, nx, be) { xm } else { xp };
        let south = if mirror_lo(j, bs) { yp } else { ym };
        let north = if mirror_hi(j, ny, bn) { ym } else { yp };
        let bottom = if mirror_lo(k, bb) { zp } else { zm };
        let top = if mirror_hi(k, nz, bt) { zm } else { zp };
        let sx = side(i, nx, bw, be);
        let sy = side(j, ny, bs, bn);
        let sz = side(k, nz, bb, bt);
        let diag = (2.0 * (ax + ay + az) + penalty_3d(sx, sy, sz, kappa)) * h2inv;
        let off = (ax * (west + east) + ay * (south + north) + az * (bottom + top)) * h2inv;
        diag * c - off
    }

    /// The 2nd-order residual in f64 (3D), stored in the preconditioner's precision, with
    /// its sum of squares.
    #[stencil]
    pub fn defect2_3d<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        ax: f64,
        ay: f64,
        az: f64,
        h2inv: f64,
        kappa: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let k = index(2);
        let nx = extent(0);
        let ny = extent(1);
        let nz = extent(2);
        let fixed = fixed_3d(
            side(i, nx, bw, be),
            side(j, ny, bs, bn),
            side(k, nz, bb, bt),
        );
        let au = apply2_3d(
            i,
            j,
            k,
            nx,
            ny,
            nz,
            u,
            u[(-1, 0, 0)],
            u[(1, 0, 0)],
            u[(0, -1, 0)],
            u[(0, 1, 0)],
            u[(0, 0, -1)],
            u[(0, 0, 1)],
            ax,
            ay,
            az,
            h2inv,
            kappa,
            bw,
            be,
            bs,
            bn,
            bb,
            bt,
        );
        let d = if fixed { 0.0 } else { f - au };
        res = d as T;
        norm2.reduce(d * d);
    }

    /// [`correct_defect2`] in 3D: `out = u + e` and `res = f - A out`, with its sum of
    /// squares; `out` is another field than `u`.
    #[stencil]
    pub fn correct_defect2_3d<T: Real>(
        u: In<f64>,
        e: In<T>,
        f: In<f64>,
        out: Out<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        ax: f64,
        ay: f64,
        az: f64,
        h2inv: f64,
        kappa: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let k = index(2);
        let nx = extent(0);
        let ny = extent(1);
        let nz = extent(2);
        let fixed = fixed_3d(
            side(i, nx, bw, be),
            side(j, ny, bs, bn),
            side(k, nz, bb, bt),
        );
        let c = u + e as f64;
        let au = apply2_3d(
            i,
            j,
            k,
            nx,
            ny,
            nz,
            c,
            u[(-1, 0, 0)] + e[(-1, 0, 0)] as f64,
            u[(1, 0, 0)] + e[(1, 0, 0)] as f64,
            u[(0, -1, 0)] + e[(0, -1, 0)] as f64,
            u[(0, 1, 0)] + e[(0, 1, 0)] as f64,
            u[(0, 0, -1)] + e[(0, 0, -1)] as f64,
            u[(0, 0, 1)] + e[(0, 0, 1)] as f64,
            ax,
            ay,
            az,
            h2inv,
            kappa,
            bw,
            be,
            bs,
            bn,
            bb,
            bt,
        );
        let d = if fixed { 0.0 } else { f - au };
        out = c;
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The 4th-order residual (3D), Dirichlet sides imposed directly or periodic ones.
    #[stencil]
    pub fn defect4_3d<T: Real>(
        u: In<f64>,
        f: In<f64>,
        res: Out<T>,
        norm2: Sum<f64>,
        ax: f64,
        ay: f64,
        az: f64,
        h2inv: f64,
        bw: i64,
        be: i64,
        bs: i64,
        bn: i64,
        bb: i64,
        bt: i64,
    ) {
        let i = index(0);
        let j = index(1);
        let k = index(2);
        let nx = extent(0);
        let ny = extent(1);
        let nz = extent(2);
        let uxx = d2_o4(
            reach(i, bw),
            reach(nx - 1 - i, be),
            u[(-4, 0, 0)],
            u[(-3, 0, 0)],
            u[(-2, 0, 0)],
            u[(-1, 0, 0)],
            u,
            u[(1, 0, 0)],
            u[(2, 0, 0)],
            u[(3, 0, 0)],
            u[(4, 0, 0)],
        );
        let uyy = d2_o4(
            reach(j, bs),
            reach(ny - 1 - j, bn),
            u[(0, -4, 0)],
            u[(0, -3, 0)],
            u[(0, -2, 0)],
            u[(0, -1, 0)],
            u,
            u[(0, 1, 0)],
            u[(0, 2, 0)],
            u[(0, 3, 0)],
            u[(0, 4, 0)],
        );
        let uzz = d2_o4(
            reach(k, bb),
            reach(nz - 1 - k, bt),
            u[(0, 0, -4)],
            u[(0, 0, -3)],
            u[(0, 0, -2)],
            u[(0, 0, -1)],
            u,
            u[(0, 0, 1)],
            u[(0, 0, 2)],
            u[(0, 0, 3)],
            u[(0, 0, 4)],
        );
        let fix = fixed_3d(
            side(i, nx, bw, be),
            side(j, ny, bs, bn),
            side(k, nz, bb, bt),
        );
        let d = if fix {
            0.0
        } else {
            f - (ax * uxx + ay * uyy + az * uzz) * h2inv
        };
        res = d as T;
        norm2.reduce(d * d);
    }

    /// The sum of `u` over the distinct nodes of a periodic grid (3D).
    #[stencil(dims = 3)]
    pub fn periodic_sum_3d(u: In<f64>, total: Sum<f64>, px: i64, py: i64, pz: i64) {
        let repeat_x = px == 1 && index(0) == extent(0) - 1;
        let repeat_y = py == 1 && index(1) == extent(1) - 1;
        let repeat_z = pz == 1 && index(2) == extent(2) - 1;
        total.reduce(if repeat_x || repeat_y || repeat_z {
            0.0
        } else {
            u
        });
    }

    /// `u = u - c` (3D).
    #[stencil(dims = 3)]
    pub fn shift_3d(u: InOut<f64>, c: f64) {
        u = u - c;
    }
}
