//! The outer iteration: defect correction in f64 around the multigrid preconditioner.

use crate::kernels::mg2;
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
    match options.precision {
        Precision::F64 => run::<f64>(backend, problem, options),
        Precision::Mixed => run::<f32>(backend, problem, options),
    }
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
    if !(o.ax > 0.0 && o.ay > 0.0 && o.ax.is_finite() && o.ay.is_finite()) {
        return bad(
            "ax, ay",
            format!("{}, {}", o.ax, o.ay),
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
    let kinds = [
        o.boundary.west,
        o.boundary.east,
        o.boundary.south,
        o.boundary.north,
    ];
    if kinds.iter().all(|&k| k == BoundaryKind::Neumann) {
        return Err(SolveError::Singular);
    }
    if o.order != Order::Second && kinds.iter().any(|&k| k != BoundaryKind::Dirichlet) {
        return bad("order", format!("{:?}", o.order), "4th and 6th-order defects support Dirichlet boundaries imposed directly; use Order::Second for Neumann or penalty sides");
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
    let [bw, be, bs, bn] = options.boundary.codes();
    let mut mg = Hierarchy::<T>::new(backend, n, options)?;
    // The penalty form carries kappa g / h^2 in the right-hand side.
    let mut rhs = Field::<f64>::zeros_on(backend, &[n, n], crate::problem::HALO)?;
    mg2::penalty_rhs::launch(
        backend,
        &problem.u,
        &problem.f,
        &mut rhs,
        h2inv,
        options.kappa,
        bw,
        be,
        bs,
        bn,
    )?;
    let defect = |u: &Field<f64>, r: &mut Field<T>| -> Result<f64, SolveError> {
        let (ax, ay) = (options.ax, options.ay);
        let norm2 = match options.order {
            Order::Second => mg2::defect2::launch(
                backend,
                u,
                &rhs,
                r,
                ax,
                ay,
                h2inv,
                options.kappa,
                bw,
                be,
                bs,
                bn,
            )?,
            Order::Fourth => mg2::defect4::launch(backend, u, &rhs, r, ax, ay, h2inv)?,
            Order::Sixth => mg2::defect6::launch(backend, u, &rhs, r, ax, ay, h2inv)?,
        };
        Ok(norm2.sqrt())
    };
    let mut report = Report {
        setup_seconds: setup.elapsed().as_secs_f64(),
        ..Report::default()
    };
    let start = Instant::now();
    let initial = defect(&problem.u, &mut mg.levels[0].r)?;
    report.initial = initial;
    if initial == 0.0 {
        return Ok(report);
    }
    let mut previous = 1.0;
    let mut stagnant = 0;
    for cycle in 1..=options.max_cycles {
        let t0 = Instant::now();
        if cycle == 1 && options.fmg {
            // From scratch: the solution on level 0 starts as the boundary values, the
            // right-hand side as the 2nd-order problem's.
            let l0 = &mut mg.levels[0];
            mg2::narrow::launch(backend, &problem.u, &mut l0.e)?;
            mg2::narrow::launch(backend, &rhs, &mut l0.r)?;
            mg.full_multigrid()?;
            mg2::replace::launch(backend, &mut problem.u, &mg.levels[0].e, bw, be, bs, bn)?;
        } else {
            mg.zero(0)?;
            mg.cycle()?;
            mg2::correct::launch(backend, &mut problem.u, &mg.levels[0].e)?;
        }
        let residual = defect(&problem.u, &mut mg.levels[0].r)? / initial;
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
    report.solve_seconds = start.elapsed().as_secs_f64();
    if options.profile {
        report.levels = mg.stats.clone();
    }
    Ok(report)
}
