//! Shallow water on a block grid: only the blocks with water and their neighbours are
//! stored ("sparse memory"), the same kernels run over them (`launch_blocks`), and halos
//! come from [`HaloExchange`]s instead of the dense fields' memory.
//!
//! Every [`REGRID_EVERY`] steps the run finds, on the backend, the blocks that are not in
//! the dry state (surface at the bed, no discharge: `kp07::activity`, then
//! [`BlockField::flags`]) and keeps them, the neighbours that water may reach before the
//! next regrid, and the blocks along sides that feed water in; it adds the missing ones
//! (dry) and frees the others. A step's update of a cell depends on cells at most
//! [`REACH_PER_STEP`] away (two per stage), so in `REGRID_EVERY` steps the wet region grows
//! by at most `MARGIN = REACH_PER_STEP * REGRID_EVERY` cells: a neighbour is kept when a
//! wet cell lies within `MARGIN` of the side it shares (both sides for a diagonal one).
//! No absent block ever holds water, and a halo point in an absent block holds what a
//! dense field holds there, the dry state: the bed's height for the surface (from a
//! companion field computed once from the terrain), zero for the rest. The run then
//! equals the dense run bit for bit (tested in `tests/sparse.rs`), except for the
//! survey's volume, a sum in another order.

use crate::kernels::kp07;
use crate::model::Integrator;
use crate::model::{corner_field, initial_fields, kernel_cell_bed, BED_HALO};
use crate::{Boundaries, Boundary, FloodError, Grid, Physics, Setup, Survey};
use std::sync::Arc;
use stencil_runtime::blocks::{
    Absent, BlockFlags, BlockGrid, BlockKey, HaloExchange, HaloRule, Relayout, Side,
};
use stencil_runtime::{Backend, BlockField, BlockList, Field, Real};

/// Steps between two updates of the present blocks.
pub const REGRID_EVERY: u64 = 4;

/// How far (cells) a step's update of a cell reaches: two per RK stage (the faces read two
/// cells along).
pub const REACH_PER_STEP: usize = 4;

/// How near a block's side (cells) water must be for the neighbour across it to be kept.
const MARGIN: usize = REACH_PER_STEP * REGRID_EVERY as usize;

/// The block size of sparse runs (cells per side).
pub const BLOCK: usize = 32;

/// A state on blocks: surface, discharges, velocities (as the dense model's).
type State<T> = [BlockField<T>; 5];

/// How each kind of field's halos are filled, as wide as the kernels read them.
struct Exchanges {
    /// The surface (two layers): the dry surface where a block is absent.
    surface: HaloExchange,
    /// The velocities (two layers): zero where a block is absent.
    velocity: HaloExchange,
    /// The face fluxes (one layer): zero where a block is absent.
    faces: HaloExchange,
}

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
    now: State<T>,
    stage: State<T>,
    /// The face fluxes; the first also holds `kp07::activity` when regridding.
    fluxes: [BlockField<T>; 6],
    time: f64,
    steps: u64,
    initial_volume: f64,
    /// The wet cells found at each regrid times the steps until the next one.
    wet_cell_steps: f64,
    /// The largest arena memory so far.
    peak_memory: usize,
}

impl<T: Real> SparseShallowWater<T> {
    /// The setup on `backend`, with the blocks that hold water, their neighbours and the
    /// blocks along feeding sides present.
    pub fn new(backend: &Backend, setup: &Setup) -> Result<SparseShallowWater<T>, FloodError> {
        let (surface, q, p) = initial_fields::<T>(setup)?;
        let grid = *setup.terrain.grid();
        let corners = Arc::new(corner_field::<T>(&setup.terrain, &setup.boundaries));
        let mut blocks = BlockGrid::new(backend, &[grid.nx, grid.ny], &[BLOCK, BLOCK], BED_HALO)?;
        // The blocks of the initial state that are not dry, from the host fields, and all
        // their neighbours (the first step's regrid keeps only those needed).
        let wet = wet_blocks(&blocks, |i, j| {
            let at = [i as isize, j as isize, 0];
            let value = |f: &Field<T>| f.get(at).unwrap_or(T::zero()).as_f64();
            value(&surface) != dry_surface(&corners, i, j) || value(&q) != 0.0 || value(&p) != 0.0
        });
        let everywhere = vec![BlockFlags::everywhere(); wet.len()];
        let wanted = wanted_blocks(&blocks, &wet, &everywhere, &setup.boundaries);
        blocks.update(&wanted, &[])?;
        let cut = |f: &Field<T>| BlockField::from_fn(&blocks, |p| f.get(p).unwrap_or(T::zero()));
        let zeros = || BlockField::new(&blocks, T::zero());
        let now = [cut(&surface)?, cut(&q)?, cut(&p)?, zeros()?, zeros()?];
        let stage = [zeros()?, zeros()?, zeros()?, zeros()?, zeros()?];
        let fluxes = [zeros()?, zeros()?, zeros()?, zeros()?, zeros()?, zeros()?];
        let bed = cut(&corners)?;
        let dry = BlockField::from_fn(&blocks, dry_at(&corners, grid, &setup.boundaries))?;
        let exchanges = exchanges(&blocks, &setup.boundaries)?;
        let mut flow = SparseShallowWater {
            backend: backend.clone(),
            grid,
            boundaries: setup.boundaries.clone(),
            physics: setup.physics,
            list: BlockList::present(&blocks)?,
            corners,
            blocks,
            exchanges,
            bed,
            dry,
            now,
            stage,
            fluxes,
            time: 0.0,
            steps: 0,
            initial_volume: 0.0,
            wet_cell_steps: 0.0,
            peak_memory: 0,
        };
        flow.peak_memory = flow.memory();
        flow.derive_velocities()?;
        flow.initial_volume = flow.survey()?.volume;
        Ok(flow)
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The block grid (which blocks are present).
    pub fn blocks(&self) -> &BlockGrid {
        &self.blocks
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The water volume at the start.
    pub fn initial_volume(&self) -> f64 {
        self.initial_volume
    }

    /// `eps` of the desingularisation.
    fn eps(&self) -> T {
        T::from_f64(self.physics.dry_depth.powi(4))
    }

    /// The velocities of the present state from its conserved fields.
    fn derive_velocities(&mut self) -> Result<(), FloodError> {
        let eps = self.eps();
        let [w, q, p, u, v] = &mut self.now;
        kp07::velocities::launch_blocks(&self.backend, &self.list, w, q, p, &self.bed, u, v, eps)?;
        Ok(())
    }

    /// Adds the blocks the water may reach before the next regrid and frees those it
    /// cannot (see the module's text).
    fn regrid(&mut self) -> Result<(), FloodError> {
        let [w, q, p, ..] = &self.now;
        let away = &mut self.fluxes[0];
        let wet_cells =
            kp07::activity::launch_blocks(&self.backend, &self.list, w, q, p, &self.bed, away)?;
        self.wet_cell_steps += wet_cells * REGRID_EVERY as f64;
        let flags = self.fluxes[0].flags(&self.list, MARGIN)?;
        let wanted = wanted_blocks(&self.blocks, self.list.keys(), &flags, &self.boundaries);
        let add: Vec<BlockKey> = wanted
            .iter()
            .filter(|k| !self.blocks.contains(**k))
            .copied()
            .collect();
        let remove: Vec<BlockKey> = self
            .list
            .keys()
            .iter()
            .filter(|k| wanted.binary_search(k).is_err())
            .copied()
            .collect();
        if add.is_empty() && remove.is_empty() {
            return Ok(());
        }
        let change = self.blocks.update(&add, &remove)?;
        self.follow(&change)?;
        self.list = BlockList::present(&self.blocks)?;
        self.exchanges = exchanges(&self.blocks, &self.boundaries)?;
        self.peak_memory = self.peak_memory.max(self.memory());
        Ok(())
    }

    /// Every field follows a change of the blocks; added blocks are dry.
    fn follow(&mut self, change: &Relayout) -> Result<(), FloodError> {
        let corners = self.corners.clone();
        let (nx, ny) = (self.grid.nx as isize, self.grid.ny as isize);
        let dry = move |p: [isize; 3]| {
            if (0..nx).contains(&p[0]) && (0..ny).contains(&p[1]) {
                T::from_f64(dry_surface(&corners, p[0] as usize, p[1] as usize))
            } else {
                T::zero()
            }
        };
        let zero = |_: [isize; 3]| T::zero();
        let blocks = &self.blocks;
        for state in [&mut self.now, &mut self.stage] {
            state[0].follow(blocks, change, dry.clone())?;
            for f in &mut state[1..] {
                f.follow(blocks, change, zero)?;
            }
        }
        for f in &mut self.fluxes {
            f.follow(blocks, change, zero)?;
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

    /// The face fluxes of the present (or the stage) state at time `t`; the largest
    /// `a / dx`, or NaN unread when `read_speed` is false.
    fn evaluate_fluxes(
        &mut self,
        stage: bool,
        t: f64,
        read_speed: bool,
    ) -> Result<f64, FloodError> {
        let eps = self.eps();
        let launch_on = match (&self.backend, read_speed) {
            (Backend::Cuda(c), false) => Backend::Cuda(c.clone().with_unread_reductions(true)),
            (b, _) => b.clone(),
        };
        let state = if stage {
            &mut self.stage
        } else {
            &mut self.now
        };
        // The faces (and the stage after them) read the surface and the velocities two
        // cells along.
        self.exchanges.surface.run_with(&mut state[0], &self.dry)?;
        for f in &mut state[3..] {
            self.exchanges.velocity.run(f)?;
        }
        let b = &self.boundaries;
        let value = |side: &Boundary| T::from_f64(side.value_at(t));
        let [w, _, _, u, v] = &*state;
        let [west_w, west_q, west_p, south_w, south_q, south_p] = &mut self.fluxes;
        let f = T::from_f64;
        let speed = kp07::faces::launch_blocks(
            &launch_on,
            &self.list,
            w,
            u,
            v,
            &self.bed,
            west_w,
            west_q,
            west_p,
            south_w,
            south_q,
            south_p,
            f(self.physics.gravity),
            f(self.physics.theta),
            eps,
            f(1.0 / self.grid.dx),
            f(1.0 / self.grid.dy),
            b.west.kind(),
            b.east.kind(),
            b.south.kind(),
            b.north.kind(),
            value(&b.west),
            value(&b.east),
            value(&b.south),
            value(&b.north),
        )?;
        // A cell reads its east and north neighbours' faces.
        for f in &mut self.fluxes {
            self.exchanges.faces.run(f)?;
        }
        Ok(speed.as_f64())
    }

    /// One stage `to = keep to + (1 - keep) (from + dt R)`, as the dense model's.
    fn advance_stage(
        &mut self,
        forward: bool,
        t: f64,
        dt: f64,
        keep: f64,
    ) -> Result<(), FloodError> {
        let eps = self.eps();
        let (from, to) = if forward {
            (&self.now, &mut self.stage)
        } else {
            (&self.stage, &mut self.now)
        };
        let [w, q, p, _, _] = from;
        let [west_w, west_q, west_p, south_w, south_q, south_p] = &self.fluxes;
        let [tw, tq, tp, tu, tv] = to;
        let ph = &self.physics;
        let b = &self.boundaries;
        let f = T::from_f64;
        kp07::advance::launch_blocks(
            &self.backend,
            &self.list,
            w,
            q,
            p,
            west_w,
            west_q,
            west_p,
            south_w,
            south_q,
            south_p,
            &self.bed,
            tw,
            tq,
            tp,
            tu,
            tv,
            f(dt),
            f(keep),
            f(ph.gravity),
            f(ph.gravity * ph.manning * ph.manning),
            f(ph.theta),
            eps,
            f(1.0 / self.grid.dx),
            f(1.0 / self.grid.dy),
            b.west.kind(),
            b.east.kind(),
            b.south.kind(),
            b.north.kind(),
            f(b.east.value_at(t)),
            f(b.north.value_at(t)),
        )?;
        Ok(())
    }

    /// Takes one time step of at most `limit` seconds; returns the step taken.
    pub fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        if self.steps.is_multiple_of(REGRID_EVERY) {
            self.regrid()?;
        }
        let speed = self.evaluate_fluxes(false, self.time, true)?;
        if !(speed >= 0.0 && speed.is_finite()) {
            return Err(FloodError::Config {
                name: "sparse run".into(),
                value: format!(
                    "a wave speed of {speed} at step {} (t = {} s)",
                    self.steps, self.time
                ),
                expected: "a stable run (run it dense to locate the instability)".into(),
            });
        }
        let dt = if speed > 0.0 {
            (self.physics.courant / speed).min(limit)
        } else {
            limit
        };
        match self.physics.integrator {
            Integrator::Euler => {
                self.advance_stage(true, self.time, dt, 0.0)?;
                std::mem::swap(&mut self.now, &mut self.stage);
            }
            Integrator::Rk2 => {
                self.advance_stage(true, self.time, dt, 0.0)?;
                self.evaluate_fluxes(true, self.time + dt, false)?;
                self.advance_stage(false, self.time + dt, dt, 0.5)?;
            }
        }
        self.time += dt;
        self.steps += 1;
        Ok(dt)
    }

    /// Steps until simulated time `t_end`.
    pub fn advance_to(&mut self, t_end: f64) -> Result<(), FloodError> {
        while self.time < t_end {
            self.step(t_end - self.time)?;
        }
        Ok(())
    }

    /// The volume, depth range and largest speed over the present blocks (absent blocks
    /// are dry).
    pub fn survey(&self) -> Result<Survey, FloodError> {
        let [w, q, p, _, _] = &self.now;
        let (volume, min_depth, max_depth, max_speed) = kp07::survey::launch_blocks(
            &self.backend,
            &self.list,
            w,
            q,
            p,
            &self.bed,
            T::from_f64(self.physics.dry_depth),
        )?;
        Ok(Survey {
            volume: volume * self.grid.cell_area(),
            min_depth: min_depth.as_f64(),
            max_depth: max_depth.as_f64(),
            max_speed: max_speed.as_f64().max(0.0),
        })
    }

    /// The state as `f64`, dense: surface, x and y discharge per cell, row by row from the
    /// south (absent blocks dry).
    pub fn state(&self) -> Result<[Vec<f64>; 3], FloodError> {
        let g = self.grid;
        let dense = |k: usize| -> Result<Vec<f64>, FloodError> {
            let f = self.now[k].to_dense(&self.blocks, 0, T::nan())?;
            let values = f.interior()?;
            Ok(values
                .iter()
                .enumerate()
                .map(|(c, v)| match (v.is_nan(), k) {
                    (true, 0) => dry_surface(&self.corners, c % g.nx, c / g.nx),
                    (true, _) => 0.0,
                    (false, _) => v.as_f64(),
                })
                .collect())
        };
        Ok([dense(0)?, dense(1)?, dense(2)?])
    }

    /// The wet cells counted at each regrid times the steps until the next (an estimate
    /// of the wet-cell updates so far).
    pub fn wet_cell_steps(&self) -> f64 {
        self.wet_cell_steps
    }

    /// The largest [`SparseShallowWater::memory`] so far.
    pub fn peak_memory(&self) -> usize {
        self.peak_memory
    }

    /// Bytes of the block fields' arenas (the memory the state takes on the backend).
    pub fn memory(&self) -> usize {
        // State, stage, fluxes, bed, dry surface.
        let fields = 5 + 5 + 6 + 1 + 1;
        fields
            * self.blocks.capacity()
            * self.blocks.geometry().slot_len()
            * std::mem::size_of::<T>()
    }
}

/// The dry surface of cell `(i, j)`: its bed as the kernels compute it.
fn dry_surface<T: Real>(corners: &Field<T>, i: usize, j: usize) -> f64 {
    let c = |di: usize, dj: usize| {
        corners
            .get([(i + di) as isize, (j + dj) as isize, 0])
            .unwrap_or(T::zero())
    };
    kernel_cell_bed(c(0, 0), c(1, 0), c(0, 1), c(1, 1))
}

/// The blocks with a cell for which `wet(i, j)` holds (not dry).
fn wet_blocks(blocks: &BlockGrid, wet: impl Fn(usize, usize) -> bool) -> Vec<BlockKey> {
    let g = *blocks.geometry();
    g.all_keys()
        .filter(|&key| {
            let o = g.origin(key);
            (o[1]..(o[1] + g.block[1]).min(g.domain[1]))
                .any(|j| (o[0]..(o[0] + g.block[0]).min(g.domain[0])).any(|i| wet(i, j)))
        })
        .collect()
}

/// The blocks of `listed` flagged as not dry, the neighbours their water may reach
/// (across periodic sides too; see the module's text), and the blocks along sides that
/// feed water in, sorted.
fn wanted_blocks(
    blocks: &BlockGrid,
    listed: &[BlockKey],
    flags: &[BlockFlags],
    sides: &Boundaries,
) -> Vec<BlockKey> {
    let g = *blocks.geometry();
    let n = [g.blocks[0] as i64, g.blocks[1] as i64];
    let mut wanted = std::collections::BTreeSet::new();
    for (key, f) in listed.iter().zip(flags).filter(|(_, f)| f.any()) {
        for dj in -1..=1i64 {
            for di in -1..=1i64 {
                let reaches = |d: i64, axis: usize| d == 0 || f.near(axis, usize::from(d > 0));
                if !(reaches(di, 0) && reaches(dj, 1)) {
                    continue;
                }
                let mut at = [key.index[0] as i64 + di, key.index[1] as i64 + dj];
                for a in 0..2 {
                    if sides.periodic(a) {
                        at[a] = at[a].rem_euclid(n[a]);
                    }
                }
                if (0..2).all(|a| (0..n[a]).contains(&at[a])) {
                    wanted.insert(BlockKey::new([at[0] as u32, at[1] as u32, 0]));
                }
            }
        }
    }
    wanted.extend(feeding_blocks(&g, sides));
    wanted.into_iter().collect()
}

/// The blocks along sides that feed water in (fixed depth or discharge).
fn feeding_blocks<'a>(
    g: &'a stencil_runtime::blocks::Geometry,
    sides: &'a Boundaries,
) -> impl Iterator<Item = BlockKey> + 'a {
    let n = [g.blocks[0] as i64, g.blocks[1] as i64];
    let feeds = |b: &Boundary| matches!(b, Boundary::Depth(_) | Boundary::Discharge(_));
    g.all_keys().filter(move |key| {
        let [i, j] = [key.index[0] as i64, key.index[1] as i64];
        (i == 0 && feeds(&sides.west))
            || (i == n[0] - 1 && feeds(&sides.east))
            || (j == 0 && feeds(&sides.south))
            || (j == n[1] - 1 && feeds(&sides.north))
    })
}

/// The dry surface at a point of a slot (what the surface's halo holds where a block is
/// absent): the bed's height inside the domain, across periodic sides the image's, zero
/// past other sides (where the side rules fill the halo instead).
fn dry_at<T: Real>(
    corners: &Arc<Field<T>>,
    grid: Grid,
    sides: &Boundaries,
) -> impl Fn([isize; 3]) -> T + Clone {
    let corners = corners.clone();
    let n = [grid.nx as isize, grid.ny as isize];
    let periodic = [sides.periodic(0), sides.periodic(1)];
    move |p: [isize; 3]| {
        let mut q = [p[0], p[1]];
        for a in 0..2 {
            if periodic[a] {
                q[a] = q[a].rem_euclid(n[a]);
            }
            if !(0..n[a]).contains(&q[a]) {
                return T::zero();
            }
        }
        T::from_f64(dry_surface(&corners, q[0] as usize, q[1] as usize))
    }
}

/// The halo exchanges of the present layout: outside the domain what the dense fields
/// hold there (the periodic images along periodic axes, else zero), in absent blocks the
/// dry state.
fn exchanges(blocks: &BlockGrid, boundaries: &Boundaries) -> Result<Exchanges, FloodError> {
    let side = |axis: usize| {
        if boundaries.periodic(axis) {
            [Side::Periodic; 2]
        } else {
            [Side::Value(0.0); 2]
        }
    };
    let sides = [side(0), side(1), [Side::Value(0.0); 2]];
    let surface = HaloRule {
        sides,
        absent: Absent::Companion,
    };
    let zero = HaloRule {
        sides,
        absent: Absent::Value(0.0),
    };
    Ok(Exchanges {
        surface: HaloExchange::with_width(blocks, &surface, 2)?,
        velocity: HaloExchange::with_width(blocks, &zero, 2)?,
        faces: HaloExchange::with_width(blocks, &zero, 1)?,
    })
}
