//! The outer iteration: defect correction in f64 around the multigrid preconditioner.

use crate::ops::Ops;
use crate::options::{BoundaryKind, Options, Order, Precision};
use crate::preconditioner::Hierarchy;
use crate::problem::{is_coarsenable, Problem};
use crate::report::{CycleStat, Report};
use crate::SolveError;
use std::time::Instant;
use stencil_runtime::{Backend, Field, Real};

/// Cycles in a row that must each reduce the residual by less than
/// [`Options::stagnation`] before the solve stops as stagnated.
const STAGNANT_CYCLES: usize = 3;

/// Solves `problem` on `backend` (its fields must live there) to the relative residual
/// `options.tolerance`, leaving the solution in `problem.u`.
pub fn solve(
    backend: &Backend,
    problem: &mut Problem,
    options: &Options,
) -> Result<Report, SolveError> {
    check(problem, options)?;
    // On a device the solve runs on a stream of its own (after the caller's queued work):
    // a graph capture records everything queued on its stream, which must not include work
    // that other threads queue meanwhile.
    let own = match backend {
        Backend::Cuda(c) => {
            c.synchronize()?;
            Backend::Cuda(solver_stream(c)?)
        }
        Backend::Cpu => Backend::Cpu,
    };
    let report = match options.precision {
        Precision::F64 => run::<f64>(&own, problem, options),
        Precision::Mixed => run::<f32>(&own, problem, options),
    };
    own.synchronize()?;
    report
}

thread_local! {
    /// This thread's solver stream on each device, kept so that the device's memory pool
    /// reuses the previous solve's memory (a new stream each solve would allocate afresh).
    static SOLVER_STREAMS: std::cell::RefCell<Vec<stencil_runtime::Cuda>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The calling thread's solver stream on `cuda`'s device.
fn solver_stream(cuda: &stencil_runtime::Cuda) -> Result<stencil_runtime::Cuda, SolveError> {
    SOLVER_STREAMS.with(|streams| {
        let mut streams = streams.borrow_mut();
        if let Some(s) = streams.iter().find(|s| s.ordinal() == cuda.ordinal()) {
            return Ok(s.clone().with_tuning(cuda.tuning()));
        }
        let s = cuda.new_stream()?;
        streams.push(s.clone());
        Ok(s)
    })
}

fn check(problem: &Problem, o: &Options) -> Result<(), SolveError> {
    let bad = |name, value: String, expected| {
        Err(SolveError::Option {
            name,
            value,
            expected,
        })
    };
    if !is_coarsenable(problem.n) {
        return Err(SolveError::Size { n: problem.n });
    }
    if !is_coarsenable(o.coarsest) {
        return bad(
            "coarsest",
            o.coarsest.to_string(),
            "the coarsest level has 2^k + 1 nodes: 3, 5, 9, ...",
        );
    }
    if !(o.tolerance > 0.0 && o.tolerance < 1.0) {
        return bad(
            "tolerance",
            o.tolerance.to_string(),
            "a relative residual between 0 and 1",
        );
    }
    let coefficients = [o.ax, o.ay, o.az];
    if !coefficients.iter().all(|c| *c > 0.0 && c.is_finite()) {
        return bad(
            "ax, ay, az",
            format!("{}, {}, {}", o.ax, o.ay, o.az),
            "positive finite coefficients",
        );
    }
    if o.max_cycles == 0 {
        return bad("max_cycles", "0".into(), "at least 1");
    }
    if let crate::Smoother::Srj { factors } = &o.smoother {
        if factors.is_empty() || factors.iter().any(|w| w.is_nan() || *w <= 0.0) {
            return bad(
                "smoother",
                format!("{factors:?}"),
                "an SRJ schedule of positive factors",
            );
        }
    }
    let kinds = &o.boundary.sides()[..2 * problem.dims];
    let periodic = |k: &BoundaryKind| *k == BoundaryKind::Periodic;
    if kinds
        .chunks(2)
        .any(|pair| periodic(&pair[0]) != periodic(&pair[1]))
    {
        return bad(
            "boundary",
            format!("{:?}", o.boundary),
            "a periodic side needs the opposite side periodic too",
        );
    }
    let pins = |k: &BoundaryKind| matches!(k, BoundaryKind::Dirichlet | BoundaryKind::Penalty);
    if !kinds.iter().any(pins) && !kinds.iter().all(periodic) {
        return Err(SolveError::Singular);
    }
    if o.order != Order::Second
        && !kinds
            .iter()
            .all(|k| *k == BoundaryKind::Dirichlet || periodic(k))
    {
        return bad("order", format!("{:?}", o.order), "4th and 6th-order defects support Dirichlet sides imposed directly and periodic ones; use Order::Second for Neumann or penalty sides");
    }
    if o.order == Order::Sixth && problem.dims == 3 {
        return bad(
            "order",
            "Sixth".into(),
            "3D defects are of 2nd or 4th order",
        );
    }
    if o.smoother == crate::Smoother::Zebra {
        if problem.dims == 3 {
            return bad(
                "smoother",
                "Zebra".into(),
                "zebra line smoothing is 2D only; use RedBlack in 3D",
            );
        }
        if kinds.iter().any(periodic) {
            return bad("smoother", "Zebra".into(), "zebra lines cannot run along a periodic axis (the systems would be cyclic); use RedBlack");
        }
    }
    Ok(())
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

fn run<T: Real>(
    backend: &Backend,
    problem: &mut Problem,
    options: &Options,
) -> Result<Report, SolveError> {
    let setup = Instant::now();
    let n = problem.n;
    let h2inv = 1.0 / (problem.h * problem.h);
    let ops = Ops::new(problem.dims, options);
    if ops.all_periodic() {
        check_compatible(backend, &ops, &problem.f)?;
    }
    let mut mg = Hierarchy::<T>::new(backend, n, ops.clone(), options)?;
    // The penalty form carries kappa g / h^2 in the right-hand side.
    let mut rhs = Field::<f64>::zeros_on(backend, &vec![n; problem.dims], crate::problem::HALO)?;
    ops.penalty_rhs(backend, &problem.u, &problem.f, &mut rhs, h2inv)?;
    let order = options.order;
    let mut report = Report {
        setup_seconds: setup.elapsed().as_secs_f64(),
        ..Report::default()
    };
    let start = Instant::now();
    // The residual of `u` into the finest level's right-hand side; its norm.
    let defect =
        |u: &mut Field<f64>, r: &mut Field<T>| ops.defect(backend, order, u, &rhs, r, h2inv);
    let initial = defect(&mut problem.u, &mut mg.levels[0].r)?;
    report.initial = initial;
    if initial == 0.0 {
        return Ok(report);
    }
    let mut cycles = Cycles::new(backend, options);
    let mut previous = 1.0;
    let mut stagnant = 0;
    for cycle in 1..=options.max_cycles {
        let t0 = Instant::now();
        if cycle == 1 && options.fmg {
            // From scratch: the solution on level 0 starts as the boundary values, the
            // right-hand side as the 2nd-order problem's.
            let l0 = &mut mg.levels[0];
            ops.narrow(backend, &problem.u, &mut l0.e)?;
            ops.narrow(backend, &rhs, &mut l0.r)?;
            mg.full_multigrid()?;
            ops.replace(backend, &mut problem.u, &mg.levels[0].e)?;
        } else {
            cycles.run(&mut mg, &mut problem.u)?;
        }
        let residual = defect(&mut problem.u, &mut mg.levels[0].r)? / initial;
        let rate = residual / previous;
        report.cycles.push(CycleStat {
            residual,
            rate,
            seconds: t0.elapsed().as_secs_f64(),
        });
        if !residual.is_finite() || residual > 1e3 {
            return Err(SolveError::Diverged { cycle, residual });
        }
        if residual <= options.tolerance {
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
                tolerance: options.tolerance,
            });
        }
        previous = residual;
    }
    if ops.all_periodic() {
        // The solution is defined up to a constant: return the one of zero mean.
        let mean = ops.mean(backend, &problem.u)?;
        ops.shift(backend, &mut problem.u, mean)?;
    }
    backend.synchronize()?;
    report.solve_seconds = start.elapsed().as_secs_f64();
    report.graph_nodes = cycles.graph_nodes();
    if options.profile {
        report.levels = mg.stats.clone();
    }
    Ok(report)
}

/// Runs the preconditioner cycles of the defect correction (`e = 0`, one cycle,
/// `u += e`): launch by launch, or, on a CUDA device with [`Options::graph`], recorded
/// into a CUDA graph on the second cycle (the first tunes the launch shapes) and
/// replayed from then on.
struct Cycles {
    cuda: Option<stencil_runtime::Cuda>,
    ran: usize,
    graph: Option<stencil_runtime::cuda::Graph>,
}

impl Cycles {
    fn new(backend: &Backend, options: &Options) -> Cycles {
        let cuda = match backend {
            Backend::Cuda(c) if options.graph && !options.profile => Some(c.clone()),
            _ => None,
        };
        Cycles {
            cuda,
            ran: 0,
            graph: None,
        }
    }

    fn run<T: Real>(
        &mut self,
        mg: &mut Hierarchy<T>,
        u: &mut Field<f64>,
    ) -> Result<(), SolveError> {
        let backend = mg.backend();
        let once =
            |mg: &mut Hierarchy<T>, u: &mut Field<f64>| -> Result<(), stencil_runtime::Error> {
                mg.zero(0)?;
                mg.cycle()?;
                mg.ops.correct(backend, u, &mg.levels[0].e)
            };
        self.ran += 1;
        if let Some(graph) = &self.graph {
            graph.launch()?;
            return Ok(());
        }
        match &self.cuda {
            Some(cuda) if self.ran >= 2 => {
                let graph = cuda.capture(|| once(mg, u))?;
                graph.launch()?;
                self.graph = Some(graph);
            }
            _ => once(mg, u)?,
        }
        Ok(())
    }

    /// The size of the recorded graph, if one was recorded.
    fn graph_nodes(&self) -> Option<usize> {
        self.graph.as_ref().map(|g| g.nodes())
    }
}
