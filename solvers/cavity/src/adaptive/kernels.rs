//! The kernels of the stream-function solve on a tree of levels, in the stencil language:
//! `lap(psi) = f` on the unit square's nodes with `psi = 0` on the walls, 5-point
//! Laplacian at each level's spacing.

use stencil_runtime::prelude::*;

#[stencils(helpers = [crate::kernels::walls])]
pub mod poisson {
    /// The 5-point Laplacian times `h^2`.
    #[stencil_fn]
    fn laplacian_h2<T: Real>(psi: In<T>) -> T {
        psi[(1, 0)] + psi[(-1, 0)] + psi[(0, 1)] + psi[(0, -1)] - 4.0 * psi
    }

    /// One colour of red-black Gauss-Seidel for `lap(psi) = f` (`h2 = h^2`); walls keep
    /// their value.
    #[stencil(red_black = colour)]
    pub fn relax<T: Real>(psi: InOut<T>, f: In<T>, h2: T, colour: i64) {
        if !on_wall(index(0), index(1), extent(0), extent(1)) {
            psi = 0.25 * (psi[(1, 0)] + psi[(-1, 0)] + psi[(0, 1)] + psi[(0, -1)] - h2 * f);
        }
    }

    /// The residual `r = f - lap(psi)` (`h2_inv = 1 / h^2`), 0 on the walls.
    #[stencil]
    pub fn residual<T: Real>(psi: In<T>, f: In<T>, r: Out<T>, h2_inv: T) {
        r = if on_wall(index(0), index(1), extent(0), extent(1)) {
            0.0
        } else {
            f - laplacian_h2(psi) * h2_inv
        };
    }

    /// Full weighting of `r` at the point: `(4 r + 2 (sides) + corners) / 16` (used at
    /// the even points, which the coarser level shares).
    #[stencil]
    pub fn full_weighting<T: Real>(r: In<T>, out: Out<T>) {
        let sides = r[(1, 0)] + r[(-1, 0)] + r[(0, 1)] + r[(0, -1)];
        let corners = r[(1, 1)] + r[(-1, 1)] + r[(1, -1)] + r[(-1, -1)];
        out = 0.0625 * (4.0 * r + 2.0 * sides + corners);
    }

    /// The right-hand side of a level: where a finer level covers the point (`covered`
    /// = 1), the full approximation scheme's `lap(psi) + t` (`t` the finer residual's
    /// restriction, `psi` the finer solution's), elsewhere `-w`; 0 on the walls.
    #[stencil]
    pub fn coarse_rhs<T: Real>(
        psi: In<T>,
        t: In<T>,
        covered: In<T>,
        w: In<T>,
        f: Out<T>,
        h2_inv: T,
    ) {
        f = if on_wall(index(0), index(1), extent(0), extent(1)) {
            0.0
        } else if covered > 0.5 {
            laplacian_h2(psi) * h2_inv + t
        } else {
            -w
        };
    }

    /// `out = a - b`.
    #[stencil(dims = 2)]
    pub fn difference<T: Real>(a: In<T>, b: In<T>, out: Out<T>) {
        out = a - b;
    }

    /// `psi = psi + e` off the walls.
    #[stencil(dims = 2)]
    pub fn correct<T: Real>(psi: InOut<T>, e: In<T>) {
        if !on_wall(index(0), index(1), extent(0), extent(1)) {
            psi = psi + e;
        }
    }

    /// The sums of `r^2` and `w^2` over the nodes (for the relative residual).
    #[stencil(dims = 2)]
    pub fn norms<T: Real>(r: In<T>, w: In<T>, rr: Sum<T>, ww: Sum<T>) {
        rr.reduce(r * r);
        ww.reduce(w * w);
    }

    /// `out = u` where `covered` is 0 (a leaf's point), 0 where it is 1.
    #[stencil(dims = 2)]
    pub fn uncovered<T: Real>(u: In<T>, covered: In<T>, out: Out<T>) {
        out = if covered > 0.5 { 0.0 } else { u };
    }
}
