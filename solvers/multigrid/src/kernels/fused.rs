//! Fused kernels of 2D levels with four Dirichlet sides imposed directly.

use stencil_runtime::prelude::*;

/// The kernels (see [`super`] for the grids, sides and operators they share).
#[stencils(helpers = [super::rows])]
pub mod kernels {
    // Each equals a sequence of the other modules' launches bit for bit
    // (`tests/gpu_kernels.rs`).
    // Offsets `d` are from the kernel's point; a node's colour is the parity of its
    // index sum.
    //
    // A kernel's fields may hold a slab of rows of the whole grid (one rank's, over
    // several ranks): `rows` is `(j0, nj)`, the whole grid's index of the fields' row 0
    // and its number of rows (`(0, extent(1))` for the whole grid). Slabs start at even
    // rows, so colours and parities are the same in either index. Their ghost rows hold
    // the neighbouring slabs' values as deep as a kernel reads.

    /// Whether node `(i, j)` of the kernel's grid (`j` a row of the fields) is on the
    /// whole grid's boundary.
    #[stencil_fn]
    fn on_edge(i: i64, j: i64, rows: (i64, i64)) -> bool {
        i == 0 || j + rows[0] == 0 || i == extent(0) - 1 || j + rows[0] == rows[1] - 1
    }

    /// `value` at an interior node of the kernel's grid, 0 on its boundary.
    #[stencil_fn]
    fn zero_on_edge<T: Real>(value: T, rows: (i64, i64)) -> T {
        if on_edge(index(0), index(1), rows) {
            0.0
        } else {
            value
        }
    }

    /// The colour of the node at offset `d`: the parity of its index sum, the indices
    /// taken 4 past their own so that ghost nodes (down to index -3) have a non-negative
    /// sum and the parity of the whole grid's indices (slabs start at even rows), and a
    /// tile's points keep a parity LLVM can see.
    #[stencil_fn]
    fn colour_at(d: (i64, i64)) -> i64 {
        (index(0) + d[0] + index(1) + d[1] + 8) % 2
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
        rows: (i64, i64),
    ) -> T {
        let inv = 1.0 / dirichlet_diagonal(c, h2inv);
        if on_edge(index(0) + d[0], index(1) + d[1], rows) {
            e
        } else {
            (r + (c[0] * (w + east) + c[1] * (s + n)) * h2inv) * inv
        }
    }

    /// [`dirichlet_update`] of the node at offset `d` with its neighbours' values in `e`.
    #[stencil_fn]
    fn updated_at<T: Real>(
        e: In<T>,
        r: In<T>,
        d: (i64, i64),
        c: Axes<T>,
        h2inv: T,
        rows: (i64, i64),
    ) -> T {
        let (w, east) = (e[d - unit(0)], e[d + unit(0)]);
        let (s, n) = (e[d - unit(1)], e[d + unit(1)]);
        dirichlet_update(d, e[d], w, east, s, n, r[d], c, h2inv, rows)
    }

    /// The correction at node `(fi, fj)` of an `nf x mf` level after one red-black sweep
    /// from zero, from the right-hand side `r` read at offset `d` and its four neighbours:
    /// `r / diag(A)` at points of colour 0, at points of colour 1 the row solved with
    /// those neighbours, 0 on the boundary. `fj` counts from the fields' row 0, which is
    /// the whole level's row `j0` (even); colours are taken as [`colour_at`] takes them.
    #[stencil_fn]
    fn swept<T: Real>(
        r: In<T>,
        d: (i64, i64),
        fi: i64,
        fj: i64,
        j0: i64,
        nf: i64,
        mf: i64,
        c: Axes<T>,
        h2inv: T,
    ) -> T {
        let (fj, parity) = (fj + j0, (fi + fj + 8) % 2);
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
        } else if parity == 0 {
            r[d] * inv
        } else {
            (r[d] + (c[0] * (west + east) + c[1] * (south + north)) * h2inv) * inv
        }
    }

    /// [`swept`] at offset `d` from the kernel's point, on the kernel's grid.
    #[stencil_fn]
    fn swept_at<T: Real>(r: In<T>, d: (i64, i64), c: Axes<T>, h2inv: T, rows: (i64, i64)) -> T {
        let (i, j) = (index(0) + d[0], index(1) + d[1]);
        swept(r, d, i, j, rows[0], extent(0), rows[1], c, h2inv)
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
    pub fn rbgs_sweep<T: Real>(
        e: In<T>,
        r: In<T>,
        out: Out<T>,
        c: Axes<T>,
        h2inv: T,
        j0: i64,
        nj: i64,
    ) {
        let rows = (j0, nj);
        out = if colour_at((0, 0)) == 0 {
            updated_at(e, r, (0, 0), c, h2inv, rows)
        } else {
            let (w, east) = (
                updated_at(e, r, (-1, 0), c, h2inv, rows),
                updated_at(e, r, (1, 0), c, h2inv, rows),
            );
            let (s, n) = (
                updated_at(e, r, (0, -1), c, h2inv, rows),
                updated_at(e, r, (0, 1), c, h2inv, rows),
            );
            dirichlet_update((0, 0), e, w, east, s, n, r, c, h2inv, rows)
        };
    }

    /// A whole red-black sweep from a zero correction in one pass ([`swept`]): the values
    /// of [`rbgs_from_zero`] and the colour-1 half-sweep.
    #[stencil]
    pub fn rbgs_sweep_from_zero<T: Real>(
        r: In<T>,
        e: Out<T>,
        c: Axes<T>,
        h2inv: T,
        j0: i64,
        nj: i64,
    ) {
        e = swept_at(r, (0, 0), c, h2inv, (j0, nj));
    }

    /// The correction at offset `d` after one red-black sweep from zero and the colour-0
    /// half of a second: colour-0 nodes solve their rows with their neighbours'
    /// [`swept_at`] values, the others keep theirs.
    #[stencil_fn]
    fn swept_then_red<T: Real>(
        r: In<T>,
        d: (i64, i64),
        c: Axes<T>,
        h2inv: T,
        rows: (i64, i64),
    ) -> T {
        let here = swept_at(r, d, c, h2inv, rows);
        if colour_at(d) == 0 {
            let w = swept_at(r, d - unit(0), c, h2inv, rows);
            let east = swept_at(r, d + unit(0), c, h2inv, rows);
            let s = swept_at(r, d - unit(1), c, h2inv, rows);
            let n = swept_at(r, d + unit(1), c, h2inv, rows);
            dirichlet_update(d, here, w, east, s, n, r[d], c, h2inv, rows)
        } else {
            here
        }
    }

    /// Two whole red-black sweeps from a zero correction in one pass: the colour-1 half of
    /// the second sweep on [`swept_then_red`], the values of [`rbgs_sweep_from_zero`]
    /// followed by [`rbgs_sweep`]; the right-hand side is read three nodes out (halo 3).
    #[stencil]
    pub fn rbgs_two_sweeps_from_zero<T: Real>(
        r: In<T>,
        e: Out<T>,
        c: Axes<T>,
        h2inv: T,
        j0: i64,
        nj: i64,
    ) {
        let rows = (j0, nj);
        let here = swept_then_red(r, (0, 0), c, h2inv, rows);
        e = if colour_at((0, 0)) == 0 {
            here
        } else {
            let w = swept_then_red(r, (-1, 0), c, h2inv, rows);
            let east = swept_then_red(r, (1, 0), c, h2inv, rows);
            let s = swept_then_red(r, (0, -1), c, h2inv, rows);
            let n = swept_then_red(r, (0, 1), c, h2inv, rows);
            dirichlet_update((0, 0), here, w, east, s, n, r, c, h2inv, rows)
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
        rows: (i64, i64),
    ) -> T {
        if colour_at(d) == colour {
            updated_at(e, r, d, c, h2inv, rows)
        } else {
            e[d]
        }
    }

    /// [`half_swept_at`] of colour 1 followed by the colour-0 half-sweep, at offset `d`.
    #[stencil_fn]
    fn black_then_red_at<T: Real>(
        e: In<T>,
        r: In<T>,
        d: (i64, i64),
        c: Axes<T>,
        h2inv: T,
        rows: (i64, i64),
    ) -> T {
        let here = half_swept_at(e, r, 1, d, c, h2inv, rows);
        if colour_at(d) == 0 {
            let w = half_swept_at(e, r, 1, d - unit(0), c, h2inv, rows);
            let east = half_swept_at(e, r, 1, d + unit(0), c, h2inv, rows);
            let s = half_swept_at(e, r, 1, d - unit(1), c, h2inv, rows);
            let n = half_swept_at(e, r, 1, d + unit(1), c, h2inv, rows);
            dirichlet_update(d, here, w, east, s, n, r[d], c, h2inv, rows)
        } else {
            here
        }
    }

    /// The colour-1 half-sweep, then a whole red-black sweep (colour 0, colour 1), in one
    /// out-of-place pass: what follows [`prolong_rbgs`] in a V(., 2) cycle. `out` equals
    /// `e` after the three half-sweep launches of [`rbgs`]; `e` is read three nodes out
    /// (halo 3).
    #[stencil]
    pub fn rbgs_sweep_and_a_half<T: Real>(
        e: In<T>,
        r: In<T>,
        out: Out<T>,
        c: Axes<T>,
        h2inv: T,
        j0: i64,
        nj: i64,
    ) {
        let rows = (j0, nj);
        let here = black_then_red_at(e, r, (0, 0), c, h2inv, rows);
        out = if colour_at((0, 0)) == 0 {
            here
        } else {
            let w = black_then_red_at(e, r, (-1, 0), c, h2inv, rows);
            let east = black_then_red_at(e, r, (1, 0), c, h2inv, rows);
            let s = black_then_red_at(e, r, (0, -1), c, h2inv, rows);
            let n = black_then_red_at(e, r, (0, 1), c, h2inv, rows);
            dirichlet_update((0, 0), here, w, east, s, n, r, c, h2inv, rows)
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
    fn swept_residual_at<T: Real>(
        r: In<T>,
        d: (i64, i64),
        c: Axes<T>,
        h2inv: T,
        rows: (i64, i64),
    ) -> T {
        // Fine indices: `rows` is the coarse kernel grid's; the fine fields' row 0 is the
        // whole fine level's row `2 j0`.
        let (x, y, j0) = (2 * index(0) + d[0], 2 * index(1) + d[1], 2 * rows[0]);
        let (nf, mf) = (2 * extent(0) - 1, 2 * rows[1] - 1);
        let centre = swept(r, d, x, y, j0, nf, mf, c, h2inv);
        let w = swept(r, d - unit(0), x - 1, y, j0, nf, mf, c, h2inv);
        let east = swept(r, d + unit(0), x + 1, y, j0, nf, mf, c, h2inv);
        let s = swept(r, d - unit(1), x, y - 1, j0, nf, mf, c, h2inv);
        let n = swept(r, d + unit(1), x, y + 1, j0, nf, mf, c, h2inv);
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
        j0: i64,
        nj: i64,
    ) {
        let mut rows: T = 0.0;
        for b in -1..=1 {
            let mut row: T = 0.0;
            for a in -1..=1 {
                row = weigh_next(a, row, residual_at(e, r, (a, b), c, h2inv));
            }
            rows = weigh_next(b, rows, row);
        }
        coarse = zero_on_edge(rows, (j0, nj));
    }

    /// [`restrict_residual`] of the correction that one red-black sweep from zero gives
    /// ([`swept`]), computed from the right-hand side alone: the level's V(1, .) cycle
    /// needs neither its first sweep nor its residual stored. The fine right-hand side
    /// needs a halo of 3.
    #[stencil]
    pub fn restrict_swept_residual<T: Real>(
        r: Fine<T>,
        coarse: Out<T>,
        c: Axes<T>,
        h2inv: T,
        j0: i64,
        nj: i64,
    ) {
        let mut rows: T = 0.0;
        for b in -1..=1 {
            let mut row: T = 0.0;
            for a in -1..=1 {
                let value = swept_residual_at(r, (a, b), c, h2inv, (j0, nj));
                row = weigh_next(a, row, value);
            }
            rows = weigh_next(b, rows, row);
        }
        coarse = zero_on_edge(rows, (j0, nj));
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
        rows: (i64, i64),
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
        let south = if j + rows[0] == 1 { es } else { south };
        let north = if j + rows[0] == rows[1] - 2 {
            en
        } else {
            north
        };
        if (i + j) % 2 == 0 {
            dirichlet_update((0, 0), e, west, east, south, north, r, c, h2inv, rows)
        } else if on_edge(i, j, rows) {
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
        j0: i64,
        nj: i64,
    ) {
        let (w, east, s, n) = (e[(-1, 0)], e[(1, 0)], e[(0, -1)], e[(0, 1)]);
        out = prolonged_sweep(e, w, east, s, n, coarse, r, c, h2inv, (j0, nj));
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
        j0: i64,
        nj: i64,
    ) {
        let rows = (j0, nj);
        let e = swept_at(r, (0, 0), c, h2inv, rows);
        let (w, east) = (
            swept_at(r, (-1, 0), c, h2inv, rows),
            swept_at(r, (1, 0), c, h2inv, rows),
        );
        let (s, n) = (
            swept_at(r, (0, -1), c, h2inv, rows),
            swept_at(r, (0, 1), c, h2inv, rows),
        );
        out = prolonged_sweep(e, w, east, s, n, coarse, r, c, h2inv, rows);
    }
}
