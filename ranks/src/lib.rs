//! Several ranks for block grids: the first layer of running one program as many
//! processes (`mpirun -np N program ...`), one per device or CPU.
//!
//! - [`Ranks`]: which rank this process is, of how many; values all-reduced over the
//!   ranks; messages between ranks; stopping every rank when one fails. Built with the
//!   `mpi` feature it uses MPI when started by `mpirun`; otherwise (and always without
//!   the feature) a program is one rank, as before.
//! - [`partition`]: the present blocks of a grid dealt to ranks along a space-filling
//!   (Morton) curve, so that each rank's blocks lie together, balancing their weights.
//! - [`RankLayout`]: what one rank holds of a partitioned grid: its own blocks and, as
//!   *ghosts*, the other ranks' blocks next to them. A rank's [`stencil_runtime::BlockGrid`]
//!   holds both; kernels launch over its own blocks only
//!   ([`RankLayout::owned_list`]); [`RankLayout::fill_ghosts`] brings the ghosts' values
//!   from their owners (one message per neighbouring rank), after which the grid's own
//!   [`stencil_runtime::HaloExchange`] fills every halo as on one rank. A rank's results
//!   are then those of one rank holding everything, bit for bit.
//!
//! [`GhostExchange`] is that fill planned once for a set of fields: on the CPU its
//! messages go through MPI; on devices (one per rank) the points are packed on the
//! device, sent through NCCL and unpacked there, with no wait on the host; its
//! [`GhostExchange::start`] and [`GhostExchange::finish`] let the blocks that read no ghost
//! ([`RankLayout::inner`]) be computed while the ghosts travel on a stream of their own;
//! with blocks so large that a rank holds few, [`RankLayout::overlap_regions`] cuts the
//! blocks next to ghosts so that all but a strip along those sides is computed meanwhile.
//!
//! Periodic axes wrap across ranks ([`RankLayout::with_periodic`]). Shallow water runs on
//! this layer (`SparseShallowWater::over_ranks`).
//!
//! [`Slabs`] is the other decomposition: a dense grid cut along its last axis into slabs
//! of consecutive planes, one per rank, with ghost planes exchanged at the cuts and the
//! slabs gathered into a whole grid on every rank. The multigrid Poisson solver runs over ranks
//! on it (`multigrid::Solver::on_ranks`). Still to come (see the multi-GPU issue): blocks
//! that move between ranks.

mod comm;
mod ghosts;
mod launch;
mod layout;
mod overlap;
mod partition;
mod slabs;

pub use comm::{Op, Ranks, RanksError};
pub use ghosts::{GhostExchange, HALO_PRIORITY_ENV};
pub use launch::{check_program, failure_within, mpirun, ok_lines, output_within, success_within};
pub use layout::{LayoutError, RankLayout};
pub use partition::{morton, partition};
pub use slabs::{first_difference, Slabs};
