//! The cavity flow and its steps: boundary update, Poisson solve, RK4 step, time-step
//! choice and checks. Each step is a function of its own so that other solvers (the
//! wavelet-adaptive one) can be built from them.

use crate::config::{Config, Until};
use crate::kernels::flow;
use crate::step_graph::{own_stream, recording_device, StepGraph, WarmUp};
use crate::CavityError;
use multigrid::{Options, Solver};
use std::ops::Range;
use stencil_ranks::Slabs;
use stencil_runtime::{Backend, Blowup, Field};

mod change;
mod ranked;
pub use ranked::WholeFlow;
mod timing;

pub(crate) use change::{worst_node, Change};

/// The lid's speed (the velocity scale of `Re`).
pub const LID_SPEED: f64 = 1.0;

/// Wave numbers sampled per axis in [`stable_time_step`].
const MODES: usize = 48;

/// Whether classical RK4 is stable for `dz/dt = z` with `z dt = (re, im)`: the
/// amplification factor `1 + z + z^2/2 + z^3/6 + z^4/24` has modulus at most 1.
fn rk4_stable(re: f64, im: f64) -> bool {
    // Horner's scheme in complex arithmetic.
    let (mut a, mut b) = (1.0 / 24.0, 0.0);
    for c in [1.0 / 6.0, 0.5, 1.0, 1.0] {
        let (x, y) = (a * re - b * im, a * im + b * re);
        a = x + c;
        b = y;
    }
    a * a + b * b <= 1.0 + 1e-12
}

/// The largest stable RK4 step for the central 5-point scheme with viscosity `1 / re` on
/// spacing `h` where `|u| + |v| <= speed`: the step that keeps `dt lambda` inside RK4's
/// stability region for every Fourier mode `(tx, ty)` of the frozen-coefficient operator,
/// `lambda = -4 / (re h^2) (sin^2(tx/2) + sin^2(ty/2)) + i (u sin tx + v sin ty) / h`,
/// with the imaginary part bounded by `speed max(|sin tx|, |sin ty|) / h` (modes sampled
/// on a 48 x 48 grid of `[0, pi]^2`, the step found by bisection). Pure diffusion gives
/// `2.785 re h^2 / 8`, pure advection `2.828 h / speed`.
pub fn stable_time_step(re: f64, h: f64, speed: f64) -> f64 {
    let modes: Vec<(f64, f64)> = (0..MODES * MODES)
        .map(|k| {
            let t = |m: usize| m as f64 / (MODES - 1) as f64 * std::f64::consts::PI;
            let (tx, ty) = (t(k % MODES), t(k / MODES));
            let s = |t: f64| (0.5 * t).sin().powi(2);
            let decay = 4.0 / (re * h * h) * (s(tx) + s(ty));
            let turn = speed / h * tx.sin().abs().max(ty.sin().abs());
            (-decay, turn)
        })
        .collect();
    let stable = |dt: f64| modes.iter().all(|&(a, b)| rk4_stable(a * dt, b * dt));
    // The diffusion and advection limits on their own bound the step from above.
    let (mut lo, mut hi) = (0.0, 2.785 * re * h * h / 8.0);
    if speed > 0.0 {
        hi = f64::min(hi, 2.83 * h / speed);
    }
    if stable(hi) {
        return hi;
    }
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if stable(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// What a check found (every [`Config::check_every`] steps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    /// Steps taken.
    pub step: u64,
    /// Simulated time.
    pub time: f64,
    /// The time step in use from here on.
    pub dt: f64,
    /// The relative change of `w` per unit time since the previous check.
    pub change: f64,
    /// The stream function's Poisson residual `||w + lap psi|| / ||w||`.
    pub poisson_residual: f64,
    /// The largest `|w|` inside.
    pub largest_vorticity: f64,
}

/// Why a run stopped without an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The steady-state tolerance was met.
    Steady,
    /// The requested time was reached.
    ReachedTime,
    /// The observer asked to stop (e.g. Ctrl-C); the state is that of the last check.
    Interrupted,
}

/// The lid-driven cavity: vorticity `w` and stream function `psi` on `n x n` nodes, with
/// `lap(psi) = -w`, `u = psi_y`, `v = -psi_x`, advanced by classical RK4.
pub struct Cavity {
    backend: Backend,
    config: Config,
    h: f64,
    /// Vorticity at the current time (wall values from the last stream function).
    pub w: Field<f64>,
    /// Stream function (zero on the walls).
    pub psi: Field<f64>,
    /// RK4 stage vorticities (two, used in turn).
    stages: [Field<f64>; 2],
    /// RK4 running sums (two, used in turn).
    sums: [Field<f64>; 2],
    /// `w` at the last check.
    previous: Field<f64>,
    poisson: Solver,
    /// Steps taken.
    pub step: u64,
    /// Simulated time.
    pub time: f64,
    /// The time step.
    pub dt: f64,
    /// Time at the last check.
    checked_at: f64,
    /// The recorded step, keyed by the time step it was recorded for; one step
    /// runs launch by launch before a step is recorded, to tune the kernels' launch shapes.
    graph: StepGraph<f64>,
    /// The speed the stable step was last found for, and that step.
    speed: (f64, f64),
    /// The rows of the grid the fields hold: all (`0..n`), or this rank's slab.
    rows: Range<usize>,
    /// Over several ranks, the slabs of rows the ranks hold (the Poisson solver's).
    slabs: Option<Slabs>,
}

impl Cavity {
    /// A cavity at rest on `backend` (on a device, on a stream of its own), after checking
    /// `config`.
    pub fn new(backend: &Backend, config: &Config) -> Result<Cavity, CavityError> {
        Cavity::with_solver(backend, config, |b, n, options| {
            Solver::new(b, n, 2, options)
        })
    }

    /// A cavity at rest whose Poisson solver `solver` makes (from the backend, the nodes
    /// per axis and the options): its fields hold the rows the solver's do.
    fn with_solver(
        backend: &Backend,
        config: &Config,
        solver: impl FnOnce(&Backend, usize, &Options) -> Result<Solver, multigrid::SolveError>,
    ) -> Result<Cavity, CavityError> {
        config.validate()?;
        let own = own_stream(backend)?;
        let backend = &own;
        let n = config.n;
        // V(1,1): the correction from one stage to the next is small and smooth, and
        // every launch of the cycle costs latency on the coarse levels.
        let options = Options {
            precision: config.precision,
            graph: config.graph,
            schedule: config.poisson_schedule,
            pre: 1,
            post: 1,
            ..Options::default()
        };
        let h = config.h();
        let poisson = solver(backend, n, &options)?;
        let rows = poisson.rows();
        let slabs = poisson.slabs();
        let field = || Field::<f64>::zeros_on(backend, &[n, rows.len()], 1);
        Ok(Cavity {
            backend: backend.clone(),
            config: config.clone(),
            h,
            w: field()?,
            psi: field()?,
            stages: [field()?, field()?],
            sums: [field()?, field()?],
            previous: field()?,
            poisson,
            step: 0,
            time: 0.0,
            dt: config.cfl * stable_time_step(config.re, h, LID_SPEED),
            speed: (LID_SPEED, stable_time_step(config.re, h, LID_SPEED)),
            checked_at: 0.0,
            graph: StepGraph::new(WarmUp::AnyStep),
            rows,
            slabs,
        })
    }

    /// The rows of the grid this rank's fields hold (`0..n` on one rank).
    pub fn rows(&self) -> Range<usize> {
        self.rows.clone()
    }

    /// The flow kernels' `j0, nj`: the grid's row of the fields' row 0, and its rows.
    fn kernel_rows(&self) -> (i64, i64) {
        (self.rows.start as i64, self.config.n as i64)
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The backend the fields live on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Brings the wall vorticity up to date with the stream function.
    pub(crate) fn update_walls(&mut self) -> Result<(), CavityError> {
        let rows = self.kernel_rows();
        walls(&self.backend, self.h, &self.psi, &mut self.w, rows)
    }

    /// Restores a state (from a checkpoint): the whole grid's fields (`n * n` values, x
    /// fastest; over several ranks each takes its rows), the step count, time and time
    /// step.
    pub fn restore(
        &mut self,
        w: &[f64],
        psi: &[f64],
        step: u64,
        time: f64,
        dt: f64,
    ) -> Result<(), CavityError> {
        let n = self.config.n;
        // This rank's rows (all on one rank), its ghost rows from the rows beside them.
        let first = self.rows.start as isize;
        let rows = self.rows.len();
        let load = |values: &[f64]| -> Result<Field<f64>, CavityError> {
            if values.len() != n * n {
                return Err(CavityError::Checkpoint(format!(
                    "a field has {} values where a {n} x {n} grid needs {}",
                    values.len(),
                    n * n
                )));
            }
            let host = Field::from_fn(&[n, rows], 1, |p| {
                let j = p[1] + first;
                let inside = (0..n as isize).contains(&p[0]) && (0..n as isize).contains(&j);
                if inside {
                    values[p[0] as usize + n * j as usize]
                } else {
                    0.0
                }
            });
            Ok(host.to(&self.backend)?)
        };
        self.w = load(w)?;
        self.psi = load(psi)?;
        self.previous.copy_from(&self.w)?;
        self.step = step;
        self.time = time;
        self.checked_at = time;
        self.dt = dt;
        self.graph.clear();
        Ok(())
    }

    /// Cycles the Poisson solve for the current `w` until its residual is below `1e-11`
    /// of `||w||` (at most 30 cycles), for a consistent pair at the end of a run. Returns
    /// the relative residual reached.
    pub fn poisson_solve_exactly(&mut self) -> Result<f64, CavityError> {
        let size = self.w.interior()?.iter().map(|v| v * v).sum::<f64>();
        let size = self.all_sum(size).sqrt();
        let mut relative = 0.0;
        for _ in 0..30 {
            self.poisson.cycle(&mut self.psi, &self.w)?;
            relative =
                self.poisson.residual_norm(&mut self.psi, &self.w)? / size.max(f64::MIN_POSITIVE);
            if relative < 1e-11 {
                break;
            }
        }
        Ok(relative)
    }

    /// One RK4 step of `dt`: four times a Poisson solve for the stage's vorticity, its wall
    /// vorticity, and the stage update. On a CUDA device with [`Config::graph`] the step is
    /// recorded into a CUDA graph once a step has run launch by launch, then replayed while `dt`
    /// stays.
    pub fn rk4_step(&mut self) -> Result<(), CavityError> {
        let cuda = recording_device(&self.backend, self.config.graph);
        let mut graph = std::mem::replace(&mut self.graph, StepGraph::new(WarmUp::AnyStep));
        let stepped = graph.run(self.dt, cuda.as_ref(), || self.rk4_stages());
        self.graph = graph;
        stepped?;
        self.step += 1;
        self.time += self.dt;
        Ok(())
    }

    /// The four stages of one step, launch by launch. Buffers: the base `w`, stage
    /// vorticities `s0`, `s1` and running sums `a0`, `a1`; the last stage writes `w`, so
    /// every step uses the same fields (and a recorded step replays).
    fn rk4_stages(&mut self) -> Result<(), CavityError> {
        let dt = self.dt;
        let (re_inv, h_inv, h) = (1.0 / self.config.re, 1.0 / self.h, self.h);
        let cycles = self.config.poisson_cycles;
        let b = self.backend.clone();
        let (j0, nj) = self.kernel_rows();
        let slabs = self.slabs.as_ref();
        let [s0, s1] = &mut self.stages;
        let [a0, a1] = &mut self.sums;
        // The stream function of a stage's vorticity, then that vorticity's wall values;
        // over ranks, both then read across the cuts.
        let mut solve = |psi: &mut Field<f64>, w: &mut Field<f64>| -> Result<(), CavityError> {
            poisson_cycles(&mut self.poisson, psi, w, cycles)?;
            walls(&b, h, psi, w, (j0, nj))?;
            fill_cuts(slabs, &b, psi)?;
            fill_cuts(slabs, &b, w)
        };
        // acc_out = (first ? base : acc) + a F(stage); next = (last ? acc : base) + c F.
        let update = |stage: &Field<f64>,
                      psi: &Field<f64>,
                      [base, acc]: [&Field<f64>; 2],
                      [acc_out, next]: [&mut Field<f64>; 2],
                      (a, c, first, last): (f64, f64, bool, bool)|
         -> Result<(), CavityError> {
            let (r, hi) = (re_inv, h_inv);
            flow::rk4_stage::launch(
                &b, stage, psi, base, acc, acc_out, next, r, hi, a, c, first, last, j0, nj,
            )?;
            Ok(())
        };
        let w = &mut self.w;
        let psi = &mut self.psi;
        solve(psi, w)?;
        update(w, psi, [w, w], [a0, s0], (dt / 6.0, dt / 2.0, true, false))?;
        solve(psi, s0)?;
        update(
            s0,
            psi,
            [w, a0],
            [a1, s1],
            (dt / 3.0, dt / 2.0, false, false),
        )?;
        solve(psi, s1)?;
        update(s1, psi, [w, a1], [a0, s0], (dt / 3.0, dt, false, false))?;
        // The last stage writes the new time level into w (a1 receives an unused sum).
        solve(psi, s0)?;
        update(s0, psi, [a0, a0], [a1, w], (0.0, dt / 6.0, false, true))
    }

    /// The largest stable time step for the current flow, times [`Config::cfl`] (waits
    /// for the device). The stability region is searched again only when the flow's
    /// speed changed by more than 1%.
    pub fn stable_time_step(&mut self) -> Result<f64, CavityError> {
        let (j0, nj) = self.kernel_rows();
        fill_cuts(self.slabs.as_ref(), &self.backend, &mut self.psi)?;
        let speed = flow::speed::launch(&self.backend, &self.psi, 1.0 / self.h, j0, nj)?;
        let speed = self.all_max(speed).max(LID_SPEED);
        if (speed - self.speed.0).abs() > 0.01 * self.speed.0 {
            self.speed = (speed, stable_time_step(self.config.re, self.h, speed));
        }
        Ok(self.config.cfl * self.speed.1)
    }

    /// Measures the change since the last check, checks stability (a non-finite value or
    /// `|w| > 100 U / h` stops the run with the step and the place), and updates the time
    /// step: it shrinks at once when the flow needs it and grows when the stable step is
    /// 20% larger. Waits for the device.
    pub fn check(&mut self) -> Result<Check, CavityError> {
        let (j0, nj) = self.kernel_rows();
        let (moved, size, largest) =
            flow::change::launch(&self.backend, &self.w, &self.previous, j0, nj)?;
        let measured = Change {
            moved: self.all_sum(moved),
            size: self.all_sum(size),
            largest: self.all_max(largest),
        };
        let bound = Change::bound(self.h);
        if !measured.stable(bound) {
            return Err(self.instability(bound)?);
        }
        let change = measured.per_time(self.time - self.checked_at);
        let residual = self.poisson.residual_norm(&mut self.psi, &self.w)?;
        self.previous.copy_from(&self.w)?;
        self.checked_at = self.time;
        let stable = self.stable_time_step()?;
        if stable < self.dt || stable > 1.2 * self.dt {
            self.dt = stable;
        }
        Ok(Check {
            step: self.step,
            time: self.time,
            dt: self.dt,
            change,
            poisson_residual: residual / measured.size.sqrt().max(f64::MIN_POSITIVE),
            largest_vorticity: measured.largest,
        })
    }

    /// The error for a run that went unstable: the first non-finite node, else the node of
    /// the largest `|w|`.
    fn instability(&self, bound: f64) -> Result<CavityError, CavityError> {
        let n = self.config.n;
        let w = self.w.interior()?;
        let worst = worst_node(&w);
        let (i, j) = (worst % n, self.rows.start + worst / n);
        let (i, j, value) = self.worst_over_ranks(i, j, w[worst]);
        Ok(CavityError::Unstable {
            at: Blowup {
                step: self.step,
                time: self.time,
                i,
                j,
                x: i as f64 * self.h,
                y: j as f64 * self.h,
            },
            value,
            bound,
        })
    }

    /// Runs until `config.until`, calling `observer` after every check; the observer
    /// returns `false` to stop (the state is then that of the check). The last step of a
    /// timed run is shortened to land on the end time.
    pub fn run(
        &mut self,
        mut observer: impl FnMut(&Cavity, &Check) -> bool,
    ) -> Result<Outcome, CavityError> {
        let every = self.config.check_every as u64;
        loop {
            if let Until::Time(end) = self.config.until {
                if self.time >= end * (1.0 - 1e-14) {
                    let check = self.check()?;
                    observer(self, &check);
                    return Ok(Outcome::ReachedTime);
                }
                if self.time + self.dt > end {
                    self.dt = end - self.time;
                }
            }
            self.rk4_step()?;
            let at_check = self.step.is_multiple_of(every);
            if !at_check {
                continue;
            }
            let check = self.check()?;
            let go_on = observer(self, &check);
            if self.config.until == Until::Steady && check.change < self.config.tolerance {
                return Ok(Outcome::Steady);
            }
            if !go_on {
                return Ok(Outcome::Interrupted);
            }
            if self.step >= self.config.max_steps {
                return Err(CavityError::StepLimit {
                    steps: self.step,
                    change: check.change,
                    tolerance: self.config.tolerance,
                });
            }
        }
    }
}

/// Boundary update: the wall vorticity of `w` from the stream function `psi` on a grid of
/// spacing `h` (Thom's formula; see [`flow::wall_vorticity`]), fields of the whole grid.
pub fn wall_update(
    backend: &Backend,
    h: f64,
    psi: &Field<f64>,
    w: &mut Field<f64>,
) -> Result<(), CavityError> {
    let whole = (0, psi.extent()[1] as i64);
    walls(backend, h, psi, w, whole)
}

/// [`wall_update`] on fields holding rows `j0..` of a grid of `nj` rows (`rows`).
fn walls(
    backend: &Backend,
    h: f64,
    psi: &Field<f64>,
    w: &mut Field<f64>,
    (j0, nj): (i64, i64),
) -> Result<(), CavityError> {
    let (h2inv, lid) = (1.0 / (h * h), 2.0 * LID_SPEED / h);
    flow::wall_vorticity::launch(backend, psi, w, h2inv, lid, j0, nj)?;
    Ok(())
}

/// Over several ranks, fills the ghost rows of `f` at this rank's cuts (nothing on one).
fn fill_cuts(slabs: Option<&Slabs>, b: &Backend, f: &mut Field<f64>) -> Result<(), CavityError> {
    match slabs {
        Some(s) => s
            .fill_cuts(b, f, 1)
            .map_err(|e| CavityError::Ranks(e.to_string())),
        None => Ok(()),
    }
}

/// Poisson solve: `cycles` multigrid cycles for `-lap(psi) = w`, warm-started from the
/// current `psi` (queued; nothing is read back, so it may be recorded into a graph).
pub fn poisson_cycles(
    solver: &mut Solver,
    psi: &mut Field<f64>,
    w: &Field<f64>,
    cycles: usize,
) -> Result<(), CavityError> {
    for _ in 0..cycles {
        solver.cycle(psi, w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stable_step_meets_the_known_limits() {
        let h = 1.0 / 256.0;
        // Pure diffusion: the negative real axis up to 2.785.
        let d = stable_time_step(1000.0, h, 0.0);
        assert!((d - 2.785 * 1000.0 * h * h / 8.0).abs() < 1e-12 * d);
        // Advection dominated: the imaginary axis up to 2 sqrt 2.
        let a = stable_time_step(1e12, h, 1.0);
        assert!((a / (2.0 * 2f64.sqrt() * h) - 1.0).abs() < 0.01, "{a}");
        // Both: no larger than either, no smaller than the sum of the fractions, and a
        // step 5% longer is unstable for some mode.
        let (re, speed) = (1000.0, 1.0);
        let both = stable_time_step(re, h, speed);
        let diffusion = 2.785 * re * h * h / 8.0;
        let advection = 2.828 * h / speed;
        assert!(both <= diffusion.min(advection) * (1.0 + 1e-9));
        assert!(both >= 1.0 / (1.0 / diffusion + 1.0 / advection));
        let modes = |dt: f64| {
            (0..MODES * MODES).all(|k| {
                let t = |m: usize| m as f64 / (MODES - 1) as f64 * std::f64::consts::PI;
                let (tx, ty) = (t(k % MODES), t(k / MODES));
                let s = |t: f64| (0.5 * t).sin().powi(2);
                let a = -4.0 / (re * h * h) * (s(tx) + s(ty)) * dt;
                let b = speed / h * tx.sin().abs().max(ty.sin().abs()) * dt;
                rk4_stable(a, b)
            })
        };
        assert!(modes(both) && !modes(1.05 * both));
    }
}
