//! Shallow water on a block grid: only the blocks with water and their neighbours are
//! stored ("sparse memory"), the same kernels run over them (`launch_blocks`), and halos
//! come from [`HaloExchange`](stencil_runtime::blocks::HaloExchange)s instead of the
//! dense fields' memory.
//!
//! Every [`REGRID_EVERY`] steps (or as many as [`SparseShallowWater::set_block_updates`]
//! sets) the run finds, on the backend, the blocks that are not in
//! the dry state (surface at the bed, no discharge: `kp07::activity`, then block flags)
//! and, at the end of the step (its last launches queued, so that the host's choice
//! overlaps the device's work), chooses to keep them, the neighbours that water may reach
//! before the layout after next, and the blocks along sides that feed water in; the next
//! step starts by adding the missing ones (dry) and freeing the others. Deciding at the
//! step's end lets the flags reach the host with the step's own read-back
//! ([`FlagsReader`]): the device never waits for the host's choice. A step's update of a cell depends on cells at most
//! [`REACH_PER_STEP`] away (two per stage), and a layout chosen from the state after step
//! `s` serves the steps up to `s + REGRID_EVERY + 1`, so the wet region it must hold grows
//! by at most `margin = REACH_PER_STEP * (REGRID_EVERY + 1)` cells: a neighbour is kept
//! when a wet cell lies within `margin` of the side it shares (both sides for a diagonal
//! one). A run may also choose a number of steps later than the step it measured (a
//! *lag*, fewer than the steps between updates): on a device the host then reads flags
//! the device wrote steps ago, instead of waiting for the step it has just queued, and
//! the margin grows by the lag. The margin may not pass a block's side (the neighbour's
//! neighbour would then be needed too), which bounds the steps between updates and the
//! lag together ([`MOST_REGRID_EVERY`]): fewer updates keep more dry blocks.
//! No absent block ever holds water, and a halo point in an absent block holds what a
//! dense field holds there, the dry state: the bed's height for the surface (from a
//! companion field computed once from the terrain), zero for the rest. The run then
//! equals the dense run bit for bit (tested in `tests/sparse.rs`), except for the
//! survey's volume, a sum in another order.

mod extent;
mod following;
mod layout;
mod rank_blocks;
mod ranked;
mod ranked_clock;
pub use rank_blocks::RankBlocks;
pub use ranked_clock::FOLLOW_CLOCKED_ENV;
mod read;
mod regrid;
mod step;

use crate::kernels::kp07::{self, Fluxes, StateFields};
use crate::model::{cell_field, corner_field, initial_fields, own_stream, BED_HALO, HALO};
use crate::model::{progress_getters, Progress};
use crate::model::{Kp07Steps, Stage, Which};
use crate::{Boundaries, FloodError, Grid, Physics, SavedState, Setup};
use extent::Extent;
use layout::{dry_at, dry_surface, exchanges, wanted_blocks, wet_blocks, Exchanges};
use ranked::Distribution;
use std::sync::Arc;
use stencil_runtime::blocks::{BlockFlags, BlockGrid, BlockKey, FlagsReader};
use stencil_runtime::{Backend, BlockField, BlockList, Field, Real, Value};

/// Steps between two updates of the present blocks, unless the run sets another number
/// ([`SparseShallowWater::set_block_updates`]).
pub const REGRID_EVERY: u64 = 2;

/// How many steps a choice of the present blocks waits after its measure, unless the run
/// sets another number ([`SparseShallowWater::set_block_updates`]).
pub const REGRID_LAG: u64 = 0;

/// The most steps between two updates of the present blocks, the lag included: the margin
/// they need, `REACH_PER_STEP * (steps + lag + 1)` cells, stays within a block's shorter
/// side.
pub const MOST_REGRID_EVERY: u64 = {
    let shorter = if BLOCK[0] < BLOCK[1] {
        BLOCK[0]
    } else {
        BLOCK[1]
    };
    (shorter / REACH_PER_STEP) as u64 - 1
};

/// How far (cells) a step's update of a cell reaches: two per RK stage (the faces read two
/// cells along).
pub const REACH_PER_STEP: usize = 4;

/// How near a block's side (cells) water must be for the neighbour across it to be kept,
/// with `every` steps between two updates of the present blocks, each chosen `lag` steps
/// after its measure.
fn margin(every: u64, lag: u64) -> usize {
    REACH_PER_STEP * ((every + lag) as usize + 1)
}

/// The block size of sparse runs (cells along x and y): 64 x 32 ran Malpasset at 5 m on an
/// H200 in 28.7 s against 29.8 s with 32 x 32 (fewer blocks to choose and move, the same
/// memory); see `docs/benchmarks.md`.
pub const BLOCK: [usize; 2] = [64, 32];

/// A state on blocks: surface, discharges, velocities (as the dense model's).
type State<T> = [BlockField<T>; 5];

/// A shallow-water simulation in precision `T` on the present blocks of a block grid.
pub struct SparseShallowWater<T: Real> {
    backend: Backend,
    grid: Grid,
    boundaries: Boundaries,
    physics: Physics,
    /// The bed's corners, dense, on the host: what new blocks' beds are cut from.
    corners: Arc<Field<T>>,
    blocks: BlockGrid,
    list: BlockList,
    exchanges: Exchanges,
    bed: BlockField<T>,
    /// The dry surface at every point (halos included): what the surface's halo holds
    /// where a block is absent.
    dry: BlockField<T>,
    /// The face fluxes; the first also holds `kp07::activity` when regridding.
    fluxes: [BlockField<T>; 6],
    /// The flood's extent, when tracked.
    extent: Option<Extent<T>>,
    /// Extents made or refilled so far (a recorded step writes into the fields it was
    /// recorded with).
    extents_made: u64,
    /// The backend the blocks are measured on: on a device, with deferred reductions (the
    /// wet-cell count is read at the next regrid).
    measure_on: Backend,
    /// The flags of the last measure, on their way to the host.
    flags: FlagsReader,
    /// The wet cells of the last measure, when known at once (on the CPU).
    measured_wet: f64,
    /// The present state and the RK stage, the clock, the time and the steps.
    progress: Progress<State<T>, T>,
    /// Steps queued (steps of 0 included): what the layout's cadence counts.
    queued: u64,
    /// Steps between two updates of the present blocks.
    regrid_every: u64,
    /// Steps between a measure of the blocks and the choice from it.
    regrid_lag: u64,
    /// The step (in [`SparseShallowWater::queued`]'s count) of the last measure.
    measured_at: u64,
    /// The wet cells found at each regrid times the steps until the next one.
    wet_cell_steps: f64,
    /// The largest arena memory so far.
    peak_memory: usize,
    /// Layout changes so far, and the wall time they took (waits for the device included).
    layout_changes: (u64, std::time::Duration),
    /// The host's wall time choosing blocks (reading the flags included).
    choosing: std::time::Duration,
    /// The blocks chosen to add and to free at the next step's start.
    chosen: Option<(Vec<BlockKey>, Vec<BlockKey>)>,
    /// A run split over ranks: this rank's part (every block present, the layout fixed).
    distribution: Option<Distribution<T>>,
}

/// About the blocks a sparse run of `setup` would start with (those with a cell whose
/// surface lies above the bed or whose water moves, and their neighbours), and all the
/// blocks of its domain: read from the setup on the host, without making its fields.
pub fn starting_blocks(setup: &Setup) -> Result<(usize, usize), FloodError> {
    let grid = *setup.terrain.grid();
    let water = &setup.water;
    for (name, values) in water.named_fields() {
        grid.check_cells(&format!("initial water {name}"), values.len())?;
    }
    let blocks = BlockGrid::new(&Backend::Cpu, &[grid.nx, grid.ny], &BLOCK, BED_HALO)?;
    let wet = wet_blocks(&blocks, |i, j| {
        let k = j * grid.nx + i;
        water.surface[k] > setup.terrain.cell(i, j) || water.u[k] != 0.0 || water.v[k] != 0.0
    });
    let everywhere = vec![BlockFlags::everywhere(); wet.len()];
    let wanted = wanted_blocks(&blocks, &wet, &everywhere, &setup.boundaries);
    Ok((wanted.len(), blocks.geometry().all_keys().count()))
}

/// The blocks of the state `[surface, q, p]` that are not dry, from the host fields, and
/// all their neighbours (the first step's regrid keeps only those needed).
fn starting_layout<T: Real>(
    blocks: &BlockGrid,
    corners: &Field<T>,
    boundaries: &Boundaries,
    [surface, q, p]: [&Field<T>; 3],
) -> Vec<BlockKey> {
    let wet = wet_blocks(blocks, |i, j| {
        let at = [i as isize, j as isize, 0];
        let value = |f: &Field<T>| f.get(at).unwrap_or(T::zero()).as_f64();
        value(surface) != dry_surface(corners, i, j) || value(q) != 0.0 || value(p) != 0.0
    });
    let everywhere = vec![BlockFlags::everywhere(); wet.len()];
    wanted_blocks(blocks, &wet, &everywhere, boundaries)
}

impl<T: Real> SparseShallowWater<T> {
    /// The setup on `backend`, with the blocks that hold water, their neighbours and the
    /// blocks along feeding sides present. On a device the run queues its work on a
    /// stream of its own, as [`crate::ShallowWater::new`] does.
    pub fn new(backend: &Backend, setup: &Setup) -> Result<SparseShallowWater<T>, FloodError> {
        let backend = &own_stream(backend)?;
        let (surface, q, p) = initial_fields::<T>(setup)?;
        let corners = Arc::new(corner_field::<T>(&setup.terrain, &setup.boundaries));
        let mut flow = SparseShallowWater::from_state(
            backend,
            *setup.terrain.grid(),
            &setup.boundaries,
            setup.physics,
            corners,
            [&surface, &q, &p],
            None,
        )?;
        flow.progress.initial_volume = flow.survey()?.volume;
        Ok(flow)
    }

    /// A run at time 0 from the conserved fields `[surface, q, p]` (host fields of the
    /// dense model's halo): present the blocks that are not dry and all their neighbours.
    fn from_state(
        backend: &Backend,
        grid: Grid,
        boundaries: &Boundaries,
        physics: Physics,
        corners: Arc<Field<T>>,
        [surface, q, p]: [&Field<T>; 3],
        mut distribution: Option<Distribution<T>>,
    ) -> Result<SparseShallowWater<T>, FloodError> {
        let block = distribution.as_ref().map_or(BLOCK, |d| d.block);
        let mut blocks = BlockGrid::new(backend, &[grid.nx, grid.ny], &block, BED_HALO)?;
        let starting = || starting_layout(&blocks, &corners, boundaries, [surface, q, p]);
        let wanted = match &mut distribution {
            // The blocks a run on one rank would start with, dealt to the ranks.
            Some(d) if d.follows => {
                let periodic = [boundaries.periodic(0), boundaries.periodic(1), false];
                d.start_with(blocks.geometry(), starting(), periodic);
                d.layout.local_keys()
            }
            Some(d) => d.layout.local_keys(),
            None => starting(),
        };
        blocks.update(&wanted, &[])?;
        let cut = |f: &Field<T>| BlockField::from_fn(&blocks, |p| f.get(p).unwrap_or(T::zero()));
        let zeros = || BlockField::new(&blocks, T::zero());
        let now = [cut(surface)?, cut(q)?, cut(p)?, zeros()?, zeros()?];
        let stage = [zeros()?, zeros()?, zeros()?, zeros()?, zeros()?];
        let fluxes = [zeros()?, zeros()?, zeros()?, zeros()?, zeros()?, zeros()?];
        let bed = cut(&corners)?;
        let dry = BlockField::from_fn(&blocks, dry_at(&corners, grid, boundaries))?;
        let exchanges = exchanges(&blocks, boundaries, None)?;
        if let Some(d) = &mut distribution {
            d.split(&blocks, boundaries)?;
        }
        let mut flow = SparseShallowWater {
            backend: backend.clone(),
            grid,
            boundaries: boundaries.clone(),
            physics,
            list: match &distribution {
                Some(d) => d.layout.owned_list(&blocks)?,
                None => BlockList::present(&blocks)?,
            },
            distribution,
            corners,
            blocks,
            exchanges,
            bed,
            dry,
            fluxes,
            extent: None,
            extents_made: 0,
            measure_on: match backend {
                Backend::Cuda(c) => Backend::Cuda(c.clone().with_deferred_reductions(true)),
                b => b.clone(),
            },
            flags: FlagsReader::new(),
            chosen: None,
            measured_wet: 0.0,
            progress: Progress::new(backend, now, stage)?,
            queued: 0,
            regrid_every: REGRID_EVERY,
            regrid_lag: REGRID_LAG,
            measured_at: 0,
            wet_cell_steps: 0.0,
            peak_memory: 0,
            layout_changes: (0, std::time::Duration::ZERO),
            choosing: std::time::Duration::ZERO,
        };
        flow.peak_memory = flow.memory();
        flow.derive_velocities()?;
        Ok(flow)
    }

    /// Puts back a saved state (the fields as [`SparseShallowWater::state`] takes them):
    /// the run then goes on bit for bit as if never stopped (the blocks present are those
    /// the state needs; the flood extent starts anew, see
    /// [`SparseShallowWater::set_flood_extent`]).
    pub fn restore(&mut self, saved: &SavedState) -> Result<(), FloodError> {
        let g = self.grid;
        let mut fields = Vec::new();
        for values in &saved.state {
            fields.push(cell_field::<T>(&g, "restored state", values, HALO)?);
        }
        let arrival_depth = self.extent.as_ref().map(|e| e.arrival_depth());
        let cadence = (self.regrid_every, self.regrid_lag);
        *self = SparseShallowWater::from_state(
            &self.backend,
            g,
            &self.boundaries,
            self.physics,
            self.corners.clone(),
            [&fields[0], &fields[1], &fields[2]],
            self.distribution.take().map(Distribution::replanned),
        )?;
        self.progress.resume_from(saved);
        self.queued = saved.steps;
        (self.regrid_every, self.regrid_lag) = cadence;
        if let Some(depth) = arrival_depth {
            self.track_flood(depth)?;
        }
        Ok(())
    }

    /// Updates the present blocks every `every` steps (default [`REGRID_EVERY`]), each
    /// update chosen `lag` steps after the step it measures (default [`REGRID_LAG`];
    /// fewer than `every`), keeping the neighbours that water may reach before the update
    /// after next (see the module's text); `every + lag` is at most
    /// [`MOST_REGRID_EVERY`]. Set it before the first step: the blocks present then were
    /// chosen for the cadence they started with. A resumed run keeps it.
    pub fn set_block_updates(&mut self, every: u64, lag: u64) -> Result<(), FloodError> {
        let bad = |expected: String| {
            Err(FloodError::Config {
                name: "block updates (every, lag)".into(),
                value: format!("({every}, {lag})"),
                expected,
            })
        };
        if every == 0 || lag >= every || every + lag > MOST_REGRID_EVERY {
            return bad(format!(
                "an update every 1 or more steps, chosen fewer steps than that after its measure, the two together at most {MOST_REGRID_EVERY} (water may not cross more than one block of {} x {} cells between a measure and the update after next)",
                BLOCK[0], BLOCK[1]
            ));
        }
        if self.progress.steps > 0 {
            return bad(format!(
                "a cadence set before the first step (this run has taken {} steps)",
                self.progress.steps
            ));
        }
        (self.regrid_every, self.regrid_lag) = (every, lag);
        Ok(())
    }

    /// Steps between two updates of the present blocks, and between a measure and the
    /// choice from it.
    pub fn block_updates(&self) -> (u64, u64) {
        (self.regrid_every, self.regrid_lag)
    }

    /// Starts recording the flood's extent: per cell the largest depth and the time the
    /// depth first exceeds `arrival_depth` (see [`SparseShallowWater::track`]).
    pub fn track_flood(&mut self, arrival_depth: f64) -> Result<(), FloodError> {
        self.extent = Some(Extent::new(&self.blocks, arrival_depth)?);
        self.extents_made += 1;
        self.peak_memory = self.peak_memory.max(self.memory());
        Ok(())
    }

    /// Records the present state in the flood's extent (after
    /// [`SparseShallowWater::track_flood`]; nothing before), at the time held in `time`.
    fn track_at(&mut self, time: &Value<T>) -> Result<(), FloodError> {
        let surface = &self.progress.now[0];
        if let Some(extent) = &mut self.extent {
            extent.track(&self.backend, &self.list, surface, &self.bed, time)?;
        }
        Ok(())
    }

    /// Records the present state in the flood's extent at the present time (after
    /// [`SparseShallowWater::track_flood`]; nothing before).
    pub fn track(&mut self) -> Result<(), FloodError> {
        let now = Value::new(&self.backend, T::from_f64(self.progress.time))?;
        self.track_at(&now)
    }

    /// The largest depth and the arrival time (negative: never) per cell, row by row
    /// from the south (none without [`SparseShallowWater::track_flood`]).
    pub fn flood_extent(&self) -> Result<Option<[Vec<f64>; 2]>, FloodError> {
        match &self.extent {
            Some(e) => {
                let [mut deepest, mut arrival] = e.values(&self.blocks)?;
                if let Some(d) = &self.distribution {
                    d.combine_extents(&mut deepest, &mut arrival);
                }
                Ok(Some([deepest, arrival]))
            }
            None => Ok(None),
        }
    }

    /// Puts back a flood extent taken by [`SparseShallowWater::flood_extent`] (after
    /// [`SparseShallowWater::track_flood`]).
    pub fn set_flood_extent(&mut self, deepest: &[f64], arrival: &[f64]) -> Result<(), FloodError> {
        // The extent's fields are made anew: a recorded step must not write the old ones.
        self.extents_made += 1;
        match &mut self.extent {
            Some(e) => e.set(&self.blocks, &self.grid, deepest, arrival),
            None => Err(FloodError::Config {
                name: "flood extent".into(),
                value: "set before tracking".into(),
                expected: "track_flood first".into(),
            }),
        }
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The block grid (which blocks are present).
    pub fn blocks(&self) -> &BlockGrid {
        &self.blocks
    }

    progress_getters!();

    /// The velocities of the present state from its conserved fields.
    fn derive_velocities(&mut self) -> Result<(), FloodError> {
        let eps = self.physics.eps();
        let [w, q, p, u, v] = &mut self.progress.now;
        kp07::velocities::launch_blocks(&self.backend, &self.list, w, q, p, &self.bed, u, v, eps)?;
        Ok(())
    }

    /// The wet cells counted at each regrid times the steps until the next (an estimate
    /// of the wet-cell updates so far).
    pub fn wet_cell_steps(&self) -> f64 {
        self.wet_cell_steps
    }

    /// The domain's blocks, present or not.
    pub fn block_count(&self) -> usize {
        let g = self.blocks.geometry();
        g.blocks[0] * g.blocks[1]
    }

    /// The largest [`SparseShallowWater::memory`] so far.
    pub fn peak_memory(&self) -> usize {
        self.peak_memory
    }

    /// Bytes allocated for the block fields' arenas (the memory the run takes on the
    /// backend).
    pub fn memory(&self) -> usize {
        let progress = &self.progress;
        let states = progress.now.iter().chain(&progress.stage);
        let fields = states.chain(&self.fluxes);
        let extent = self.extent.as_ref().map_or(0, |e| e.memory());
        fields.map(|f| f.bytes()).sum::<usize>() + self.bed.bytes() + self.dry.bytes() + extent
    }
}

/// Launches `kp07::advance` for `stage` over the blocks of `list`, from `fluxes` and
/// over `bed`, between the state and the stage of `progress`.
fn advance_blocks<T: Real>(
    (on, list): (&Backend, &BlockList),
    progress: &mut Progress<State<T>, T>,
    fluxes: &[BlockField<T>; 6],
    bed: &BlockField<T>,
    stage: &Stage<T>,
) -> Result<(), FloodError> {
    let (from, to) = progress.stage_pair(stage.forward);
    let (from, to) = (
        StateFields::of(from.each_ref()),
        StateFields::of(to.each_mut()),
    );
    let faces = Fluxes::of(fluxes.each_ref());
    let (dt, keep, s) = (stage.dt, stage.keep, &stage.scalars);
    kp07::advance::launch_blocks(on, list, from, bed, faces, to, dt, keep, s)?;
    Ok(())
}

impl<T: Real> Kp07Steps<T> for SparseShallowWater<T> {
    fn setting(&self) -> (&Backend, &Grid, &Boundaries, &Physics) {
        (&self.backend, &self.grid, &self.boundaries, &self.physics)
    }

    fn evaluate_fluxes_on(&mut self, on: &Backend, which: Which, t: f64) -> Result<T, FloodError> {
        let s = self.scalars(t);
        if self.distribution.is_some() {
            let speed = self.ranked_faces(on, which, &s)?;
            self.start_face_ghosts()?;
            return Ok(speed);
        }
        let state = self.progress.pick(which);
        // The faces (and the stage after them) read the surface and the velocities two
        // cells along.
        let [w, _, _, u, v] = state;
        self.exchanges
            .state
            .run_paired((w, &self.dry), &mut [u, v])?;
        let faces = Fluxes::of(self.fluxes.each_mut());
        let state = StateFields::of(state.each_ref());
        let speed = kp07::faces::launch_blocks(on, &self.list, state, &self.bed, faces, &s)?;
        // A cell reads its east and north neighbours' faces.
        let [a, b, c, d, e, f] = &mut self.fluxes;
        self.exchanges.faces.run_many(&mut [a, b, c, d, e, f])?;
        Ok(speed)
    }

    fn launch_advance(&mut self, stage: &Stage<T>) -> Result<(), FloodError> {
        if self.distribution.is_some() {
            return self.ranked_advance(stage);
        }
        let on = (&self.backend, &self.list);
        advance_blocks(on, &mut self.progress, &self.fluxes, &self.bed, stage)
    }

    type State = State<T>;

    fn progress(&mut self) -> &mut Progress<State<T>, T> {
        &mut self.progress
    }
}
