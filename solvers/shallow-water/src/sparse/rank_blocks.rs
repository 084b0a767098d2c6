//! Which blocks a run over ranks holds ([`RankBlocks`]) and, with every block present,
//! how large they are ([`ranked_block`]): larger blocks where a rank holds many cells.

use stencil_runtime::Backend;

/// Which blocks a run over ranks holds ([`super::SparseShallowWater::over_ranks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankBlocks {
    /// Every block of the domain, for good (the blocks of 256 x 64 cells from a million
    /// cells per rank).
    Every,
    /// Every block of the domain, for good, blocks of this many cells along x and y
    /// (each a whole number of the devices' launch tiles: multiples of 64 x 32 are).
    EveryOf([usize; 2]),
    /// The blocks a run on one rank would hold, following the water (64 x 32 cells).
    FollowWater,
}

/// Cells per rank from which a run over ranks on devices takes [`LARGE_BLOCK`]s.
const LARGE_FROM: usize = 64 * LARGE_BLOCK[0] * LARGE_BLOCK[1];

/// Cells per rank from which a run over ranks on the CPU takes [`LARGE_BLOCK`]s (two
/// each): on the 2-core build machine they stepped 1.19 to 1.52 times as fast as the
/// sparse runs' blocks from 57 600 to 524 288 cells per rank, over 2 and 3 ranks
/// (`sw-scaling NX NY STEPS --cpu --blocks 64x32,256x64`, 2026-11-28).
const LARGE_FROM_ON_CPU: usize = 2 * LARGE_BLOCK[0] * LARGE_BLOCK[1];

/// Cells per rank from which a run over ranks takes [`HUGE_BLOCK`]s.
const HUGE_FROM: usize = HUGE_BLOCK[0] * HUGE_BLOCK[1];

/// The blocks of a run over ranks with 64 million cells or more per rank: a rank's blocks
/// run at the dense solver's speed (on an H100, 8192^2 cells on one such block take 7.78
/// ms per step against 7.70 dense, and 8.93 on blocks of 256 x 64; 16384 x 8192 over two
/// devices 7.97 ms against 8.18 on blocks of 1024 x 512 and 9.07 on 256 x 64:
/// `docs/scaling.md`). A ghost is a whole block, so a rank holds one such block per
/// neighbouring rank too.
const HUGE_BLOCK: [usize; 2] = [8192, 8192];

/// The blocks of a run over ranks with many cells per rank: every block is present, so
/// larger blocks cost nothing in memory and halve the halo points the exchanges fill
/// (about 9% of the cells against 20% for the sparse runs' blocks).
const LARGE_BLOCK: [usize; 2] = [256, 64];

/// The block size of a run of `cells` over `ranks` ranks on `backend`: [`HUGE_BLOCK`]
/// from [`HUGE_FROM`] cells per rank, [`LARGE_BLOCK`] from [`LARGE_FROM`] cells per rank
/// on devices (64 such blocks each) and [`LARGE_FROM_ON_CPU`] on the CPU, else the sparse
/// runs' [`super::BLOCK`].
pub(super) fn ranked_block(cells: usize, ranks: usize, backend: &Backend) -> [usize; 2] {
    let per_rank = cells / ranks.max(1);
    let large_from = match backend {
        Backend::Cpu => LARGE_FROM_ON_CPU,
        Backend::Cuda(_) => LARGE_FROM,
    };
    if per_rank >= HUGE_FROM {
        HUGE_BLOCK
    } else if per_rank >= large_from {
        LARGE_BLOCK
    } else {
        super::BLOCK
    }
}
