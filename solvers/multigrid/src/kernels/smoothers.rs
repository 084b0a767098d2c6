//! Smoothers and residuals, 2D and 3D: Jacobi, red-black Gauss-Seidel, zebra lines.

use stencil_runtime::prelude::*;

/// The kernels (see [`super`] for the grids, sides and operators they share).
#[stencils(helpers = [super::rows])]
pub mod kernels {
    use super::super::rows::Level;

    /// Weighted Jacobi (and, with a schedule of `omega`, scheduled relaxation Jacobi):
    /// `out = e + omega (r - A e) / diag(A)`; fixed nodes keep their value.
    #[stencil(dims = [2, 3])]
    pub fn jacobi<T: Real>(e: In<T>, r: In<T>, out: Out<T>, l: Level<T>, omega: T) {
        let diag = diagonal(l);
        let ae = diag * e - coupling(e, l);
        out = if fixed(l) {
            e
        } else {
            e + omega * (r - ae) / diag
        };
    }

    /// Red-black Gauss-Seidel: the points of one colour solve their row exactly (times the
    /// reciprocal of the diagonal, which every red-black kernel computes alike).
    #[stencil(dims = [2, 3], red_black = colour)]
    pub fn rbgs<T: Real>(e: InOut<T>, r: In<T>, l: Level<T>, colour: i64) {
        if !fixed(l) {
            let inv = 1.0 / diagonal(l);
            e = (r + coupling(e, l)) * inv;
        }
    }

    /// The residual `res = r - A e` of the level operator; 0 at fixed nodes.
    #[stencil(dims = [2, 3])]
    pub fn residual<T: Real>(e: In<T>, r: In<T>, res: Out<T>, l: Level<T>) {
        let ae = diagonal(l) * e - coupling(e, l);
        res = if fixed(l) { 0.0 } else { r - ae };
    }

    /// Row `i` of the tridiagonal system of a zebra line along `axis` (2D): lower,
    /// diagonal, upper coefficient and right-hand side, the other axis's neighbours moved
    /// to the right-hand side; mirror ghosts at Neumann and penalty ends double the inward
    /// coupling; a fixed node's row is the identity.
    #[stencil_fn]
    fn line_row<T: Real>(e: In<T>, r: In<T>, axis: i64, l: Level<T>) -> (T, T, T, T) {
        let (i, n, other) = (index(axis), extent(axis), 1 - axis);
        let (below, above) = mirrored(other, l.lo, l.hi, e[-unit(other)], e[unit(other)]);
        let diag = diagonal(l);
        let inside = -l.c[axis] * l.h2inv;
        let inward = -2.0 * l.c[axis] * l.h2inv;
        let lower = if i == n - 1 { inward } else { inside };
        let upper = if i == 0 { inward } else { inside };
        let lower = if i == 0 { 0.0 } else { lower };
        let upper = if i == n - 1 { 0.0 } else { upper };
        let rhs = r + l.c[other] * (below + above) * l.h2inv;
        if fixed(l) {
            (0.0, 1.0, 0.0, e)
        } else {
            (lower, diag, upper, rhs)
        }
    }

    /// Zebra line Gauss-Seidel along axis `axis` (0: x, 1: y): the lines of one colour
    /// solve their tridiagonal systems exactly, for problems strongly coupled along that
    /// axis.
    #[stencil(dims = 2, line = axis, red_black = colour, consts(axis = [0, 1]))]
    pub fn zebra<T: Real>(e: InOut<T>, r: In<T>, l: Level<T>, colour: i64, axis: i64) {
        let (lower, diag, upper, rhs) = line_row(e, r, axis, l);
        let across = 1 - axis;
        if side(index(across), extent(across), l.lo[across], l.hi[across]) != 0 {
            e = tridiagonal(lower, diag, upper, rhs);
        }
    }
}
