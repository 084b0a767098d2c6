//! Grid transfers: full weighting and injection, bilinear and trilinear prolongation.

use stencil_runtime::prelude::*;

/// The kernels (see [`super`] for the grids, sides and operators they share).
#[stencils(helpers = [super::rows])]
pub mod kernels {
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
}
