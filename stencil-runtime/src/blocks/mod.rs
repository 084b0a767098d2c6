//! Block grids: domains built from fixed-size blocks that exist only where needed.
//!
//! A [`BlockGrid`] tiles a 1D, 2D or 3D domain by blocks of fixed size (the grid's
//! choice, e.g. 32 x 32 or 16 x 16 x 16 points) and names the blocks that are *present*,
//! each keyed by ([level](BlockKey::level), index) and owned by this process or another
//! rank ([`Owner`]). A [`BlockField`] holds values on the present blocks only, in one
//! allocation (an arena of one slot per block, each slot the block and its halo); memory
//! follows the present blocks as they are added and removed ([`BlockGrid::update`],
//! [`BlockField::follow`]).
//!
//! Kernels of the language run on block grids unchanged: every `#[stencil]` point
//! kernel's module has `launch_blocks(backend, &list, fields..)` beside `launch`, which
//! runs the kernel over the blocks of a [`BlockList`] (all present blocks, or some, or
//! a box of each: [`BlockList::regions`]) in one launch: on the CPU, rows of the blocks in parallel; on a device, one thread block
//! per tile of a block, the tiles of all listed blocks in one grid, reading the list's
//! records (origin and slot). Indices, extents and boundary tests inside the kernel are
//! those of the whole domain, so a kernel gives the same values on a block grid as on a
//! dense field. [`HaloExchange`] fills every block's halo (from neighbours, from the
//! domain's side rules, or by the rule for absent neighbours) in one launch.
//! [`BlockField::flags`] tells per block where a field is non-zero ([`BlockFlags`]), so a
//! solver can choose which blocks to keep without reading the field back.
//!
//! A grid may have several levels ([`BlockGrid::with_levels`]), each halving the spacing
//! of the one before; a launch covers the blocks of one level ([`BlockList::level`]) and
//! sees that level's domain. On vertex-centred levels ([`Refinement::Vertex`]) halos
//! next to an absent neighbour may be predicted from the coarser level
//! ([`Absent::Coarser`]), and [`LevelTransfer`] restricts fine values to the coarse copies
//! beneath them and predicts new fine blocks from coarse ones.

pub mod adapt;
mod arena;
mod dense;
mod field;
mod flags;
mod geometry;
mod grid;
mod halo;
mod levels;
mod list;
mod pack;
pub mod predict;

pub use adapt::{plan_adaptation, Adaptation, BlockMeasure};
pub use field::BlockField;
pub use flags::{BlockFlags, FlagsReader};
pub use geometry::{Geometry, Refinement};
pub use grid::{BlockGrid, BlockInfo, BlockKey, Owner, Relayout};
pub use halo::{Absent, HaloExchange, HaloRule, HaloWidths, Side};
pub use levels::LevelTransfer;
pub use list::{BlockList, BlockRegion, REGION_ALIGN};
pub use pack::PointPack;
pub use predict::Predictor;
