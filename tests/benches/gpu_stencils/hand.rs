//! The hand-written CUDA kernels of the GPU benchmark (`benchmarks/cuda/stencils.cu`,
//! loaded and launched through [`stencil_tests::bench::hand`]): the block shapes and grids
//! they are timed with, and the fastest shape of a set.

use super::median_time;
use stencil_runtime::cuda::{LaunchShape, Tiles};
use stencil_runtime::{Cuda, Real};
pub(crate) use stencil_tests::bench::hand::{Arg, Hand};
use stencil_tests::bench::R;

/// The fastest of `shapes` for `run(block)`; returns (seconds, shape).
pub(crate) fn best(
    cuda: &Cuda,
    shapes: &[[u32; 3]],
    mut run: impl FnMut([u32; 3]) -> R<()>,
) -> R<(f64, [u32; 3])> {
    let mut best = (f64::INFINITY, shapes[0]);
    for &s in shapes {
        let t = median_time(cuda, || run(s))?;
        if t < best.0 {
            best = (t, s);
        }
    }
    Ok(best)
}

/// The block shapes a hand-written kernel is timed with: the blocks the generated
/// kernels' full search tries for `dims` dimensions ([`LaunchShape::candidates`]).
pub(crate) fn hand_blocks(dims: usize) -> Vec<[u32; 3]> {
    LaunchShape::candidates(dims, Tiles::ONE, 1)
        .iter()
        .map(|s| s.block)
        .collect()
}

/// The grid of blocks `b` over domain `n`, one point per thread.
pub(crate) fn grid(n: &[usize], b: [u32; 3]) -> [u32; 3] {
    let mut g = [1u32; 3];
    for a in 0..n.len() {
        g[a] = n[a].div_ceil(b[a] as usize) as u32;
    }
    g
}

/// The points along the last axis per thread the tuned kernels exist for.
pub(crate) const TUNED_POINTS: [usize; 3] = [1, 2, 4];

/// Points along x per thread of a tuned kernel: one 16-byte vector.
pub(crate) fn vector_width<T: Real>() -> usize {
    16 / std::mem::size_of::<T>()
}

/// The grid of a tuned kernel over domain `n` with block `b`, `points` along the last
/// axis per thread.
pub(crate) fn tuned_grid<T: Real>(n: &[usize], b: [u32; 3], points: usize) -> [u32; 3] {
    let mut g = grid(n, b);
    g[0] = n[0].div_ceil(b[0] as usize * vector_width::<T>()) as u32;
    let last = n.len() - 1;
    g[last] = n[last].div_ceil(b[last] as usize * points) as u32;
    g
}
