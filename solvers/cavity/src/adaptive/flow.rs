//! [`AdaptiveCavity`]: the lid-driven cavity on a tree of levels that follows the
//! vorticity and the stream function's wavelet details.
//!
//! The model and its kernels are the uniform solver's ([`crate::kernels::flow`]),
//! launched level by level over every present block (coarse copies included, which the
//! restriction then overwrites with the finer values over them); the stream function
//! comes from [`TreePoisson`]. Every level steps with the same time step, the finest
//! level's. Every [`AdaptiveConfig::adapt_every`] steps the details of `w` and `psi`
//! (relative to their largest magnitude) decide the blocks ([`Hierarchy::measure`],
//! [`Hierarchy::adapt`]); new blocks take the prediction from the coarser level.

use super::hierarchy::Hierarchy;
use super::poisson::TreePoisson;
use super::wavelet::transform::copy;
use crate::config::require;
use crate::kernels::flow;
use crate::model::{stable_time_step, worst_node, Change, LID_SPEED};
use crate::step_graph::{own_stream, recording_device, StepGraph, WarmUp};
use crate::{CavityError, Check, Outcome};
use std::collections::HashMap;
use stencil_runtime::blocks::{BlockMeasure, Predictor};
use stencil_runtime::{Backend, BlockField, BlockKey, Blowup, Field};

/// The settings of an adaptive run.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveConfig {
    /// Reynolds number.
    pub re: f64,
    /// Points per axis of level 0 (`2^k + 1`).
    pub n0: usize,
    /// Points per axis of a block.
    pub block: usize,
    /// Levels (the finest has `(n0 - 1) 2^(levels - 1) + 1` points per axis).
    pub levels: u8,
    /// Levels present everywhere, always (at least 1).
    pub full: u8,
    /// Threshold of the details, relative to the field's largest magnitude.
    pub eps: f64,
    /// Blocks whose details are all below `coarsening * eps` (and their siblings') go.
    pub coarsening: f64,
    /// Steps between adaptations.
    pub adapt_every: u64,
    /// Fraction of the largest stable time step.
    pub cfl: f64,
    /// Poisson V-cycles per RK4 stage.
    pub poisson_cycles: usize,
}

impl Default for AdaptiveConfig {
    fn default() -> AdaptiveConfig {
        AdaptiveConfig {
            re: 100.0,
            n0: 9,
            block: 16,
            levels: 5,
            full: 3,
            eps: 1e-3,
            coarsening: 0.25,
            adapt_every: 10,
            cfl: 0.8,
            poisson_cycles: 1,
        }
    }
}

impl AdaptiveConfig {
    /// Points per axis of the finest level.
    pub fn finest_points(&self) -> usize {
        (self.n0 - 1) * (1 << (self.levels - 1)) + 1
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), CavityError> {
        require(
            self.n0 >= 5 && (self.n0 - 1).is_power_of_two(),
            "n0",
            self.n0,
            "2^k + 1 points, at least 5",
        )?;
        require(
            (8..=64).contains(&self.block),
            "block",
            self.block,
            "8 to 64 points",
        )?;
        require(
            (1..=12).contains(&self.levels) && self.full > 0 && self.full <= self.levels,
            "levels",
            format!("{} (full {})", self.levels, self.full),
            "1 to 12 levels, of which 1 to all are full",
        )?;
        require(
            self.eps > 0.0 && self.eps < 1.0,
            "eps",
            self.eps,
            "a threshold in (0, 1)",
        )?;
        require(
            self.coarsening > 0.0 && self.coarsening <= 1.0,
            "coarsening",
            self.coarsening,
            "a fraction in (0, 1]",
        )?;
        require(
            self.re > 0.0 && self.re.is_finite(),
            "re",
            self.re,
            "a positive Reynolds number",
        )?;
        require(
            self.cfl > 0.0 && self.cfl <= 1.0,
            "cfl",
            self.cfl,
            "a fraction in (0, 1]",
        )?;
        require(
            self.adapt_every > 0 && self.poisson_cycles > 0,
            "adapt_every/poisson_cycles",
            format!("{}/{}", self.adapt_every, self.poisson_cycles),
            "at least 1 each",
        )
    }
}

/// The cavity on an adaptive tree of levels (see the module's text).
pub struct AdaptiveCavity {
    config: AdaptiveConfig,
    tree: Hierarchy,
    /// Vorticity.
    pub w: BlockField<f64>,
    /// Stream function.
    pub psi: BlockField<f64>,
    stages: [BlockField<f64>; 2],
    sums: [BlockField<f64>; 2],
    details: BlockField<f64>,
    /// `w` at the last check.
    previous: BlockField<f64>,
    /// Time at the last check.
    checked_at: f64,
    poisson: TreePoisson<f64>,
    /// Steps taken.
    pub step: u64,
    /// Simulated time.
    pub time: f64,
    /// The time step (the finest level's stable step times the CFL fraction).
    pub dt: f64,
    /// Blocks added and removed by adaptations so far.
    pub adapted: (u64, u64),
    /// On a CUDA device, record a step into a graph and replay it while the layout and
    /// the time step stay (default); `false` launches every kernel of every step.
    pub graph: bool,
    /// The recorded step, keyed by what it was recorded for; a step of the same key runs
    /// launch by launch before one is recorded.
    recorded: StepGraph<StepKey>,
}

/// What a recorded step stays valid for: the time step (its bits), the grid and its
/// layout.
type StepKey = (u64, u64, u64);

impl AdaptiveCavity {
    /// A cavity at rest on `backend`, levels `0 .. full` present.
    pub fn new(backend: &Backend, config: &AdaptiveConfig) -> Result<AdaptiveCavity, CavityError> {
        config.validate()?;
        let own = own_stream(backend)?;
        let backend = &own;
        let tree = Hierarchy::new(
            backend,
            config.n0,
            config.block,
            config.levels,
            config.full,
            Predictor::Cubic,
        )?;
        let z = || BlockField::<f64>::zeroed(tree.grid());
        let h = 1.0 / (config.finest_points() - 1) as f64;
        Ok(AdaptiveCavity {
            w: z()?,
            psi: z()?,
            stages: [z()?, z()?],
            sums: [z()?, z()?],
            details: z()?,
            previous: z()?,
            checked_at: 0.0,
            poisson: {
                // V(1,1), warm-started from the previous stage, as the uniform solver.
                let mut p = TreePoisson::new(&tree)?;
                (p.pre, p.post) = (1, 1);
                p
            },
            tree,
            config: config.clone(),
            step: 0,
            time: 0.0,
            dt: config.cfl * stable_time_step(config.re, h, LID_SPEED),
            adapted: (0, 0),
            graph: true,
            recorded: StepGraph::new(WarmUp::SameKey),
        })
    }

    /// The tree.
    pub fn tree(&self) -> &Hierarchy {
        &self.tree
    }

    /// The settings.
    pub fn config(&self) -> &AdaptiveConfig {
        &self.config
    }

    /// The wall vorticity of `w` from `psi` on every level (Thom's formula at each
    /// level's spacing).
    fn walls(
        tree: &mut Hierarchy,
        psi: &BlockField<f64>,
        w: &mut BlockField<f64>,
    ) -> Result<(), CavityError> {
        let backend = tree.grid().backend().clone();
        for level in 0..=tree.finest_present() {
            let h = tree.spacing(level);
            let lid = 2.0 * LID_SPEED / h;
            let list = tree.list(level)?;
            let nj = whole_rows(list);
            flow::wall_vorticity::launch_blocks(&backend, list, psi, w, 1.0 / (h * h), lid, 0, nj)?;
        }
        Ok(())
    }

    /// One RK4 step of `dt` (four stages, each a Poisson solve, the wall vorticity and
    /// the stage update on every level), then an adaptation if one is due. On a CUDA
    /// device (with [`AdaptiveCavity::graph`]) the step is recorded into a graph once a
    /// step of the same time step and layout has run launch by launch (which also builds
    /// the layout's plans and tunes the launches), then replayed until either changes.
    pub fn step(&mut self) -> Result<(), CavityError> {
        let grid = self.tree.grid();
        let key = (self.dt.to_bits(), grid.id(), grid.generation());
        let cuda = recording_device(grid.backend(), self.graph);
        let mut recorded = std::mem::replace(&mut self.recorded, StepGraph::new(WarmUp::SameKey));
        let stepped = recorded.run(key, cuda.as_ref(), || self.rk4());
        self.recorded = recorded;
        stepped?;
        self.step += 1;
        self.time += self.dt;
        if self.step.is_multiple_of(self.config.adapt_every) {
            self.adapt()?;
        }
        Ok(())
    }

    /// The four stages of one step, launch by launch; the last writes the new time level
    /// into `w`, so that every step launches the same work on the same fields.
    fn rk4(&mut self) -> Result<(), CavityError> {
        let dt = self.dt;
        let re_inv = 1.0 / self.config.re;
        let cycles = self.config.poisson_cycles;
        let tree = &mut self.tree;
        let poisson = &mut self.poisson;
        let [s0, s1] = &mut self.stages;
        let [a0, a1] = &mut self.sums;
        let w = &mut self.w;
        let psi = &mut self.psi;
        let mut solve = |tree: &mut Hierarchy,
                         psi: &mut BlockField<f64>,
                         w: &mut BlockField<f64>|
         -> Result<(), CavityError> {
            for _ in 0..cycles {
                poisson.cycle(tree, psi, w)?;
            }
            tree.restrict_and_exchange(psi)?;
            AdaptiveCavity::walls(tree, psi, w)?;
            // The stage's halos, for the update that reads it.
            tree.restrict_and_exchange(w)?;
            Ok(())
        };
        // acc_out = (first ? base : acc) + a F(stage); next = (last ? acc : base) + c F,
        // on every level; `solve` filled the stage's halos.
        let update = |tree: &mut Hierarchy,
                      stage: &BlockField<f64>,
                      psi: &BlockField<f64>,
                      [base, acc]: [&BlockField<f64>; 2],
                      [acc_out, next]: [&mut BlockField<f64>; 2],
                      (a, c, first, last): (f64, f64, bool, bool)|
         -> Result<(), CavityError> {
            let backend = tree.grid().backend().clone();
            for level in 0..=tree.finest_present() {
                let hi = 1.0 / tree.spacing(level);
                let list = tree.list(level)?;
                let nj = whole_rows(list);
                flow::rk4_stage::launch_blocks(
                    &backend, list, stage, psi, base, acc, acc_out, next, re_inv, hi, a, c, first,
                    last, 0, nj,
                )?;
            }
            Ok(())
        };
        let (sixth, third, half) = (dt / 6.0, dt / 3.0, dt / 2.0);
        solve(tree, psi, w)?;
        update(tree, w, psi, [w, w], [a0, s0], (sixth, half, true, false))?;
        solve(tree, psi, s0)?;
        update(
            tree,
            s0,
            psi,
            [w, a0],
            [a1, s1],
            (third, half, false, false),
        )?;
        solve(tree, psi, s1)?;
        update(tree, s1, psi, [w, a1], [a0, s0], (third, dt, false, false))?;
        // The last stage writes the new time level into w (a1 receives an unused sum).
        solve(tree, psi, s0)?;
        update(tree, s0, psi, [a0, a0], [a1, w], (0.0, sixth, false, true))?;
        tree.restrict_and_exchange(w)?;
        Ok(())
    }

    /// Adapts the tree to the details of `w` and `psi` (each relative to its largest
    /// magnitude on the tree); returns the blocks added and removed.
    pub fn adapt(&mut self) -> Result<(usize, usize), CavityError> {
        let (eps, coarsening) = (self.config.eps, self.config.coarsening);
        let mut measures: HashMap<BlockKey, BlockMeasure> = HashMap::new();
        for which in 0..2 {
            let field = if which == 0 {
                &mut self.w
            } else {
                &mut self.psi
            };
            self.tree.forward(field, &mut self.details)?;
            let largest = largest_magnitude(&mut self.tree, field)?;
            if largest == 0.0 {
                continue;
            }
            for (key, m) in self
                .tree
                .measure(&self.details, eps * largest, coarsening)?
            {
                let e = measures.entry(key).or_default();
                e.significant |= m.significant;
                e.above_coarsening |= m.above_coarsening;
            }
        }
        let [s0, s1] = &mut self.stages;
        let [a0, a1] = &mut self.sums;
        let change = self.tree.adapt(
            &measures,
            &mut [
                &mut self.w,
                &mut self.psi,
                s0,
                s1,
                a0,
                a1,
                &mut self.details,
                &mut self.previous,
            ],
        )?;
        let (added, removed) = (change.add.len(), change.remove.len());
        self.adapted.0 += added as u64;
        self.adapted.1 += removed as u64;
        Ok((added, removed))
    }

    /// Measures the change of `w` since the last check (over every present block, coarse
    /// copies included) and the Poisson residual, and stops an unstable run with the step
    /// and the place.
    pub fn check(&mut self) -> Result<Check, CavityError> {
        let backend = self.tree.grid().backend().clone();
        let mut measured = Change::default();
        for level in 0..=self.tree.finest_present() {
            let list = self.tree.list(level)?;
            let nj = whole_rows(list);
            let sums = flow::change::launch_blocks(&backend, list, &self.w, &self.previous, 0, nj)?;
            measured = measured.and(sums);
        }
        let bound = Change::bound(1.0 / (self.config.finest_points() - 1) as f64);
        if !measured.stable(bound) {
            return Err(self.instability(bound)?);
        }
        let change = measured.per_time(self.time - self.checked_at);
        let residual = self
            .poisson
            .relative_residual(&mut self.tree, &mut self.psi, &self.w)?;
        self.remember_w()?;
        self.checked_at = self.time;
        Ok(Check {
            step: self.step,
            time: self.time,
            dt: self.dt,
            change,
            poisson_residual: residual,
            largest_vorticity: measured.largest,
        })
    }

    /// `previous = w` on every level (the state a check measures the change from).
    fn remember_w(&mut self) -> Result<(), CavityError> {
        let backend = self.tree.grid().backend().clone();
        for level in 0..=self.tree.finest_present() {
            let list = self.tree.list(level)?;
            copy::launch_blocks(&backend, list, &self.w, &mut self.previous)?;
        }
        Ok(())
    }

    /// The error for a run that went unstable: the first non-finite point of the finest
    /// level that has one, else the point of the largest `|w|`.
    fn instability(&mut self, bound: f64) -> Result<CavityError, CavityError> {
        let top = self.tree.finest_present();
        let (_, w) = self.uniform(top)?;
        let n = self.tree.points(top);
        let w = w.interior()?;
        let worst = worst_node(&w);
        let (i, j) = (worst % n, worst / n);
        let h = self.tree.spacing(top);
        Ok(CavityError::Unstable {
            at: Blowup {
                step: self.step,
                time: self.time,
                i,
                j,
                x: i as f64 * h,
                y: j as f64 * h,
            },
            value: w[worst],
            bound,
        })
    }

    /// Runs until `w` changes by less than `tolerance` per unit time (relative), checking
    /// every `check_every` steps and calling `observer` after each check (it returns
    /// `false` to stop); gives up after `max_steps`.
    pub fn run_to_steady(
        &mut self,
        tolerance: f64,
        check_every: u64,
        max_steps: u64,
        mut observer: impl FnMut(&AdaptiveCavity, &Check) -> bool,
    ) -> Result<Outcome, CavityError> {
        loop {
            self.step()?;
            if !self.step.is_multiple_of(check_every.max(1)) {
                continue;
            }
            let check = self.check()?;
            let go_on = observer(self, &check);
            if check.change < tolerance {
                return Ok(Outcome::Steady);
            }
            if !go_on {
                return Ok(Outcome::Interrupted);
            }
            if self.step >= max_steps {
                return Err(CavityError::StepLimit {
                    steps: self.step,
                    change: check.change,
                    tolerance,
                });
            }
        }
    }

    /// Sets the tree to exactly the blocks `keys`, `w` and `psi` to the slot values given
    /// per block (in `keys`' order), and the step, time and time step: the state just
    /// after a check (see [`super::AdaptiveCheckpoint`]).
    pub fn restore(
        &mut self,
        keys: &[BlockKey],
        w: &[f64],
        psi: &[f64],
        (step, time, dt): (u64, f64, f64),
    ) -> Result<(), CavityError> {
        self.tree.set_blocks(keys)?;
        let z = || BlockField::<f64>::zeroed(self.tree.grid());
        (self.w, self.psi, self.details, self.previous) = (z()?, z()?, z()?, z()?);
        self.stages = [z()?, z()?];
        self.sums = [z()?, z()?];
        let len = self.tree.grid().geometry().slot_len();
        for (k, key) in keys.iter().enumerate() {
            let grid = self.tree.grid();
            self.w
                .set_slot_values(grid, *key, &w[k * len..(k + 1) * len])?;
            self.psi
                .set_slot_values(grid, *key, &psi[k * len..(k + 1) * len])?;
        }
        self.remember_w()?;
        (self.step, self.time, self.dt, self.checked_at) = (step, time, dt, time);
        Ok(())
    }

    /// Cycles the Poisson solve for the current `w` until its relative residual is below
    /// `1e-11` (at most 40 cycles), for a consistent pair at the end of a run; returns the
    /// residual reached.
    pub fn poisson_solve_exactly(&mut self) -> Result<f64, CavityError> {
        let mut relative = f64::INFINITY;
        for _ in 0..40 {
            self.poisson.cycle(&mut self.tree, &mut self.psi, &self.w)?;
            self.tree.restrict_and_exchange(&mut self.psi)?;
            AdaptiveCavity::walls(&mut self.tree, &self.psi, &mut self.w)?;
            relative = self
                .poisson
                .relative_residual(&mut self.tree, &mut self.psi, &self.w)?;
            if relative < 1e-11 {
                break;
            }
        }
        Ok(relative)
    }

    /// The stream function and vorticity on the uniform grid of `level` (finer levels'
    /// values where they are present, the prediction from coarser ones elsewhere),
    /// composed on the host.
    pub fn uniform(&mut self, level: u8) -> Result<(Field<f64>, Field<f64>), CavityError> {
        self.tree.restrict_and_exchange(&mut self.psi)?;
        AdaptiveCavity::walls(&mut self.tree, &self.psi, &mut self.w)?;
        self.tree.restrict_and_exchange(&mut self.w)?;
        Ok((
            self.tree.uniform(&self.psi, level)?,
            self.tree.uniform(&self.w, level)?,
        ))
    }
}

/// The rows of a level's whole domain (the flow kernels' `nj`; a block launch's indices are
/// the whole level's, so their `j0` is 0).
fn whole_rows(list: &stencil_runtime::BlockList) -> i64 {
    list.geometry().domain[1] as i64
}

/// The largest `|u|` off the walls over the tree's present blocks.
fn largest_magnitude(tree: &mut Hierarchy, u: &BlockField<f64>) -> Result<f64, CavityError> {
    let backend = tree.grid().backend().clone();
    let mut largest: f64 = 0.0;
    for level in 0..=tree.finest_present() {
        let list = tree.list(level)?;
        let (_, _, m) = flow::change::launch_blocks(&backend, list, u, u, 0, whole_rows(list))?;
        largest = largest.max(m);
    }
    Ok(largest)
}
