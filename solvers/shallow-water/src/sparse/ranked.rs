//! A sparse run split over ranks (`mpirun -np N`, see the `stencil-ranks` crate): every
//! block of the domain present and the layout fixed, the blocks dealt to ranks along the
//! Morton curve; a rank steps its own blocks, its ghosts (its neighbours' blocks next to
//! them) filled before each halo exchange, and the CFL maximum and the survey all-reduced.
//! The steps are decided on the host. A rank's cells equal one rank's bit for bit
//! (`src/bin/sw-ranks-check.rs` under mpirun, `tests/ranks.rs`).
//!
//! Still to come: following the water (blocks added and freed across ranks, rebalanced),
//! devices (NCCL), overlap.

use super::SparseShallowWater;
use crate::model::{corner_field, initial_fields, own_stream, BED_HALO};
use crate::{FloodError, Setup, Survey};
use std::sync::Arc;
use stencil_ranks::{partition, Op, RankLayout, Ranks};
use stencil_runtime::{Backend, BlockField, BlockGrid, Real};

/// This rank's part of a run over ranks. (Without MPI `Ranks` is `Send` and `Sync`, and so
/// is a sparse run; with MPI a run stays on the thread that started MPI.)
pub(super) struct Distribution {
    ranks: Arc<Ranks>,
    /// This rank's blocks and ghosts.
    pub layout: RankLayout,
}

impl Distribution {
    /// Fills the ghost blocks of `fields` from their owners.
    pub fn fill_ghosts<T: Real>(
        &self,
        grid: &BlockGrid,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), FloodError> {
        Ok(self.layout.fill_ghosts(&self.ranks, grid, fields)?)
    }

    /// The largest of `value` over the ranks.
    pub fn all_max(&self, value: f64) -> f64 {
        let mut v = [value];
        self.ranks.all_reduce(&mut v, Op::Max);
        v[0]
    }

    /// Every rank's cells of the dense `fields` (row by row) made known to every rank,
    /// each cell its owner's value exactly (NaN included: an instability is reported
    /// where it is; see [`Ranks::gather_owned`]).
    pub fn gather(&self, owned: &[bool], fields: &mut [Vec<f64>]) {
        for f in fields.iter_mut() {
            self.ranks.gather_owned(owned, f);
        }
    }

    /// A survey of this rank's blocks made one of all the ranks' blocks.
    pub fn all_survey(&self, s: Survey) -> Survey {
        let mut sum = [s.volume];
        self.ranks.all_reduce(&mut sum, Op::Sum);
        let mut low = [s.min_depth];
        self.ranks.all_reduce(&mut low, Op::Min);
        let mut high = [s.max_depth, s.max_speed];
        self.ranks.all_reduce(&mut high, Op::Max);
        Survey {
            volume: sum[0],
            min_depth: low[0],
            max_depth: high[0],
            max_speed: high[1],
        }
    }
}

impl<T: Real> SparseShallowWater<T> {
    /// `setup` on `backend`, split over `ranks`: every block of the domain present, dealt
    /// to the ranks along the Morton curve; this rank holds its own blocks and, as ghosts,
    /// the blocks next to them. One rank alone ([`Ranks::single`]) holds every block.
    /// Periodic sides over several ranks are a [`FloodError::Config`].
    pub fn over_ranks(
        backend: &Backend,
        setup: &Setup,
        ranks: Arc<Ranks>,
    ) -> Result<SparseShallowWater<T>, FloodError> {
        let backend = &own_stream(backend)?;
        let (surface, q, p) = initial_fields::<T>(setup)?;
        let grid = *setup.terrain.grid();
        let corners = Arc::new(corner_field::<T>(&setup.terrain, &setup.boundaries));
        let geometry =
            *BlockGrid::new(&Backend::Cpu, &[grid.nx, grid.ny], &super::BLOCK, BED_HALO)?
                .geometry();
        let keys: Vec<_> = geometry.all_keys().collect();
        let owners = partition(&keys, &vec![1.0; keys.len()], ranks.size());
        let b = &setup.boundaries;
        let periodic = [b.periodic(0), b.periodic(1), false];
        let layout = RankLayout::with_periodic(&geometry, &keys, &owners, ranks.rank(), periodic);
        let mut flow = SparseShallowWater::from_state(
            backend,
            grid,
            &setup.boundaries,
            setup.physics,
            corners,
            [&surface, &q, &p],
            Some(Distribution { ranks, layout }),
        )?;
        flow.initial_volume = flow.survey()?.volume;
        Ok(flow)
    }

    /// The cells this rank computes (all of them without ranks), row by row from the
    /// south.
    pub fn owned_cells(&self) -> Vec<usize> {
        let mask = self.owned_mask();
        (0..mask.len()).filter(|&c| mask[c]).collect()
    }

    /// Per cell, row by row, whether this rank computes it.
    pub(super) fn owned_mask(&self) -> Vec<bool> {
        let g = self.grid;
        let geometry = *self.blocks.geometry();
        let owned: std::collections::HashSet<_> = self.list.keys().iter().copied().collect();
        (0..g.nx * g.ny)
            .map(|c| owned.contains(&geometry.key_of([c % g.nx, c / g.nx, 0])))
            .collect()
    }

    /// Dense per-cell `fields` of this rank made every rank's (see [`Distribution::gather`];
    /// nothing to do without ranks). Every rank must call it at the same point.
    pub(super) fn gathered(&self, mut fields: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
        if let Some(d) = &self.distribution {
            d.gather(&self.owned_mask(), &mut fields);
        }
        fields
    }
}
