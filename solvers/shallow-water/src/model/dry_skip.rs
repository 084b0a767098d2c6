//! Dry-block skipping of dense runs on a GPU: each step a map of the 16 x 16 blocks that
//! hold water (or border one, or lie on a side that feeds water in) is built on the
//! device, and the step's kernels run on those blocks only (`Backend::masked`).

use super::ShallowWater;
use crate::kernels::kp07;
use crate::{FloodError, Grid};
use stencil_runtime::{Backend, BlockMask, Field, Real};

/// Dry-block skipping: the levels of the wet-block map (the largest depth per 2 x 2,
/// 4 x 4, 8 x 8 and 16 x 16 cells), the last step's rule per block, and the mask the
/// step's launches follow.
pub(super) struct DrySkip<T: Real> {
    pub(super) levels: [Field<T>; 4],
    pub(super) previous: Field<T>,
    pub(super) mask: BlockMask<T>,
}

impl<T: Real> DrySkip<T> {
    fn new(backend: &Backend, grid: &Grid) -> Result<DrySkip<T>, FloodError> {
        let mut n = [grid.nx, grid.ny];
        let mut level = || {
            n = n.map(|k| k.div_ceil(2));
            Field::zeros_on(backend, &n, 1)
        };
        let levels = [level()?, level()?, level()?, level()?];
        let mask = BlockMask::new(backend, [grid.nx, grid.ny])?;
        // The first step computes every block.
        let previous = mask.field().to(backend)?;
        Ok(DrySkip {
            levels,
            previous,
            mask,
        })
    }
}

impl<T: Real> ShallowWater<T> {
    /// Turns dry-block skipping on or off (on by default on CUDA): each step, a map of
    /// where there is water is built on the device, and the step's kernels run only on
    /// blocks of 16 x 16 cells that hold water or border a block that does (or lie on a
    /// side that feeds water in). The results are the same either way.
    pub fn set_dry_skipping(&mut self, on: bool) -> Result<(), FloodError> {
        self.masked = None;
        self.skip = if on {
            Some(DrySkip::new(&self.backend, &self.grid)?)
        } else {
            None
        };
        Ok(())
    }

    /// With dry-block skipping on, the blocks the last step computed and the number of
    /// blocks; `None` when it is off.
    pub fn active_blocks(&self) -> Result<Option<(usize, usize)>, FloodError> {
        Ok(self
            .block_map()?
            .map(|on| (on.iter().filter(|&&b| b).count(), on.len())))
    }

    /// With dry-block skipping on, whether the last step computed each block of
    /// [`stencil_runtime::BLOCK_TILE`] cells, row by row from the south; `None` when it
    /// is off.
    pub fn block_map(&self) -> Result<Option<Vec<bool>>, FloodError> {
        let Some(skip) = &self.skip else {
            return Ok(None);
        };
        let on = skip.mask.field().interior()?;
        Ok(Some(on.iter().map(|&x| x != T::zero()).collect()))
    }

    /// The backend the step's kernels run on: restricted to the step's blocks while
    /// dry-block skipping is on.
    pub fn active_backend(&self) -> &Backend {
        self.masked.as_ref().unwrap_or(&self.backend)
    }

    /// Rebuilds the block mask from the present state (when skipping is on).
    pub(super) fn update_mask(&mut self) -> Result<(), FloodError> {
        let backend = &self.backend;
        let Some(skip) = self.skip.as_mut() else {
            return Ok(());
        };
        // The masked backend holds the mask: release it before rewriting.
        self.masked = None;
        let [first, ..] = &mut skip.levels;
        kp07::wet_pairs::launch(backend, &self.now[0], &self.bed, first)?;
        for k in 1..4 {
            let (fine, coarse) = skip.levels.split_at_mut(k);
            kp07::coarser::launch(backend, &fine[k - 1], &mut coarse[0])?;
        }
        let tiles = BlockMask::<T>::tiles([self.grid.nx, self.grid.ny]);
        for (axis, &n) in tiles.iter().enumerate() {
            if self.boundaries.periodic(axis) {
                skip.levels[3].wrap_periodic(backend, axis, n, 1)?;
            }
        }
        let b = &self.boundaries;
        kp07::block_mask::launch(
            backend,
            &skip.levels[3],
            &mut skip.previous,
            skip.mask.field_mut()?,
            b.west.kind(),
            b.east.kind(),
            b.south.kind(),
            b.north.kind(),
        )?;
        self.masked = Some(backend.masked(&skip.mask));
        Ok(())
    }
}
