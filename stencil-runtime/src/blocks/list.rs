//! [`BlockList`]: the blocks one launch covers, whole or a box of each
//! ([`BlockRegion`]).

use super::geometry::Geometry;
use super::grid::{BlockGrid, BlockKey};
use crate::cpu::BlockRun;
use crate::cuda::memory::DeviceBuffer;
use crate::{Backend, Error};

/// Points along x at whose multiples a region starts ([`BlockList::regions`]): the
/// vectors device launches read rows in (4 values of f32, 2 of f64; 16 bytes) stay aligned.
pub const REGION_ALIGN: usize = 4;

/// A box of points of one block: its first point within the block and its extent (1 on
/// unused axes), for a launch over part of each block ([`BlockList::regions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRegion {
    /// The block.
    pub key: BlockKey,
    /// The box's first point, counted from the block's first point.
    pub start: [usize; 3],
    /// The box's points along each axis.
    pub extent: [usize; 3],
}

impl BlockRegion {
    /// The whole of block `key` of `block` points.
    pub fn whole(key: BlockKey, block: [usize; 3]) -> BlockRegion {
        BlockRegion {
            key,
            start: [0; 3],
            extent: block,
        }
    }
}

/// The blocks a launch covers, in the order their points run (and their reductions
/// combine): for the CPU, where each lies in the domain and in the arena; on a device, the
/// same as records the kernels read (one launch for all of them).
#[derive(Debug)]
pub struct BlockList {
    grid: u64,
    generation: u64,
    geometry: Geometry,
    /// The points of each block the launch covers along each axis: the block's extent,
    /// or a region's ([`BlockList::regions`]).
    extent: [usize; 3],
    runs: Vec<BlockRun>,
    keys: Vec<BlockKey>,
    /// Four `i64` per block: its origin along x, y, z and its slot's element offset.
    records: Option<DeviceBuffer>,
}

impl BlockList {
    /// The blocks `keys` of `grid` (each must be present here, all of one level), in that
    /// order. Kernels launched over the list see that level's domain.
    pub fn new(grid: &BlockGrid, keys: &[BlockKey]) -> Result<BlockList, Error> {
        BlockList::of_level(grid, keys.first().map_or(0, |k| k.level), keys)
    }

    /// The blocks `keys` of level `level` (an empty list still has the level's sizes).
    fn of_level(grid: &BlockGrid, level: u8, keys: &[BlockKey]) -> Result<BlockList, Error> {
        let block = grid.geometry().at_level(level).block;
        let whole: Vec<BlockRegion> = keys.iter().map(|&k| BlockRegion::whole(k, block)).collect();
        BlockList::of_regions(grid, level, block, &whole)
    }

    /// The boxes `regions` of blocks of `grid` (each block present here, all of one level,
    /// every region of the same extent, inside its block, starting at a multiple of
    /// [`REGION_ALIGN`] along x), in that order: a launch over
    /// the list computes those points only, where a launch over whole blocks would compute
    /// the blocks' points (say, a block's points that read no ghost while the ghosts
    /// travel, its others after). Kernels see the level's domain, as over whole blocks.
    /// An empty list covers nothing (with the level 0's block as its extent).
    pub fn regions(grid: &BlockGrid, regions: &[BlockRegion]) -> Result<BlockList, Error> {
        let level = regions.first().map_or(0, |r| r.key.level);
        let g = grid.geometry().at_level(level);
        let extent = regions.first().map_or(g.block, |r| r.extent);
        for r in regions {
            if !r.start[0].is_multiple_of(REGION_ALIGN) {
                return Err(Error::InvalidField(format!(
                    "block region {r:?} starts {} points into its block along x: device launches read rows in vectors of up to {REGION_ALIGN} points, so start regions at multiples of {REGION_ALIGN} along x",
                    r.start[0]
                )));
            }
            let fits = (0..3).all(|a| r.extent[a] > 0 && r.start[a] + r.extent[a] <= g.block[a]);
            if r.extent != extent || !fits {
                return Err(Error::InvalidField(format!(
                    "block region {r:?} is not of the list's extent {extent:?} inside a block of {:?} points; a list's regions share one extent and lie inside their blocks",
                    g.block
                )));
            }
        }
        BlockList::of_regions(grid, level, extent, regions)
    }

    /// `regions` in lists of one extent each ([`BlockList::regions`]), in the order each
    /// extent first appears, the regions of a list in their order in `regions`.
    pub fn grouped(grid: &BlockGrid, regions: &[BlockRegion]) -> Result<Vec<BlockList>, Error> {
        let mut groups: Vec<Vec<BlockRegion>> = Vec::new();
        for &r in regions {
            match groups.iter_mut().find(|g| g[0].extent == r.extent) {
                Some(g) => g.push(r),
                None => groups.push(vec![r]),
            }
        }
        groups.iter().map(|g| BlockList::regions(grid, g)).collect()
    }

    /// The boxes `regions` (of `extent` points, inside their blocks) of level `level`.
    fn of_regions(
        grid: &BlockGrid,
        level: u8,
        extent: [usize; 3],
        regions: &[BlockRegion],
    ) -> Result<BlockList, Error> {
        let g = grid.geometry().at_level(level);
        let mut runs = Vec::with_capacity(regions.len());
        for &BlockRegion { key, start, .. } in regions {
            if key.level != level {
                return Err(Error::InvalidField(format!(
                    "a block list holds blocks of one level: {key:?} is of level {}, the first of level {level}; make a list per level",
                    key.level
                )));
            }
            let slot = grid.slot(key).ok_or_else(|| {
                Error::InvalidField(format!(
                    "block {key:?} is not present here; a launch covers present blocks of this rank only"
                ))
            })?;
            let origin = g.origin(key);
            // The region's first point's element from the slot's point (0, 0, 0).
            let into = g.element(start.map(|v| v as isize)) - g.interior_offset();
            runs.push(BlockRun {
                origin: [0, 1, 2].map(|a| origin[a] + start[a]),
                shift: (slot * g.slot_len() + into) as isize,
            });
        }
        let records = match grid.backend() {
            Backend::Cpu => None,
            Backend::Cuda(c) => {
                let flat: Vec<i64> = runs
                    .iter()
                    .flat_map(|r| {
                        [
                            r.origin[0] as i64,
                            r.origin[1] as i64,
                            r.origin[2] as i64,
                            r.shift as i64,
                        ]
                    })
                    .collect();
                Some(DeviceBuffer::from_slice(c.stream(), &flat, "a block list")?)
            }
        };
        Ok(BlockList {
            grid: grid.id(),
            generation: grid.generation(),
            geometry: g,
            extent,
            runs,
            keys: regions.iter().map(|r| r.key).collect(),
            records,
        })
    }

    /// Every block present here, in slot order (the grid must have one level; see
    /// [`BlockList::level`]).
    pub fn present(grid: &BlockGrid) -> Result<BlockList, Error> {
        let keys: Vec<BlockKey> = grid.blocks().map(|(_, b)| b.key).collect();
        BlockList::new(grid, &keys)
    }

    /// Every block of level `level` present here, in slot order.
    pub fn level(grid: &BlockGrid, level: u8) -> Result<BlockList, Error> {
        grid.geometry().check_key(BlockKey::at(level, [0; 3]))?;
        BlockList::of_level(grid, level, &grid.level_keys(level))
    }

    /// The blocks, in launch order.
    pub fn keys(&self) -> &[BlockKey] {
        &self.keys
    }

    /// The number of blocks.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The grid's sizes.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The points of each listed block a launch covers along each axis: the blocks'
    /// extent, or the regions' ([`BlockList::regions`]).
    pub fn extent(&self) -> [usize; 3] {
        self.extent
    }

    /// Whether the list covers whole blocks (not regions of them).
    pub fn covers_whole_blocks(&self) -> bool {
        self.extent == self.geometry.block
    }

    /// What generated CPU code covers.
    pub fn cpu_over(&self) -> crate::cpu::Over<'_> {
        crate::cpu::Over::Blocks {
            block: self.extent,
            runs: &self.runs,
        }
    }

    /// Where each block lies in the domain and in the arena, in launch order.
    pub(crate) fn runs(&self) -> &[BlockRun] {
        &self.runs
    }

    /// Whether the list was made for the grid's present layout.
    pub(crate) fn layout(&self) -> (u64, u64) {
        (self.grid, self.generation)
    }

    /// The device address of the records (`None` for a CPU grid).
    pub(crate) fn device_records(&self) -> Option<u64> {
        self.records.as_ref().map(|b| b.ptr)
    }

    /// Checks a field against the list and a kernel reading `halo` points around each
    /// point of its `dims`-dimensional domain.
    pub fn check_field<T: crate::Real>(
        &self,
        kernel: &'static str,
        dims: usize,
        param: &'static str,
        halo: usize,
        field: &super::BlockField<T>,
    ) -> Result<(), Error> {
        if self.geometry.dims != dims {
            return Err(Error::Dimensions {
                kernel,
                field: param,
                have: self.geometry.dims,
                want: dims,
            });
        }
        field.check_layout(kernel, param, self.grid, self.generation)?;
        if self.geometry.halo < halo {
            return Err(Error::Halo {
                kernel,
                field: param,
                have: self.geometry.halo,
                needed: halo,
            });
        }
        Ok(())
    }
}
