//! How a sparse run follows the water: measuring which blocks are not dry, choosing the
//! blocks to add and free (at the end of a step, overlapping the device), and moving every
//! field to the new layout (see the parent module's text).

use super::layout::{dry_at, dry_surface, exchanges};
use super::{margin, SparseShallowWater};
use crate::kernels::kp07;
use crate::FloodError;
use stencil_runtime::blocks::{BlockKey, Relayout};
use stencil_runtime::{Backend, BlockList, Real};

impl<T: Real> SparseShallowWater<T> {
    /// Starts finding the blocks that are not dry (see the module's text); the next
    /// [`SparseShallowWater::regrid`] reads what was found.
    pub(super) fn measure(&mut self) -> Result<(), FloodError> {
        let [w, q, p, ..] = &self.progress.now;
        let away = &mut self.fluxes[0];
        self.measured_wet =
            kp07::activity::launch_blocks(&self.measure_on, &self.list, w, q, p, &self.bed, away)?;
        let margin = margin(self.regrid_every, self.regrid_lag);
        self.flags.start(&self.fluxes[0], &self.list, margin)?;
        self.measured_at = self.queued;
        Ok(())
    }

    /// After a [`SparseShallowWater::measure`] and the run's lag, chooses the blocks to
    /// add (those the water may reach before the layout after the next one) and to free
    /// (see the module's text); [`SparseShallowWater::regrid`] makes the change. Called at
    /// the end of a step, once its last launches are queued, the choice overlaps the
    /// device's work.
    pub(super) fn choose(&mut self) -> Result<(), FloodError> {
        if !self.flags.is_pending() || self.queued < self.measured_at + self.regrid_lag {
            return Ok(());
        }
        let start = std::time::Instant::now();
        let Some(flags) = self.flags.finish(&self.list)? else {
            return Ok(());
        };
        let mut wet_cells = match &self.measure_on {
            Backend::Cuda(c) => c.read_deferred()?.map_or(0.0, |v| v[0]),
            Backend::Cpu => self.measured_wet,
        };
        if let Some(d) = &self.distribution {
            wet_cells = d.all(wet_cells, stencil_ranks::Op::Sum);
        }
        self.wet_cell_steps += wet_cells * self.regrid_every as f64;
        let (add, remove) = self.chosen_change(flags);
        self.choosing += start.elapsed();
        if !(add.is_empty() && remove.is_empty()) {
            self.chosen = Some((add, remove));
        }
        Ok(())
    }

    /// Adds and frees the blocks [`SparseShallowWater::choose`] chose, if any.
    pub(super) fn regrid(&mut self) -> Result<(), FloodError> {
        let Some((add, remove)) = self.chosen.take() else {
            return Ok(());
        };
        let start = std::time::Instant::now();
        if self.distribution.is_some() {
            self.regrid_over_ranks(add, remove)?;
        } else {
            self.regrid_alone(add, remove)?;
        }
        self.peak_memory = self.peak_memory.max(self.memory());
        self.layout_changes.0 += 1;
        self.layout_changes.1 += start.elapsed();
        Ok(())
    }

    /// [`SparseShallowWater::regrid`] on one rank.
    fn regrid_alone(
        &mut self,
        add: Vec<BlockKey>,
        remove: Vec<BlockKey>,
    ) -> Result<(), FloodError> {
        if let Some(extent) = &mut self.extent {
            extent.retire(&self.blocks, &self.list, &remove)?;
        }
        let change = self.blocks.update(&add, &remove)?;
        self.follow(&change)?;
        if let Some(extent) = &mut self.extent {
            extent.follow(&self.blocks, &change)?;
        }
        self.list = BlockList::present(&self.blocks)?;
        self.exchanges = exchanges(&self.blocks, &self.boundaries, None)?;
        Ok(())
    }

    /// The changes of the present blocks so far, and the host's wall time spent on them
    /// (choosing excluded; moving the fields and planning the exchanges included, with
    /// any wait for the device they imply).
    pub fn layout_changes(&self) -> (u64, std::time::Duration) {
        self.layout_changes
    }

    /// The host's wall time spent choosing the blocks so far (reading the flags, which
    /// should not wait, included).
    pub fn choosing_time(&self) -> std::time::Duration {
        self.choosing
    }

    /// Every field follows a change of the blocks; added blocks are dry.
    pub(super) fn follow(&mut self, change: &Relayout) -> Result<(), FloodError> {
        let corners = self.corners.clone();
        let (nx, ny) = (self.grid.nx as isize, self.grid.ny as isize);
        let dry = move |p: [isize; 3]| {
            if (0..nx).contains(&p[0]) && (0..ny).contains(&p[1]) {
                T::from_f64(dry_surface(&corners, p[0] as usize, p[1] as usize))
            } else {
                T::zero()
            }
        };
        let blocks = &self.blocks;
        for state in [&mut self.progress.now, &mut self.progress.stage] {
            state[0].follow(blocks, change, dry.clone())?;
            for f in &mut state[1..] {
                f.follow_zeroed(blocks, change)?;
            }
        }
        for f in &mut self.fluxes {
            f.follow_zeroed(blocks, change)?;
        }
        let corners = self.corners.clone();
        self.bed
            .follow(blocks, change, move |p| corners.get(p).unwrap_or(T::zero()))?;
        self.dry.follow(
            blocks,
            change,
            dry_at(&self.corners, self.grid, &self.boundaries),
        )?;
        Ok(())
    }
}
