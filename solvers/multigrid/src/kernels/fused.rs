//! Fused kernels of 2D levels with four Dirichlet sides imposed directly.

use stencil_runtime::prelude::*;

/// The kernels (see [`super`] for the grids, sides and operators they share).
#[stencils(helpers = [super::rows])]
pub mod kernels {
    use super::super::rows::Level;

    // Each equals a sequence of the other modules' launches bit for bit
    // (`tests/gpu_kernels.rs`).
    // Offsets `d` are from the kernel's point; a node's colour is the parity of its
    // index sum.

    /// A 2D level with four Dirichlet sides imposed directly, as the fused kernels take
    /// it. A kernel's fields may hold a slab of rows of the whole level (one rank's, over
    /// several ranks): `j0` is the whole level's index of the fields' row 0 and `nj` its
    /// number of rows (`0` and `extent(1)` for the whole level). Slabs start at even
    /// rows, so colours and parities are the same in either index. Their ghost rows hold
    /// the neighbouring slabs' values as deep as a kernel reads.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Dirichlet<T> {
        /// The operator's coefficient along each axis.
        pub c: Axes<T>,
        /// `1 / h^2`.
        pub h2inv: T,
        /// The whole level's row of the fields' row 0 (even).
        pub j0: i64,
        /// The whole level's number of rows.
        pub nj: i64,
    }

    /// Whether node `(i, j)` of the kernel's grid (`j` a row of the fields) is on the
    /// whole level's boundary.
    #[stencil_fn]
    fn on_edge<T: Real>(i: i64, j: i64, g: Dirichlet<T>) -> bool {
        i == 0 || j + g.j0 == 0 || i == extent(0) - 1 || j + g.j0 == g.nj - 1
    }

    /// `value` at an interior node of the kernel's grid, 0 on the whole level's boundary.
    #[stencil_fn]
    fn zero_on_edge<T: Real>(value: T, g: Dirichlet<T>) -> T {
        if on_edge(index(0), index(1), g) {
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

    /// The diagonal of an interior row, as [`diagonal`] computes it.
    #[stencil_fn]
    fn dirichlet_diagonal<T: Real>(g: Dirichlet<T>) -> T {
        (2.0 * (g.c[0] + g.c[1]) + 0.0) * g.h2inv
    }

    /// The coupling `sum c_a (below + above) / h^2` of a node whose neighbours hold
    /// `around = (w, east, s, n)`.
    #[stencil_fn]
    fn coupled<T: Real>(around: (T, T, T, T), g: Dirichlet<T>) -> T {
        let (w, east, s, n) = around;
        (g.c[0] * (w + east) + g.c[1] * (s + n)) * g.h2inv
    }

    /// The residual `r - A e` at an interior node from the value `e` and its neighbours'.
    #[stencil_fn]
    fn node_residual<T: Real>(r: T, e: T, around: (T, T, T, T), g: Dirichlet<T>) -> T {
        r - (dirichlet_diagonal(g) * e - coupled(around, g))
    }

    /// The red-black update of the node at offset `d` from its value `e`, its neighbours'
    /// and its right-hand side: the row solved exactly, as [`rbgs`] computes it, or `e` on
    /// the boundary.
    #[stencil_fn]
    fn dirichlet_update<T: Real>(
        d: (i64, i64),
        e: T,
        around: (T, T, T, T),
        r: T,
        g: Dirichlet<T>,
    ) -> T {
        let inv = 1.0 / dirichlet_diagonal(g);
        if on_edge(index(0) + d[0], index(1) + d[1], g) {
            e
        } else {
            (r + coupled(around, g)) * inv
        }
    }

    /// The values of `e` around offset `d`: west, east, south, north.
    #[stencil_fn]
    fn around<T: Real>(e: In<T>, d: (i64, i64)) -> (T, T, T, T) {
        (
            e[d - unit(0)],
            e[d + unit(0)],
            e[d - unit(1)],
            e[d + unit(1)],
        )
    }

    /// [`dirichlet_update`] of the node at offset `d` with its neighbours' values in `e`.
    #[stencil_fn]
    fn updated_at<T: Real>(e: In<T>, r: In<T>, d: (i64, i64), g: Dirichlet<T>) -> T {
        // The neighbours are read before the node, as written out by hand.
        let values = around(e, d);
        dirichlet_update(d, e[d], values, r[d], g)
    }

    /// The correction at node `(fi, fj)` of an `nf x mf` level after one red-black sweep
    /// from zero, from the right-hand side `r` read at offset `d` and its four neighbours:
    /// `r / diag(A)` at points of colour 0, at points of colour 1 the row solved with
    /// those neighbours, 0 on the boundary. `fj` counts from the fields' row 0, which is
    /// the whole level's row `j0` (even); colours are taken as [`colour_at`] takes them.
    /// Only `g.c` and `g.h2inv` are read.
    #[stencil_fn]
    fn swept<T: Real>(
        r: In<T>,
        d: (i64, i64),
        fi: i64,
        fj: i64,
        level: (i64, i64, i64),
        g: Dirichlet<T>,
    ) -> T {
        let (j0, nf, mf) = level;
        let (fj, parity) = (fj + j0, (fi + fj + 8) % 2);
        let inv = 1.0 / dirichlet_diagonal(g);
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
            (r[d] + coupled((west, east, south, north), g)) * inv
        }
    }

    /// [`swept`] at offset `d` from the kernel's point, on the kernel's grid.
    #[stencil_fn]
    fn swept_at<T: Real>(r: In<T>, d: (i64, i64), g: Dirichlet<T>) -> T {
        let (i, j) = (index(0) + d[0], index(1) + d[1]);
        swept(r, d, i, j, (g.j0, extent(0), g.nj), g)
    }

    /// [`swept_at`] around offset `d`: west, east, south, north.
    #[stencil_fn]
    fn swept_around<T: Real>(r: In<T>, d: (i64, i64), g: Dirichlet<T>) -> (T, T, T, T) {
        let (w, east) = (swept_at(r, d - unit(0), g), swept_at(r, d + unit(0), g));
        (
            w,
            east,
            swept_at(r, d - unit(1), g),
            swept_at(r, d + unit(1), g),
        )
    }

    /// The zero correction followed by the first (colour 0) red-black half-sweep, in one
    /// pass: from `e = 0` the points of colour 0 solve their rows with zero neighbours,
    /// `e = r / diag(A)`; every other point is set to 0 (any sides).
    #[stencil(dims = 2)]
    pub fn rbgs_from_zero<T: Real>(r: In<T>, e: Out<T>, l: Level<T>) {
        let first = (index(0) + index(1)) % 2 == 0;
        let inv = 1.0 / diagonal(l);
        e = if first && !fixed(l) { r * inv } else { 0.0 };
    }

    /// A whole red-black sweep (the colour-0 half-sweep, then the colour-1 one) in one
    /// out-of-place pass: `out` equals `e` after the two launches of [`rbgs`]. A colour-1
    /// node recomputes its four colour-0 neighbours' new values, so `e` is read two nodes
    /// out.
    #[stencil]
    pub fn rbgs_sweep<T: Real>(e: In<T>, r: In<T>, out: Out<T>, g: Dirichlet<T>) {
        out = if colour_at((0, 0)) == 0 {
            updated_at(e, r, (0, 0), g)
        } else {
            let (w, east) = (updated_at(e, r, (-1, 0), g), updated_at(e, r, (1, 0), g));
            let (s, n) = (updated_at(e, r, (0, -1), g), updated_at(e, r, (0, 1), g));
            dirichlet_update((0, 0), e, (w, east, s, n), r, g)
        };
    }

    /// A whole red-black sweep from a zero correction in one pass ([`swept`]): the values
    /// of [`rbgs_from_zero`] and the colour-1 half-sweep.
    #[stencil]
    pub fn rbgs_sweep_from_zero<T: Real>(r: In<T>, e: Out<T>, g: Dirichlet<T>) {
        e = swept_at(r, (0, 0), g);
    }

    /// The correction at offset `d` after one red-black sweep from zero and the colour-0
    /// half of a second: colour-0 nodes solve their rows with their neighbours'
    /// [`swept_at`] values, the others keep theirs.
    #[stencil_fn]
    fn swept_then_red<T: Real>(r: In<T>, d: (i64, i64), g: Dirichlet<T>) -> T {
        let here = swept_at(r, d, g);
        if colour_at(d) == 0 {
            dirichlet_update(d, here, swept_around(r, d, g), r[d], g)
        } else {
            here
        }
    }

    /// Two whole red-black sweeps from a zero correction in one pass: the colour-1 half of
    /// the second sweep on [`swept_then_red`], the values of [`rbgs_sweep_from_zero`]
    /// followed by [`rbgs_sweep`]; the right-hand side is read three nodes out (halo 3).
    #[stencil]
    pub fn rbgs_two_sweeps_from_zero<T: Real>(r: In<T>, e: Out<T>, g: Dirichlet<T>) {
        let here = swept_then_red(r, (0, 0), g);
        e = if colour_at((0, 0)) == 0 {
            here
        } else {
            let (w, east) = (swept_then_red(r, (-1, 0), g), swept_then_red(r, (1, 0), g));
            let (s, n) = (swept_then_red(r, (0, -1), g), swept_then_red(r, (0, 1), g));
            dirichlet_update((0, 0), here, (w, east, s, n), r, g)
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
        g: Dirichlet<T>,
    ) -> T {
        if colour_at(d) == colour {
            updated_at(e, r, d, g)
        } else {
            e[d]
        }
    }

    /// [`half_swept_at`] of colour 1 followed by the colour-0 half-sweep, at offset `d`.
    #[stencil_fn]
    fn black_then_red_at<T: Real>(e: In<T>, r: In<T>, d: (i64, i64), g: Dirichlet<T>) -> T {
        let here = half_swept_at(e, r, 1, d, g);
        if colour_at(d) == 0 {
            let (w, east) = (
                half_swept_at(e, r, 1, d - unit(0), g),
                half_swept_at(e, r, 1, d + unit(0), g),
            );
            let (s, n) = (
                half_swept_at(e, r, 1, d - unit(1), g),
                half_swept_at(e, r, 1, d + unit(1), g),
            );
            dirichlet_update(d, here, (w, east, s, n), r[d], g)
        } else {
            here
        }
    }

    /// The colour-1 half-sweep, then a whole red-black sweep (colour 0, colour 1), in one
    /// out-of-place pass: what follows [`prolong_rbgs`] in a V(., 2) cycle. `out` equals
    /// `e` after the three half-sweep launches of [`rbgs`]; `e` is read three nodes out
    /// (halo 3).
    #[stencil]
    pub fn rbgs_sweep_and_a_half<T: Real>(e: In<T>, r: In<T>, out: Out<T>, g: Dirichlet<T>) {
        let here = black_then_red_at(e, r, (0, 0), g);
        out = if colour_at((0, 0)) == 0 {
            here
        } else {
            let (w, east) = (
                black_then_red_at(e, r, (-1, 0), g),
                black_then_red_at(e, r, (1, 0), g),
            );
            let (s, n) = (
                black_then_red_at(e, r, (0, -1), g),
                black_then_red_at(e, r, (0, 1), g),
            );
            dirichlet_update((0, 0), here, (w, east, s, n), r, g)
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
    fn residual_at<T: Real>(e: In<T>, r: In<T>, d: (i64, i64), g: Dirichlet<T>) -> T {
        let values = around(e, d);
        node_residual(r[d], e[d], values, g)
    }

    /// The residual at the fine node at offset `d` of the correction one sweep from zero
    /// gives, from the fine right-hand side `r` alone ([`swept`] at it and its neighbours).
    #[stencil_fn]
    fn swept_residual_at<T: Real>(r: In<T>, d: (i64, i64), g: Dirichlet<T>) -> T {
        // Fine indices: `g` is the coarse kernel grid's; the fine fields' row 0 is the
        // whole fine level's row `2 j0`.
        let (x, y) = (2 * index(0) + d[0], 2 * index(1) + d[1]);
        let fine = (2 * g.j0, 2 * extent(0) - 1, 2 * g.nj - 1);
        let centre = swept(r, d, x, y, fine, g);
        let (w, east) = (
            swept(r, d - unit(0), x - 1, y, fine, g),
            swept(r, d + unit(0), x + 1, y, fine, g),
        );
        let (s, n) = (
            swept(r, d - unit(1), x, y - 1, fine, g),
            swept(r, d + unit(1), x, y + 1, fine, g),
        );
        node_residual(r[d], centre, (w, east, s, n), g)
    }

    /// [`residual`] and [`restrict_full`] in one pass: each interior coarse node computes
    /// the residuals of the nine fine nodes it weighs (all interior fine nodes), the fine
    /// residual is never stored. Boundary coarse nodes get 0 (their right-hand side is
    /// never read). The fine fields need a halo of 2 (read, then discarded, at the
    /// boundary nodes).
    #[stencil]
    pub fn restrict_residual<T: Real>(e: Fine<T>, r: Fine<T>, coarse: Out<T>, g: Dirichlet<T>) {
        let mut rows: T = 0.0;
        for b in -1..=1 {
            let mut row: T = 0.0;
            for a in -1..=1 {
                row = weigh_next(a, row, residual_at(e, r, (a, b), g));
            }
            rows = weigh_next(b, rows, row);
        }
        coarse = zero_on_edge(rows, g);
    }

    /// [`restrict_residual`] of the correction that one red-black sweep from zero gives
    /// ([`swept`]), computed from the right-hand side alone: the level's V(1, .) cycle
    /// needs neither its first sweep nor its residual stored. The fine right-hand side
    /// needs a halo of 3.
    #[stencil]
    pub fn restrict_swept_residual<T: Real>(r: Fine<T>, coarse: Out<T>, g: Dirichlet<T>) {
        let mut rows: T = 0.0;
        for b in -1..=1 {
            let mut row: T = 0.0;
            for a in -1..=1 {
                row = weigh_next(a, row, swept_residual_at(r, (a, b), g));
            }
            rows = weigh_next(b, rows, row);
        }
        coarse = zero_on_edge(rows, g);
    }

    /// The prolongation added to a correction followed by the colour-0 half-sweep, at the
    /// kernel's fine node, from the correction `e` at the node and `around` it and the
    /// coarse correction: points of colour 1 take `e + P coarse`, points of colour 0 solve
    /// their rows with their neighbours so corrected, boundary points keep `e`.
    #[stencil_fn]
    fn prolonged_sweep<T: Real>(
        e: T,
        around: (T, T, T, T),
        coarse: In<T>,
        r: T,
        g: Dirichlet<T>,
    ) -> T {
        let (ew, ee, es, en) = around;
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
        let south = if j + g.j0 == 1 { es } else { south };
        let north = if j + g.j0 == g.nj - 2 { en } else { north };
        if (i + j) % 2 == 0 {
            dirichlet_update((0, 0), e, (west, east, south, north), r, g)
        } else if on_edge(i, j, g) {
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
        g: Dirichlet<T>,
    ) {
        let values = around(e, (0, 0));
        out = prolonged_sweep(e, values, coarse, r, g);
    }

    /// [`prolong_rbgs`] on a level whose correction is one red-black sweep from zero
    /// ([`swept`]), recomputed from the right-hand side instead of read (the companion of
    /// [`restrict_swept_residual`]).
    #[stencil]
    pub fn prolong_swept_rbgs<T: Real>(r: In<T>, coarse: Coarse<T>, out: Out<T>, g: Dirichlet<T>) {
        let e = swept_at(r, (0, 0), g);
        out = prolonged_sweep(e, swept_around(r, (0, 0), g), coarse, r, g);
    }
}
