//! [`Solver`]: the defect-correction iteration with its hierarchy, right-hand side buffer
//! and recorded CUDA graphs kept across solves, for callers that solve the same operator
//! many times (a flow solver's pressure or stream-function equation at every time step).

use crate::kernels::mg;
use crate::ops::Ops;
use crate::options::{Options, Order, Precision};
use crate::preconditioner::Hierarchy;
use crate::problem::HALO;
use crate::report::{CycleStat, LevelStat, Report};
use crate::solve::check;
use crate::SolveError;
use std::collections::VecDeque;
use std::time::Instant;
use stencil_runtime::cuda::{Graph, TrialMark};
use stencil_runtime::{Backend, Error, Field, Real};

/// Cycles in a row that must each reduce the residual by less than
/// [`Options::stagnation`] before the solve stops as stagnated.
const STAGNANT_CYCLES: usize = 3;

/// How far above the tolerance (as a factor) the predicted residual of a cycle must be for
/// the next cycle to be queued before that cycle's residual is read.
const LOOKAHEAD_MARGIN: f64 = 3.0;

/// What the outer iteration asks of the preconditioner, whatever its precision.
pub(crate) trait Preconditioner {
    /// The defect `rhs - A u` of the options' order into level 0's right-hand side, on
    /// level 0's grid; its 2-norm (NaN on a backend whose reductions are unread or
    /// deferred; a deferred read gives the sum of squares).
    fn defect(
        &mut self,
        backend: &Backend,
        u: &mut Field<f64>,
        rhs: &Field<f64>,
    ) -> Result<f64, Error>;
    /// `e = 0` and one cycle for level 0's right-hand side.
    fn precondition(&mut self) -> Result<(), Error>;
    /// `u += e`.
    fn correct(&mut self, u: &mut Field<f64>) -> Result<(), Error>;
    /// `next = u + e` and the 2nd-order defect `rhs - A next` into level 0's right-hand
    /// side, in one pass; its 2-norm (NaN, or deferred, as for `defect`).
    fn correct_defect(
        &mut self,
        backend: &Backend,
        u: &mut Field<f64>,
        next: &mut Field<f64>,
        rhs: &Field<f64>,
    ) -> Result<f64, Error>;
    /// Full multigrid from `u`'s boundary values for `rhs`, into `u`.
    fn full_multigrid(&mut self, u: &mut Field<f64>, rhs: &Field<f64>) -> Result<(), Error>;
    /// Per-level timing (with [`Options::profile`]).
    fn stats(&self) -> Vec<LevelStat>;
}

impl<T: Real> Preconditioner for Hierarchy<T> {
    fn defect(
        &mut self,
        backend: &Backend,
        u: &mut Field<f64>,
        rhs: &Field<f64>,
    ) -> Result<f64, Error> {
        let (ops, order, h2inv) = (self.ops.clone(), self.options.order, self.finest_h2inv());
        ops.defect(backend, order, u, rhs, &mut self.levels[0].r, h2inv)
    }

    fn precondition(&mut self) -> Result<(), Error> {
        self.cycle_from_zero()
    }

    fn correct(&mut self, u: &mut Field<f64>) -> Result<(), Error> {
        mg::correct::launch(self.backend(), u, &self.levels[0].e)
    }

    fn correct_defect(
        &mut self,
        backend: &Backend,
        u: &mut Field<f64>,
        next: &mut Field<f64>,
        rhs: &Field<f64>,
    ) -> Result<f64, Error> {
        let (ops, h2inv) = (self.ops.clone(), self.finest_h2inv());
        let l0 = &mut self.levels[0];
        ops.correct_defect2(backend, u, &mut l0.e, rhs, next, &mut l0.r, h2inv)
    }

    fn full_multigrid(&mut self, u: &mut Field<f64>, rhs: &Field<f64>) -> Result<(), Error> {
        let backend = self.backend().clone();
        let l0 = &mut self.levels[0];
        mg::narrow::launch(&backend, u, &mut l0.e)?;
        mg::narrow::launch(&backend, rhs, &mut l0.r)?;
        Hierarchy::full_multigrid(self)?;
        let (lo, hi) = self.ops.sides();
        mg::replace::launch(&backend, u, &self.levels[0].e, lo, hi)
    }

    fn stats(&self) -> Vec<LevelStat> {
        self.stats.clone()
    }
}

/// Which recorded piece of work a graph replays.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    /// The preconditioner's cycle alone (the update and the next defect follow it in one
    /// pass, with the defect's norm).
    Precondition = 0,
    /// The preconditioner's cycle and `u += e` (the defect is computed with its norm).
    Correct = 1,
    /// The defect (norm unread), the preconditioner's cycle and `u += e`:
    /// [`Solver::cycle`].
    Cycle = 2,
}

/// The fields a recording reads and writes (their device addresses): a graph replays
/// only for the same ones.
type Key = (Work, u64, u64);

/// One kind of work: the last arguments it ran with, and its graph once recorded.
#[derive(Default)]
struct Recording {
    /// The key of the work last run launch by launch, how many times in a row, and the
    /// launch-shape trials' moment before the last run.
    seen: Option<(Key, usize, TrialMark)>,
    graph: Option<(Key, Graph)>,
}

/// A multigrid defect-correction solver for one grid and one set of [`Options`], kept
/// across solves: the hierarchy is allocated once and, on a CUDA device with
/// [`Options::graph`], each cycle is recorded into a CUDA graph on its second use and
/// replayed after that (for the same solution and right-hand side fields).
///
/// [`Solver::solve`] iterates to the tolerance, with a report. [`Solver::cycle`] queues
/// one cycle and reads nothing back, so a time-stepping code can warm-start from the
/// previous step's solution, run a fixed number of cycles per step without waiting for
/// the device, and record them inside a graph of its own step.
///
/// ```no_run
/// use multigrid::{Options, Solver};
/// use stencil_runtime::{Backend, Field};
/// let backend = Backend::auto().unwrap();
/// let n = 257;
/// let mut solver = Solver::new(&backend, n, 2, &Options::default()).unwrap();
/// let mut u = Field::<f64>::zeros_on(&backend, &[n, n], 1).unwrap(); // boundary values 0
/// let f = Field::<f64>::from_fn(&[n, n], 1, |_| 1.0).to(&backend).unwrap();
/// for _step in 0..100 {
///     solver.cycle(&mut u, &f).unwrap(); // warm-started: one cycle per step
/// }
/// let r = solver.residual_norm(&mut u, &f).unwrap();
/// ```
pub struct Solver {
    backend: Backend,
    /// The same stream, with reductions unread (their norms are not needed in a cycle).
    quiet: Backend,
    /// The same stream, with reductions read later (each cycle's residual norm, read while
    /// the next cycle runs); its page-locked slots are reused from solve to solve.
    deferred: Backend,
    n: usize,
    dims: usize,
    h2inv: f64,
    options: Options,
    ops: Ops,
    mg: Box<dyn Preconditioner>,
    /// The nodes along the last axis this rank's fields hold (all of them on one rank).
    rows: std::ops::Range<usize>,
    /// The right-hand side with penalty terms, for [`Solver::solve`] with penalty sides
    /// (allocated by the first such solve, lent to it while it runs).
    rhs: Option<Field<f64>>,
    recordings: [Recording; 3],
    /// The other buffer of the solution while [`Solver::solve`] alternates between two
    /// (the update and the next defect run as one pass, which cannot write in place).
    next: Option<Field<f64>>,
}

impl Solver {
    /// A solver for `n` nodes per axis (`2^k + 1`) on `dims` (2 or 3) axes, on `backend`,
    /// with the hierarchy of `options` allocated there. Invalid options or sizes are typed
    /// errors.
    pub fn new(
        backend: &Backend,
        n: usize,
        dims: usize,
        options: &Options,
    ) -> Result<Solver, SolveError> {
        check(n, dims, options)?;
        let ops = Ops::new(dims, options);
        let mg: Box<dyn Preconditioner> = match options.precision {
            Precision::F64 => Box::new(Hierarchy::<f64>::new(backend, n, ops.clone(), options)?),
            Precision::Mixed => Box::new(Hierarchy::<f32>::new(backend, n, ops.clone(), options)?),
        };
        Ok(Solver::assemble(backend, n, dims, options, ops, mg, 0..n))
    }

    /// A solver of `n` nodes per axis on `dims` axes around the preconditioner `mg` of
    /// operator `ops`, whose fields hold nodes `rows` of the last axis.
    pub(crate) fn assemble(
        backend: &Backend,
        n: usize,
        dims: usize,
        options: &Options,
        ops: Ops,
        mg: Box<dyn Preconditioner>,
        rows: std::ops::Range<usize>,
    ) -> Solver {
        let h = 1.0 / (n - 1) as f64;
        let (quiet, deferred) = match backend {
            Backend::Cuda(c) => (
                Backend::Cuda(c.clone().with_unread_reductions(true)),
                Backend::Cuda(c.clone().with_deferred_reductions(true)),
            ),
            Backend::Cpu => (Backend::Cpu, Backend::Cpu),
        };
        Solver {
            backend: backend.clone(),
            quiet,
            deferred,
            n,
            dims,
            h2inv: 1.0 / (h * h),
            options: options.clone(),
            ops,
            mg,
            rows,
            rhs: None,
            recordings: Default::default(),
            next: None,
        }
    }

    /// The extent of this rank's fields: `n` per axis, this rank's nodes along the last.
    pub fn extent(&self) -> Vec<usize> {
        let mut e = vec![self.n; self.dims];
        e[self.dims - 1] = self.rows.len();
        e
    }

    /// Over several ranks, the slabs of the last axis the ranks' fields hold (the finest
    /// level's); `None` on one rank.
    pub fn slabs(&self) -> Option<stencil_ranks::Slabs> {
        self.ops.slabs()
    }

    /// The nodes along the last axis this rank's fields hold: `0..n` on one rank.
    pub fn rows(&self) -> std::ops::Range<usize> {
        self.rows.clone()
    }

    /// Nodes per axis.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Axes (2 or 3).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The options it was made with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Queues one defect-correction cycle for `-A u = f` (residual of the options' order in
    /// f64, one preconditioner cycle, `u += e`) and returns without waiting or reading
    /// anything back. `f` is used as it is: with [`crate::BoundaryKind::Penalty`] sides it
    /// must already carry the penalty terms ([`Solver::solve`] adds them itself). Inside a
    /// caller's CUDA graph capture the work is recorded there.
    pub fn cycle(&mut self, u: &mut Field<f64>, f: &Field<f64>) -> Result<(), SolveError> {
        self.replayed(Work::Cycle, u, f)
    }

    /// Over several ranks, the seconds one exchange of the ghost planes of `u` (this
    /// rank's part of the finest level) takes, averaged over `repeats` (`None` on one
    /// rank).
    pub fn exchange_seconds(
        &mut self,
        u: &mut Field<f64>,
        repeats: usize,
    ) -> Result<Option<f64>, SolveError> {
        Ok(self.ops.cut_seconds(&self.backend, u, repeats)?)
    }

    /// The 2-norm of the residual `f - A u` of the options' order (waits for the device).
    pub fn residual_norm(&mut self, u: &mut Field<f64>, f: &Field<f64>) -> Result<f64, SolveError> {
        Ok(self.mg.defect(&self.backend, u, f)?)
    }

    /// Solves `-A u = f` to the relative residual `options.tolerance`, starting from `u`
    /// (whose boundary nodes hold the Dirichlet values) and leaving the answer there.
    pub fn solve(&mut self, u: &mut Field<f64>, f: &Field<f64>) -> Result<Report, SolveError> {
        if !self.ops.has_penalty_sides() {
            return self.iterate(u, f, None);
        }
        let mut rhs = match self.rhs.take() {
            Some(rhs) => rhs,
            None => Field::<f64>::zeros_on(&self.backend, &self.extent(), HALO)?,
        };
        let report = self.iterate(u, f, Some(&mut rhs));
        self.rhs = Some(rhs);
        report
    }

    /// [`Solver::solve`], with `penalty_rhs` as the buffer of the right-hand side when
    /// sides are in the penalty form (else `f` is the right-hand side as it is).
    fn iterate(
        &mut self,
        u: &mut Field<f64>,
        f: &Field<f64>,
        penalty_rhs: Option<&mut Field<f64>>,
    ) -> Result<Report, SolveError> {
        let setup = Instant::now();
        if self.ops.all_periodic() {
            check_compatible(&self.backend, &self.ops, f)?;
        }
        // The penalty form carries kappa g / h^2 in the right-hand side.
        let rhs: &Field<f64> = match penalty_rhs {
            Some(buffer) => {
                self.ops
                    .penalty_rhs(&self.backend, u, f, buffer, self.h2inv)?;
                buffer
            }
            None => f,
        };
        let mut report = Report {
            setup_seconds: setup.elapsed().as_secs_f64(),
            ..Report::default()
        };
        // With the 2nd-order defect and fused launches, the update and the next defect run
        // as one pass into a second buffer of the solution, and the two buffers alternate.
        let fused = self.options.schedule_on(&self.backend).update_with_defect
            && self.options.order == Order::Second;
        let mut next = match (fused, self.next.take()) {
            (true, Some(next)) => Some(next),
            (true, None) => Some(Field::<f64>::zeros_on(&self.backend, &self.extent(), HALO)?),
            (false, _) => None,
        };
        let start = Instant::now();
        let mut flipped = false;
        let outcome = self.cycles(u, rhs, next.as_mut(), &mut flipped, &mut report);
        if let Some(mut other) = next {
            if flipped {
                // `u` holds the solver's buffer, with the answer: copy it into the
                // caller's and give that back.
                other.copy_from(u)?;
                std::mem::swap(u, &mut other);
            }
            self.next = Some(other);
        }
        outcome?;
        self.backend.synchronize()?;
        report.solve_seconds = start.elapsed().as_secs_f64();
        let replayed = if fused {
            Work::Precondition
        } else {
            Work::Correct
        };
        report.graph_nodes = self.recordings[replayed as usize]
            .graph
            .as_ref()
            .map(|(_, g)| g.nodes());
        if self.options.profile {
            report.levels = self.mg.stats();
        }
        Ok(report)
    }

    /// The iteration of [`Solver::solve`] from `u` for `rhs`, recording each cycle in
    /// `report`. With `next`, each cycle's update writes there and the two fields swap
    /// (`flipped` tells whether they are swapped at the end).
    ///
    /// A cycle's residual norm is read while the device already runs the next cycle when
    /// the last rate predicts that the residual stays above [`LOOKAHEAD_MARGIN`] times the
    /// tolerance, so the device does not sit idle while the host reads a norm. The
    /// decision depends only on the residuals, so every backend runs the same cycles; when
    /// the cycle queued ahead turns out to be one more than needed, it is reported too.
    fn cycles(
        &mut self,
        u: &mut Field<f64>,
        rhs: &Field<f64>,
        mut next: Option<&mut Field<f64>>,
        flipped: &mut bool,
        report: &mut Report,
    ) -> Result<(), SolveError> {
        let initial = self.mg.defect(&self.backend, u, rhs)?;
        report.initial = initial;
        if initial == 0.0 {
            return Ok(());
        }
        // The cycles' norms: left on the device and read later, or (on the CPU) kept here.
        // Values an earlier solve left unread (it stopped with an error) are dropped.
        let norms_on = self.deferred.clone();
        if let Backend::Cuda(c) = &norms_on {
            c.discard_deferred();
        }
        let mut host_norms = VecDeque::new();
        let options = self.options.clone();
        let tolerance = options.tolerance;
        let mut queue = |solver: &mut Self,
                         u: &mut Field<f64>,
                         next: Option<&mut Field<f64>>,
                         host_norms: &mut VecDeque<f64>,
                         cycle: usize|
         -> Result<(), SolveError> {
            let norm = solver.queue_cycle(cycle, &norms_on, u, rhs, next, flipped)?;
            if let Backend::Cpu = norms_on {
                host_norms.push_back(norm);
            }
            Ok(())
        };
        queue(self, u, next.as_deref_mut(), &mut host_norms, 1)?;
        let mut queued = 1;
        let mut previous = 1.0;
        let mut predicting_rate = None;
        let mut stagnant = 0;
        let mut t0 = Instant::now();
        for cycle in 1..=options.max_cycles {
            let ahead =
                predicting_rate.is_some_and(|rate| previous * rate > LOOKAHEAD_MARGIN * tolerance);
            if queued == cycle && cycle < options.max_cycles && ahead {
                queue(self, u, next.as_deref_mut(), &mut host_norms, cycle + 1)?;
                queued += 1;
            }
            let norm = match &norms_on {
                // A deferred value is the defect kernel's sum of squares.
                Backend::Cuda(c) => c
                    .read_deferred()?
                    .and_then(|v| v.first().copied())
                    .map(|sum| self.ops.norm_of(sum)),
                Backend::Cpu => host_norms.pop_front(),
            };
            let residual = norm.unwrap_or(f64::NAN) / initial;
            let rate = residual / previous;
            report.cycles.push(CycleStat {
                residual,
                rate,
                seconds: t0.elapsed().as_secs_f64(),
            });
            t0 = Instant::now();
            if !residual.is_finite() || residual > 1e3 {
                return Err(SolveError::Diverged { cycle, residual });
            }
            if residual <= tolerance && queued == cycle {
                break;
            }
            stagnant = if rate > options.stagnation {
                stagnant + 1
            } else {
                0
            };
            if stagnant >= STAGNANT_CYCLES {
                return Err(SolveError::Stagnated {
                    cycle,
                    rate,
                    residual,
                });
            }
            if cycle == options.max_cycles {
                return Err(SolveError::NotConverged {
                    cycles: cycle,
                    residual,
                    tolerance,
                });
            }
            // A full multigrid pass's rate says nothing about the cycles after it.
            predicting_rate = (cycle > 1 || !options.fmg).then_some(rate);
            previous = residual;
            if queued == cycle {
                queue(self, u, next.as_deref_mut(), &mut host_norms, cycle + 1)?;
                queued += 1;
            }
        }
        if self.ops.all_periodic() {
            // The solution is defined up to a constant: return the one of zero mean.
            let mean = self.ops.mean(&self.backend, u)?;
            mg::shift::launch(&self.backend, u, mean)?;
        }
        Ok(())
    }

    /// Queues cycle `cycle` (full multigrid for the first with [`Options::fmg`]) and the
    /// defect after it, whose norm is computed on `norms_on` (returned, or NaN there when
    /// it is deferred).
    fn queue_cycle(
        &mut self,
        cycle: usize,
        norms_on: &Backend,
        u: &mut Field<f64>,
        rhs: &Field<f64>,
        next: Option<&mut Field<f64>>,
        flipped: &mut bool,
    ) -> Result<f64, SolveError> {
        if cycle == 1 && self.options.fmg {
            self.mg.full_multigrid(u, rhs)?;
            return Ok(self.mg.defect(norms_on, u, rhs)?);
        }
        if let Some(next) = next {
            self.replayed(Work::Precondition, u, rhs)?;
            let norm = self.mg.correct_defect(norms_on, u, next, rhs)?;
            std::mem::swap(u, next);
            *flipped = !*flipped;
            return Ok(norm);
        }
        self.replayed(Work::Correct, u, rhs)?;
        Ok(self.mg.defect(norms_on, u, rhs)?)
    }

    /// Runs `work` once, launch by launch.
    fn run(&mut self, work: Work, u: &mut Field<f64>, f: &Field<f64>) -> Result<(), Error> {
        if work == Work::Cycle {
            self.mg.defect(&self.quiet, u, f)?;
        }
        self.mg.precondition()?;
        if work == Work::Precondition {
            return Ok(());
        }
        self.mg.correct(u)
    }

    /// Runs `work`: launch by launch, or, on a CUDA device with [`Options::graph`],
    /// recorded into a graph the second time it runs on the same fields (the first run
    /// tunes the launch shapes) and replayed from then on. Inside a capture of the
    /// caller's it only queues.
    fn replayed(
        &mut self,
        work: Work,
        u: &mut Field<f64>,
        f: &Field<f64>,
    ) -> Result<(), SolveError> {
        let cuda = match &self.backend {
            Backend::Cuda(c)
                if self.options.graph && !self.options.profile && !c.is_capturing() =>
            {
                c.clone()
            }
            _ => return Ok(self.run(work, u, f)?),
        };
        let address = |field: &Field<f64>| field.device_args().map_or(0, |a| a.1);
        // The preconditioner's cycle alone touches neither field.
        let key = match work {
            Work::Precondition => (work, 0, 0),
            _ => (work, address(u), address(f)),
        };
        let slot = &mut self.recordings[work as usize];
        if let Some((k, graph)) = &slot.graph {
            if *k == key {
                graph.launch()?;
                return Ok(());
            }
        }
        // Recorded the second time, once the launch-shape trials have run.
        let (runs, mark) = match slot.seen {
            Some((k, runs, mark)) if k == key => (runs, mark),
            _ => (0, TrialMark::default()),
        };
        if runs == 0 || !cuda.ready_to_record(mark, runs) {
            slot.seen = Some((key, runs + 1, cuda.trial_mark()));
            return Ok(self.run(work, u, f)?);
        }
        let graph = cuda.capture(|| self.run(work, u, f))?;
        graph.launch()?;
        self.recordings[work as usize].graph = Some((key, graph));
        Ok(())
    }
}

/// Whether the right-hand side of a fully periodic problem sums to zero, as a solution
/// needs: its mean must be below `1e-10` of its largest magnitude.
fn check_compatible(backend: &Backend, ops: &Ops, f: &Field<f64>) -> Result<(), SolveError> {
    let mean = ops.mean(backend, f)?;
    let largest = f.interior()?.iter().fold(0f64, |m, v| m.max(v.abs()));
    if mean.abs() > 1e-10 * largest {
        return Err(SolveError::Incompatible { mean, largest });
    }
    Ok(())
}
