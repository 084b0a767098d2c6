//! The passes that combine a reduction's per-block partials on the device, written in the
//! stencil language: each pass is a 1D reduction over the previous pass's partials, run
//! with blocks of 1024 threads until one value remains. The order of combination is fixed
//! by the launch shapes, so results do not vary from run to run.

use crate::stencils;

#[stencils]
pub(crate) mod kernels {
    /// Sum of partials.
    #[stencil(dims = 1)]
    pub fn sum<T: Real>(partial: In<T>, total: Sum<T>) {
        total.reduce(partial);
    }

    /// Largest partial.
    #[stencil(dims = 1)]
    pub fn max<T: Real>(partial: In<T>, largest: Max<T>) {
        largest.reduce(partial);
    }

    /// Smallest partial.
    #[stencil(dims = 1)]
    pub fn min<T: Real>(partial: In<T>, smallest: Min<T>) {
        smallest.reduce(partial);
    }
}
