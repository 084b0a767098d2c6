//! Every kernel of the multigrid solvers, in the stencil language.
//!
//! Grids are vertex-centred: a level of `2^k + 1` nodes per axis stores every node,
//! boundary nodes included, as its interior, with a halo of one ghost layer that kernels
//! read only where a selection discards it (the mirrored neighbour of a Neumann node is
//! read from inside instead). Each side has a boundary kind, an `i64` chosen at run time
//! (see [`crate::Boundary`]): 0 Dirichlet imposed directly (the node is fixed), 1
//! homogeneous Neumann (mirror ghost), 2 Dirichlet by penalty (mirror ghost plus
//! `kappa / h^2 (u - g)`, with `kappa g / h^2` carried by the right-hand side), 3 periodic.
//! A level kernel takes its operator and sides as one [`rows::Level`] group: the
//! operator's coefficients `c`, one per axis, `1/h^2`, the penalty weight, and the kinds
//! of the low and high sides of every axis, `lo` and `hi`.
//!
//! The operator is the anisotropic Laplacian `-(sum over axes a of c_a u_aa)` (`c_a = 1`
//! for Poisson), discretised by the 5- or 7-point stencil on the levels of the hierarchy;
//! the defect-correction residuals use 2nd, 4th or 6th-order stencils on the finest grid.
//! Kernels written once per axis serve 2D and 3D (`dims = [2, 3]`); the fused kernels of
//! the 2D Dirichlet levels have a module of their own.
//!
//! The helpers that say which side a node lies on and what the operator's row there is
//! are the library [`rows`], shared by the modules of kernels; [`mg`] names every kernel.

use stencil_runtime::prelude::*;

mod defects;
mod fused;
mod smoothers;
mod transfers;

/// Every kernel of the multigrid solvers, whichever module defines it, and the groups
/// of values they take ([`Level`], [`Dirichlet`]).
pub mod mg {
    pub use super::defects::kernels::*;
    pub use super::fused::kernels::*;
    pub use super::rows::Level;
    pub use super::smoothers::kernels::*;
    pub use super::transfers::kernels::*;
}

/// Sides, mirrors and the rows of the operator: the helpers the kernels share.
#[stencil_helpers]
pub mod rows {
    /// A level's operator and sides, as the level kernels take them.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Level<T> {
        /// The operator's coefficient along each axis.
        pub c: Axes<T>,
        /// `1 / h^2`.
        pub h2inv: T,
        /// The penalty weight of penalty sides.
        pub kappa: T,
        /// The boundary kind of the low side of each axis.
        pub lo: Axes<i64>,
        /// The boundary kind of the high side of each axis.
        pub hi: Axes<i64>,
    }

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

    /// Whether the node is fixed: on a Dirichlet side imposed directly.
    #[stencil_fn]
    fn fixed<T: Real>(l: Level<T>) -> bool {
        on_side(l.lo, l.hi, 0)
    }

    /// The diagonal of the node's row, `(2 sum c_a + kappa on a penalty side) / h^2`.
    #[stencil_fn]
    fn diagonal<T: Real>(l: Level<T>) -> T {
        let mut sum: T = 0.0;
        for a in 0..ndims() {
            sum = add_axis(a, sum, l.c[a]);
        }
        let penalty = if on_side(l.lo, l.hi, 2) { l.kappa } else { 0.0 };
        (2.0 * sum + penalty) * l.h2inv
    }

    /// The node's coupling to its neighbours, `sum c_a (e below + e above) / h^2`, the
    /// mirror image taken beyond a Neumann or penalty side.
    #[stencil_fn]
    fn coupling<T: Real>(e: In<T>, l: Level<T>) -> T {
        let mut sum: T = 0.0;
        for a in 0..ndims() {
            let (below, above) = mirrored(a, l.lo, l.hi, e[-unit(a)], e[unit(a)]);
            sum = add_axis(a, sum, l.c[a] * (below + above));
        }
        sum * l.h2inv
    }

    /// [`coupling`] of `u + e` (in f64), for the defect after a correction.
    #[stencil_fn]
    fn corrected_coupling<T: Real>(u: In<f64>, e: In<T>, l: Level<f64>) -> f64 {
        let mut sum: f64 = 0.0;
        for a in 0..ndims() {
            let below = u[-unit(a)] + e[-unit(a)] as f64;
            let above = u[unit(a)] + e[unit(a)] as f64;
            let (below, above) = mirrored(a, l.lo, l.hi, below, above);
            sum = add_axis(a, sum, l.c[a] * (below + above));
        }
        sum * l.h2inv
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
}
