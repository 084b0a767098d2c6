//! [`Flow`]: a simulation stored densely or on the blocks that hold water, behind one
//! interface, with the flood's extent (largest depth, arrival time) tracked on the
//! backend. What [`crate::Run`] drives.

use crate::kernels::kp07;
use crate::model::{cell_field, CellFields};
use crate::{
    FloodError, Grid, Physics, RankBlocks, SavedState, Setup, ShallowWater, SparseShallowWater,
    Survey,
};
use stencil_runtime::{Backend, Field, Real, Value};

/// How a run stores its domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Every cell, in dense fields.
    Dense,
    /// Only the 64 x 32 blocks with water and their neighbours (a block grid): memory
    /// and work follow the water.
    Sparse,
    /// Sparse where it pays: when at the start at most half of the domain's blocks
    /// would be present; else dense (see [`Storage::choose`]).
    Auto,
}

impl Storage {
    /// The storage named `name` (`dense`, `sparse` or `auto`).
    pub fn from_name(name: &str) -> Result<Storage, FloodError> {
        match name {
            "dense" => Ok(Storage::Dense),
            "sparse" => Ok(Storage::Sparse),
            "auto" => Ok(Storage::Auto),
            other => Err(FloodError::Config {
                name: "storage".into(),
                value: format!("`{other}`"),
                expected: "dense, sparse or auto".into(),
            }),
        }
    }

    /// Dense or sparse for `setup` (on any backend). `Auto` is sparse when the blocks a
    /// sparse run would start with (the wet ones and their neighbours) are at most half of
    /// all blocks, and some. Measured on Malpasset (docs/benchmarks.md): on a 2-core CPU a sparse
    /// run takes a third to a sixth of the dense time; on an H200 it took 0.96 times the
    /// time of the dense run with dry-block skipping that it replaced at 5 m (6.4 million
    /// cells), 1.07 times at 15 m (0.7 million, f32).
    pub fn choose(self, setup: &Setup, _backend: &Backend) -> Result<Storage, FloodError> {
        match self {
            Storage::Auto => {
                let (present, all) = crate::sparse::starting_blocks(setup)?;
                // With no block at all a sparse run has no step to take (its first time
                // step is not a number, read as an instability): a dry domain runs dense.
                Ok(if present > 0 && 2 * present <= all {
                    Storage::Sparse
                } else {
                    Storage::Dense
                })
            }
            chosen => Ok(chosen),
        }
    }
}
/// `$body` with `$flow` bound to the simulation of a [`Flow`] of either storage (the
/// `either::for_both!` idiom: the two simulations share these methods, not a type).
macro_rules! for_both {
    ($value:expr, $flow:ident => $body:expr) => {
        match $value {
            Flow::Dense { flow: $flow, .. } => $body,
            Flow::Sparse($flow) => $body,
        }
    };
}

/// A simulation in precision `T`, dense or sparse, tracking the flood's extent.
// One value per run: the variants' sizes differing costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Flow<T: Real> {
    /// Dense fields, the extent in two more.
    Dense {
        /// The simulation.
        flow: ShallowWater<T>,
        /// The flood's extent.
        extent: DenseExtent<T>,
    },
    /// The blocks with water, the extent kept by the simulation (it follows the blocks).
    Sparse(SparseShallowWater<T>),
}

/// The key of the dense runs' recorded steps that record the flood's extent
/// ([`ShallowWater::advance_replaying`]).
const EXTENT_AFTER_STEP: std::num::NonZeroU64 = std::num::NonZeroU64::MIN;

/// A dense run's flood extent, in two fields of the grid's cells on its backend.
pub struct DenseExtent<T: Real> {
    /// The largest depth per cell.
    pub deepest: Field<T>,
    /// The time the depth first exceeded the arrival depth (negative: not yet).
    pub arrival: Field<T>,
    /// That depth (m).
    pub arrival_depth: f64,
}

impl<T: Real> DenseExtent<T> {
    /// Records `flow`'s state at `time` (held on its backend): the largest depth and the
    /// arrival time above the arrival depth.
    fn record(&mut self, flow: &ShallowWater<T>, time: &Value<T>) -> Result<(), FloodError> {
        let (w, bed) = flow.surface_and_bed();
        let wet = T::from_f64(self.arrival_depth);
        let (deepest, arrival) = (&mut self.deepest, &mut self.arrival);
        kp07::track::launch(flow.backend(), w, bed, deepest, arrival, time, wet)?;
        Ok(())
    }
}

impl<T: Real> Flow<T> {
    /// `setup` on `backend` in `storage` (`Auto` decided by [`Storage::choose`]),
    /// water counting as arrived above `arrival_depth`.
    pub fn new(
        backend: &Backend,
        setup: &Setup,
        storage: Storage,
        arrival_depth: f64,
    ) -> Result<Flow<T>, FloodError> {
        let flow = match storage.choose(setup, backend)? {
            Storage::Sparse => {
                let mut flow = SparseShallowWater::new(backend, setup)?;
                flow.track_flood(arrival_depth)?;
                Flow::Sparse(flow)
            }
            _ => {
                let flow = ShallowWater::new(backend, setup)?;
                let g = *flow.grid();
                // On the simulation's own stream, with its tracking launches.
                let deepest = Field::zeros_on(flow.backend(), &[g.nx, g.ny], 0)?;
                let arrival = Field::from_fn(&[g.nx, g.ny], 0, |_| T::from_f64(-1.0));
                let extent = DenseExtent {
                    arrival: arrival.to(flow.backend())?,
                    deepest,
                    arrival_depth,
                };
                Flow::Dense { flow, extent }
            }
        };
        Ok(flow)
    }

    /// `setup` on `backend` split over `ranks`, water counting as arrived above
    /// `arrival_depth` ([`SparseShallowWater::over_ranks`]): on blocks that follow the
    /// water where `storage` is sparse, else on every block.
    pub fn over_ranks(
        backend: &Backend,
        setup: &Setup,
        ranks: std::sync::Arc<stencil_ranks::Ranks>,
        storage: Storage,
        arrival_depth: f64,
    ) -> Result<Flow<T>, FloodError> {
        let blocks = match storage.choose(setup, backend)? {
            Storage::Sparse => RankBlocks::FollowWater,
            _ => RankBlocks::Every,
        };
        let mut flow = SparseShallowWater::over_ranks(backend, setup, ranks, blocks)?;
        flow.track_flood(arrival_depth)?;
        Ok(Flow::Sparse(flow))
    }

    /// `Dense` or `Sparse`.
    pub fn storage(&self) -> Storage {
        match self {
            Flow::Dense { .. } => Storage::Dense,
            Flow::Sparse(_) => Storage::Sparse,
        }
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        for_both!(self, flow => flow.grid())
    }

    /// The backend the state lives on.
    pub fn backend(&self) -> &Backend {
        for_both!(self, flow => flow.backend())
    }

    /// The physical parameters.
    pub fn physics(&self) -> &Physics {
        for_both!(self, flow => flow.physics())
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        for_both!(self, flow => flow.time())
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        for_both!(self, flow => flow.steps())
    }

    /// The water volume at the start.
    pub fn initial_volume(&self) -> f64 {
        for_both!(self, flow => flow.initial_volume())
    }

    /// Bytes the simulation keeps on its backend (state, stages, fluxes, bed, extent).
    pub fn memory(&self) -> usize {
        match self {
            Flow::Dense { flow, extent } => {
                let values = extent.deepest.storage_len() + extent.arrival.storage_len();
                flow.memory() + values * std::mem::size_of::<T>()
            }
            Flow::Sparse(flow) => flow.memory(),
        }
    }

    /// Takes one step of at most `limit` seconds, decided on the host, and records it in
    /// the extent; returns the step taken.
    pub fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        match self {
            Flow::Dense { flow, .. } => {
                let dt = flow.step(limit)?;
                self.track()?;
                Ok(dt)
            }
            // The sparse run records its extent itself.
            Flow::Sparse(flow) => flow.step(limit),
        }
    }

    /// Steps towards `target` until the time is within `slack` of it or `budget` steps are
    /// taken, recording each step in the extent and checking for instability every
    /// hundred steps (see [`ShallowWater::advance`]: where the sides' values do not
    /// change, the backend decides the steps).
    pub fn advance(&mut self, target: f64, slack: f64, budget: u64) -> Result<(), FloodError> {
        match self {
            // The extent's fields stay put: a recorded step replays from call to call.
            Flow::Dense { flow, extent } => flow.advance_replaying(
                target,
                slack,
                budget,
                &mut |f, after| extent.record(f, after),
                EXTENT_AFTER_STEP,
            ),
            Flow::Sparse(flow) => flow.advance(target, slack, budget),
        }
    }

    /// Records the present state in the flood's extent.
    pub fn track(&mut self) -> Result<(), FloodError> {
        match self {
            Flow::Dense { flow, extent } => {
                let now = Value::new(flow.backend(), T::from_f64(flow.time()))?;
                extent.record(flow, &now)
            }
            Flow::Sparse(flow) => flow.track(),
        }
    }

    /// The depth (zero where dry) and speed of every cell into two fields of the grid's
    /// extent on the backend (for the live view); the speed may be skipped where that
    /// saves work (`with_speed` false: a sparse run leaves `speed` as it was).
    pub fn picture(
        &self,
        depth: &mut Field<T>,
        speed: &mut Field<T>,
        with_speed: bool,
    ) -> Result<(), FloodError> {
        match self {
            Flow::Dense { flow, .. } => flow.picture(depth, speed),
            Flow::Sparse(flow) => flow.picture(depth, with_speed.then_some(speed)),
        }
    }

    /// Surveys the state; [`FloodError::Unstable`] where it went unstable.
    pub fn check(&mut self) -> Result<Survey, FloodError> {
        for_both!(self, flow => flow.check())
    }

    /// The volume, depth range and largest speed.
    pub fn survey(&self) -> Result<Survey, FloodError> {
        for_both!(self, flow => flow.survey())
    }

    /// The conserved state per cell as `f64` (what [`Flow::restore`] takes).
    pub fn state(&self) -> Result<[Vec<f64>; 3], FloodError> {
        for_both!(self, flow => flow.state())
    }

    /// Puts back a saved state (the run goes on bit for bit).
    pub fn restore(&mut self, saved: &SavedState) -> Result<(), FloodError> {
        for_both!(self, flow => flow.restore(saved))
    }

    /// The largest depth and the arrival time (negative: never) per cell, row by row
    /// from the south.
    pub fn flood_extent(&self) -> Result<[Vec<f64>; 2], FloodError> {
        match self {
            Flow::Dense { extent, .. } => {
                let values = |f: &Field<T>| -> Result<Vec<f64>, FloodError> {
                    Ok(f.interior()?.iter().map(|x| x.as_f64()).collect())
                };
                Ok([values(&extent.deepest)?, values(&extent.arrival)?])
            }
            Flow::Sparse(flow) => flow.flood_extent()?.ok_or_else(|| FloodError::Config {
                name: "flood extent".into(),
                value: "not tracked".into(),
                expected: "a flow made by Flow::new".into(),
            }),
        }
    }

    /// Puts back an extent taken by [`Flow::flood_extent`].
    pub fn set_flood_extent(&mut self, deepest: &[f64], arrival: &[f64]) -> Result<(), FloodError> {
        match self {
            Flow::Dense { flow, extent } => {
                let g = *flow.grid();
                let d = cell_field::<T>(&g, "restored largest depth", deepest, 0)?;
                extent.deepest.copy_from(&d)?;
                let a = cell_field::<T>(&g, "restored arrival time", arrival, 0)?;
                extent.arrival.copy_from(&a)?;
                Ok(())
            }
            Flow::Sparse(flow) => flow.set_flood_extent(deepest, arrival),
        }
    }

    /// Cell `(i, j)`'s mean bed as the kernels compute it.
    pub fn cell_bed(&self, i: usize, j: usize) -> Result<f64, FloodError> {
        for_both!(self, flow => flow.cell_bed(i, j))
    }

    /// Depth and velocity `(h, u, v)` in cell `(i, j)` whose bed is `bed`.
    pub fn probe_over(&self, i: usize, j: usize, bed: f64) -> Result<(f64, f64, f64), FloodError> {
        for_both!(self, flow => flow.probe_over(i, j, bed))
    }

    /// [`Flow::probe_over`] at each of `cells` (`(i, j, bed)`), read together.
    pub fn probe_many(
        &self,
        cells: &[(usize, usize, f64)],
    ) -> Result<Vec<(f64, f64, f64)>, FloodError> {
        for_both!(self, flow => flow.probe_many(cells))
    }

    /// The depth and the velocities `(h, u, v)` per cell, row by row from the south.
    pub fn depth_and_velocity(&self) -> Result<CellFields, FloodError> {
        for_both!(self, flow => flow.depth_and_velocity())
    }
}
