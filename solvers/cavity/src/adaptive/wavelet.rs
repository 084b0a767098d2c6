//! The interpolating wavelet transform of a level, in the stencil language.
//!
//! On a vertex-centred level, the points with every index even are the next coarser
//! level's points (point `c` there is point `2c` here); the others are *predicted* from
//! them, axis by axis, and their *details* are what the prediction misses:
//!
//! - predict: `P(u)` at a point odd along x is `(9 (u[-1] + u[1]) - (u[-3] + u[3])) / 16`
//!   (cubic) or `(u[-1] + u[1]) / 2` (linear), reading only even points; along y the same;
//!   odd along both, the product of the two (the cubic through a 4 x 4 patch of even
//!   points);
//! - forward ([`detail`]): `d = u - P(u)` at odd points, 0 at even ones;
//! - inverse ([`reconstruct`]): `u = d + P(c)` at odd points and `c` at even ones, where
//!   `c` holds the coarser level's values at the even points.
//!
//! The weights are [`stencil_runtime::blocks::Predictor`]'s, which fills halos from a
//! coarser level; past the domain's sides the halos hold the cubic extrapolation
//! ([`stencil_runtime::blocks::Side::Extrapolate`]), so next to a wall the symmetric
//! formula here is the one-sided cubic there. A level is coarsened (its details
//! dropped) where every detail is below eps: [`classify`] marks the points whose details
//! exceed eps and a fraction of it, and a block's flags say whether any does.

use stencil_runtime::prelude::*;

#[stencils]
pub mod transform {
    /// The prediction, along direction `d`, of the point at offset `s` from the even
    /// points at `s ± d` and `s ± 3d`.
    #[stencil_fn]
    fn along<T: Real>(u: In<T>, s: (i64, i64), d: (i64, i64), cubic: bool) -> T {
        if cubic {
            0.0625 * (9.0 * (u[s + d] + u[s - d]) - (u[s + 3 * d] + u[s - 3 * d]))
        } else {
            0.5 * (u[s + d] + u[s - d])
        }
    }

    /// The prediction of the point from the even points around it (the point itself
    /// where every index is even).
    #[stencil_fn]
    fn predicted<T: Real>(u: In<T>, cubic: bool) -> T {
        let x = (1, 0);
        let y = (0, 1);
        let odd_x = index(0) % 2 == 1;
        let odd_y = index(1) % 2 == 1;
        if odd_x && odd_y {
            // Along x on the rows at ±1 and ±3 along y, then along y.
            let near = along(u, y, x, cubic) + along(u, -y, x, cubic);
            if cubic {
                let far = along(u, 3 * y, x, cubic) + along(u, -3 * y, x, cubic);
                0.0625 * (9.0 * near - far)
            } else {
                0.5 * near
            }
        } else if odd_x {
            along(u, (0, 0), x, cubic)
        } else if odd_y {
            along(u, (0, 0), y, cubic)
        } else {
            u
        }
    }

    /// The forward transform of a level: `d = u - P(u)` (0 at the even points, which
    /// are the coarser level's).
    #[stencil]
    pub fn detail<T: Real>(u: In<T>, d: Out<T>, cubic: bool) {
        d = u - predicted(u, cubic);
    }

    /// The inverse transform of a level: `u = d + P(c)` at odd points, `c` at even ones
    /// (`c` holds the coarser level's values at the even points; its odd points are not
    /// read).
    #[stencil]
    pub fn reconstruct<T: Real>(c: In<T>, d: In<T>, u: Out<T>, cubic: bool) {
        let even = index(0) % 2 == 0 && index(1) % 2 == 0;
        u = if even { c } else { d + predicted(c, cubic) };
    }

    /// Marks the points off the walls whose detail exceeds `eps` (`significant` = 1)
    /// and `coarsening * eps` (`kept` = 1); both 0 elsewhere. A NaN detail is
    /// significant. (A wall's values follow from the inside: the wall vorticity from the
    /// stream function, at each level's spacing, so its details say nothing of the flow.)
    #[stencil(dims = 2)]
    pub fn classify<T: Real>(d: In<T>, significant: Out<T>, kept: Out<T>, eps: T, coarsening: T) {
        let (i, j) = (index(0), index(1));
        let wall = i == 0 || j == 0 || i == extent(0) - 1 || j == extent(1) - 1;
        let size = d.abs();
        let nan = d != d;
        significant = if (size > eps || nan) && !wall {
            1.0
        } else {
            0.0
        };
        kept = if (size > coarsening * eps || nan) && !wall {
            1.0
        } else {
            0.0
        };
    }

    /// A copy (`out = u`): one level of a block field into another field.
    #[stencil(dims = 2)]
    pub fn copy<T: Real>(u: In<T>, out: Out<T>) {
        out = u;
    }
}
