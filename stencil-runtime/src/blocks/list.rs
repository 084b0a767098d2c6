//! [`BlockList`]: the blocks one launch covers.

use super::geometry::Geometry;
use super::grid::{BlockGrid, BlockKey};
use crate::cpu::BlockRun;
use crate::cuda::memory::DeviceBuffer;
use crate::{Backend, Error};

/// The blocks a launch covers, in the order their points run (and their reductions
/// combine): for the CPU, where each lies in the domain and in the arena; on a device, the
/// same as records the kernels read (one launch for all of them).
#[derive(Debug)]
pub struct BlockList {
    grid: u64,
    generation: u64,
    geometry: Geometry,
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
        let g = grid.geometry().at_level(level);
        let mut runs = Vec::with_capacity(keys.len());
        for &key in keys {
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
            runs.push(BlockRun {
                origin: g.origin(key),
                shift: (slot * g.slot_len()) as isize,
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
            runs,
            keys: keys.to_vec(),
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

    /// What generated CPU code covers.
    pub fn cpu_over(&self) -> crate::cpu::Over<'_> {
        crate::cpu::Over::Blocks {
            block: self.geometry.block,
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
