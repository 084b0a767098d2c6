//! One-off solves ([`solve`]) and the checks of a solver's options.

use crate::options::{BoundaryKind, Options, Order};
use crate::problem::{is_coarsenable, Problem};
use crate::report::Report;
use crate::solver::Solver;
use crate::SolveError;
use std::time::Instant;
use stencil_runtime::Backend;

/// Solves `problem` on `backend` (its fields must live there) to the relative residual
/// `options.tolerance`, leaving the solution in `problem.u`. (To solve the same operator
/// many times, keep a [`Solver`].)
pub fn solve(
    backend: &Backend,
    problem: &mut Problem,
    options: &Options,
) -> Result<Report, SolveError> {
    check(problem.n, problem.dims, options)?;
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
    let setup = Instant::now();
    let mut solver = Solver::new(&own, problem.n, problem.dims, options)?;
    let allocated = setup.elapsed().as_secs_f64();
    let report = solver.solve(&mut problem.u, &problem.f);
    own.synchronize()?;
    report.map(|r| Report {
        setup_seconds: r.setup_seconds + allocated,
        ..r
    })
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

/// Whether `options` can solve a problem of `n` nodes per axis on `dims` axes: a typed
/// error naming the first problem if not.
pub(crate) fn check(n: usize, dims: usize, o: &Options) -> Result<(), SolveError> {
    let bad = |name, value: String, expected| {
        Err(SolveError::Option {
            name,
            value,
            expected,
        })
    };
    if !(2..=3).contains(&dims) {
        return bad("dims", dims.to_string(), "2 or 3 axes");
    }
    if !is_coarsenable(n) {
        return Err(SolveError::Size { n });
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
    let kinds = &o.boundary.sides()[..2 * dims];
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
    if o.order == Order::Sixth && dims == 3 {
        return bad(
            "order",
            "Sixth".into(),
            "3D defects are of 2nd or 4th order",
        );
    }
    if o.smoother == crate::Smoother::Zebra {
        if dims == 3 {
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
