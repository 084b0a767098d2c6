//! The CUDA device GPU tests run on, or the printed reason they skip: every GPU test
//! starts with `let Some(gpu) = gpu_or_skip() else { return };`.

use stencil_runtime::{Backend, Cuda};

/// Device 0, or `None` after printing why there is none.
pub fn cuda_or_skip() -> Option<Cuda> {
    match Cuda::new(0) {
        Ok(c) => Some(c),
        Err(why) => {
            println!("SKIPPED: this test needs a CUDA device: {why}");
            None
        }
    }
}

/// The decided launch shapes in the text of a tuning cache file (`key <TAB> shape`), not
/// the timed launches of unfinished trials (`key <TAB> trial shape seconds`).
pub fn decided_shapes(cache: &str) -> usize {
    cache.lines().filter(|l| !l.contains("\ttrial ")).count()
}

/// The backend of device 0, or `None` after printing why there is none.
pub fn gpu_or_skip() -> Option<Backend> {
    cuda_or_skip().map(Backend::Cuda)
}

/// Fixed launch shapes (`LaunchShape` syntax) that between them use every tile variant
/// (`kernels_gen::llvm::tile_variants`): vectors along x (`v`) of 1, 2 or 4 points per
/// thread along the last axis (`p`); several points without vectors, which only kernels
/// without vector entries (fields of integers) have (the others run such a shape's
/// default); blocks of one to three dimensions. GPU tests run their kernels under each,
/// beside shapes of their own.
pub const TILE_SHAPES: [&str; 10] = [
    "32x2x1p2",
    "32x4x1p4",
    "32x4x2p2",
    "32x4x1v4p1",
    "32x2x1v4p4",
    "32x4x1v2p2",
    "64x1x1v4p4",
    "32x2x2v2p4",
    "64x2x2v4p2",
    "128x1x1v2p1",
];
