//! Shallow water on a block grid: only the blocks with water and their neighbours are
//! stored ("sparse memory"), the same kernels run over them (`launch_blocks`), and halos
//! come from a [`HaloExchange`] instead of the dense fields' memory.
//!
//! Every [`REGRID_EVERY`] steps the run finds the wet blocks (a depth above 0 anywhere),
//! keeps them, their eight neighbours and the blocks along sides that feed water in, adds
//! the missing ones (dry: the surface at the bed, no discharge) and frees the others. In
//! that many steps water moves less than a block (each RK stage moves it at most a cell,
//! and the neighbours are a whole block deep), so no absent block ever holds water, and a
//! halo point in an absent block holds what a dense field holds there: the dry state (the
//! bed's height for the surface, zero for the rest). The run then equals the dense run
//! bit for bit (tested in `tests/sparse.rs`), except for the survey's volume, a sum in
//! another order.

use crate::kernels::kp07;
use crate::model::Integrator;
use crate::model::{corner_field, initial_fields, kernel_cell_bed, BED_HALO};
use crate::{Boundaries, Boundary, FloodError, Grid, Physics, Setup, Survey};
use std::sync::Arc;
use stencil_runtime::blocks::{
    Absent, BlockGrid, BlockKey, HaloExchange, HaloRule, Relayout, Side,
};
use stencil_runtime::{Backend, BlockField, BlockList, Field, Real};

/// Steps between two updates of the present blocks.
pub const REGRID_EVERY: u64 = 8;

/// The block size of sparse runs (cells per side).
pub const BLOCK: usize = 32;

/// A state on blocks: surface, discharges, velocities (as the dense model's).
type State<T> = [BlockField<T>; 5];

/// How each kind of field's halos are filled.
struct Exchanges {
    /// The surface: the dry surface where a block is absent.
    surface: HaloExchange,
    /// Everything else: zero where a block is absent.
    zero: HaloExchange,
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
    now: State<T>,
    stage: State<T>,
    fluxes: [BlockField<T>; 6],
    /// The depth per cell, for regridding.
    depth: BlockField<T>,
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
        // The wet blocks of the initial state, from the host fields.
        let wet = wet_blocks(&blocks, |i, j| {
            let at = [i as isize, j as isize, 0];
            surface.get(at).unwrap_or(T::zero()).as_f64() > dry_surface(&corners, i, j)
        });
        let wanted = wanted_blocks(&blocks, &wet, &setup.boundaries);
        blocks.update(&wanted, &[])?;
        let cut = |f: &Field<T>| BlockField::from_fn(&blocks, |p| f.get(p).unwrap_or(T::zero()));
        let zeros = || BlockField::new(&blocks, T::zero());
        let now = [cut(&surface)?, cut(&q)?, cut(&p)?, zeros()?, zeros()?];
        let stage = [zeros()?, zeros()?, zeros()?, zeros()?, zeros()?];
        let fluxes = [zeros()?, zeros()?, zeros()?, zeros()?, zeros()?, zeros()?];
        let bed = cut(&corners)?;
        let exchanges = exchanges(&blocks, &setup.boundaries, &corners)?;
        let mut flow = SparseShallowWater {
            backend: backend.clone(),
            grid,
            boundaries: setup.boundaries.clone(),
            physics: setup.physics,
            list: BlockList::present(&blocks)?,
            depth: zeros()?,
            corners,
            blocks,
            exchanges,
            bed,
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
        let [w, ..] = &self.now;
        kp07::depth::launch_blocks(&self.backend, &self.list, w, &self.bed, &mut self.depth)?;
        let g = *self.blocks.geometry();
        let arena = self.depth.arena()?;
        let mut wet = Vec::new();
        let mut wet_cells = 0usize;
        for (slot, info) in self.blocks.blocks() {
            let o = g.origin(info.key);
            let base = slot * g.slot_len();
            let rows = g.block[1].min(g.domain[1] - o[1]);
            let cols = g.block[0].min(g.domain[0] - o[0]);
            let count = (0..rows)
                .map(|j| {
                    (0..cols)
                        .filter(|&i| {
                            arena[base + g.element([i as isize, j as isize, 0])] > T::zero()
                        })
                        .count()
                })
                .sum::<usize>();
            if count > 0 {
                wet.push(info.key);
                wet_cells += count;
            }
        }
        self.wet_cell_steps += (wet_cells as u64 * REGRID_EVERY) as f64;
        let wanted = wanted_blocks(&self.blocks, &wet, &self.boundaries);
        let present = self.blocks.keys();
        let add: Vec<BlockKey> = wanted
            .iter()
            .filter(|k| !self.blocks.contains(**k))
            .copied()
            .collect();
        let remove: Vec<BlockKey> = present
            .iter()
            .filter(|k| !wanted.contains(k))
            .copied()
            .collect();
        if add.is_empty() && remove.is_empty() {
            return Ok(());
        }
        let change = self.blocks.update(&add, &remove)?;
        self.follow(&change)?;
        self.list = BlockList::present(&self.blocks)?;
        self.exchanges = exchanges(&self.blocks, &self.boundaries, &self.corners)?;
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
        for f in self.fluxes.iter_mut().chain([&mut self.depth]) {
            f.follow(blocks, change, zero)?;
        }
        let corners = self.corners.clone();
        self.bed
            .follow(blocks, change, move |p| corners.get(p).unwrap_or(T::zero()))?;
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
        self.exchanges.surface.run(&mut state[0])?;
        for f in &mut state[3..] {
            self.exchanges.zero.run(f)?;
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
            self.exchanges.zero.run(f)?;
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

/// The blocks with a cell for which `wet(i, j)` holds.
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

/// The wet blocks, their eight neighbours (across periodic sides too) and the blocks
/// along sides that feed water in, sorted.
fn wanted_blocks(blocks: &BlockGrid, wet: &[BlockKey], sides: &Boundaries) -> Vec<BlockKey> {
    let g = *blocks.geometry();
    let n = [g.blocks[0] as i64, g.blocks[1] as i64];
    let mut wanted = std::collections::BTreeSet::new();
    for key in wet {
        for dj in -1..=1 {
            for di in -1..=1 {
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
    let feeds = |b: &Boundary| matches!(b, Boundary::Depth(_) | Boundary::Discharge(_));
    for key in g.all_keys() {
        let [i, j] = [key.index[0] as i64, key.index[1] as i64];
        let on = (i == 0 && feeds(&sides.west))
            || (i == n[0] - 1 && feeds(&sides.east))
            || (j == 0 && feeds(&sides.south))
            || (j == n[1] - 1 && feeds(&sides.north));
        if on {
            wanted.insert(key);
        }
    }
    wanted.into_iter().collect()
}

/// The halo exchanges of the present layout: outside the domain what the dense fields
/// hold there (the periodic images along periodic axes, else zero), in absent blocks the
/// dry state.
fn exchanges<T: Real>(
    blocks: &BlockGrid,
    boundaries: &Boundaries,
    corners: &Arc<Field<T>>,
) -> Result<Exchanges, FloodError> {
    let side = |axis: usize| {
        if boundaries.periodic(axis) {
            [Side::Periodic; 2]
        } else {
            [Side::Value(0.0); 2]
        }
    };
    let sides = [side(0), side(1), [Side::Value(0.0); 2]];
    let c = corners.clone();
    let surface = HaloRule {
        sides,
        absent: Absent::Values(Arc::new(move |q: [usize; 3]| dry_surface(&c, q[0], q[1]))),
    };
    let zero = HaloRule {
        sides,
        absent: Absent::Value(0.0),
    };
    Ok(Exchanges {
        surface: HaloExchange::new(blocks, &surface)?,
        zero: HaloExchange::new(blocks, &zero)?,
    })
}
