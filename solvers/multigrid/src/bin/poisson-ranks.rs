//! The Poisson solver over ranks, run under `mpirun -np N` (by `tests/ranks.rs` and
//! `benchmarks/ranks-scaling.sh`).
//!
//! `poisson-ranks check [--device]`: every rank solves each case's whole grid alone
//! ([`Solver::new`]) beside its slab of the split solve ([`Solver::on_ranks`]); after
//! every cycle the slab must equal the whole grid's rows bit for bit and the residual
//! norms must agree to 1e-12 (they are sums in another order); a solve to the tolerance
//! must take the same cycles. Prints one `ok` line per rank and case.
//!
//! `poisson-ranks time N [--mixed] [--device] [--repeat K] [--gather-below G] [--no-graph]
//! [--unfused]`:
//! solves of the 2D problem of N x N nodes over the ranks, each from the same start after an untimed one; prints
//! the best and median seconds per solve (the slowest rank's), the cycles, the error, and
//! the time of one exchange of the finest level's ghost planes.

use multigrid::{
    srj_schedule, Boundary, BoundaryKind, Cycle, Options, Order, Precision, Problem, Schedule,
    Smoother, Solver,
};
use std::f64::consts::PI;
use std::sync::Arc;
use std::time::Instant;
use stencil_ranks::{first_difference, Op, Ranks};
use stencil_runtime::Backend;

type Failure = Box<dyn std::error::Error>;

fn exact(p: [f64; 3]) -> f64 {
    (PI * p[0]).sin() * (2.0 * PI * p[1]).sin() * (1.0 + p[2]) + p[0] * p[0] * p[1]
}

/// `-lap(exact)` in 2D (its z term is 0 on the plane z = 0) and, for the 3D cases,
/// a source that need not match: the checks compare iterates, not errors.
fn source(p: [f64; 3]) -> f64 {
    5.0 * PI * PI * (PI * p[0]).sin() * (2.0 * PI * p[1]).sin() * (1.0 + p[2]) - 2.0 * p[1]
}

/// One case of the check: a name, nodes per axis, axes and options.
struct Case {
    name: &'static str,
    n: usize,
    dims: usize,
    options: Options,
}

fn cases() -> Vec<Case> {
    let base = Options {
        gather_below: 33,
        tolerance: 1e-9,
        ..Options::default()
    };
    let mut periodic_x = Boundary::all(BoundaryKind::Dirichlet);
    (periodic_x.west, periodic_x.east) = (BoundaryKind::Periodic, BoundaryKind::Periodic);
    let mut mixed_sides = Boundary::all(BoundaryKind::Dirichlet);
    (mixed_sides.west, mixed_sides.north) = (BoundaryKind::Neumann, BoundaryKind::Penalty);
    vec![
        Case {
            name: "red-black V, f64",
            n: 129,
            dims: 2,
            options: base.clone(),
        },
        Case {
            name: "fused kernels, V(2,2)",
            n: 129,
            dims: 2,
            options: Options {
                schedule: Some(Schedule::FUSED),
                ..base.clone()
            },
        },
        Case {
            name: "fused kernels, V(1,3), mixed",
            n: 129,
            dims: 2,
            options: Options {
                schedule: Some(Schedule::FUSED),
                precision: Precision::Mixed,
                pre: 1,
                post: 3,
                tolerance: 1e-7,
                ..base.clone()
            },
        },
        Case {
            name: "SRJ, mixed precision",
            n: 129,
            dims: 2,
            options: Options {
                smoother: Smoother::Srj {
                    factors: srj_schedule(3),
                },
                precision: Precision::Mixed,
                tolerance: 1e-7,
                ..base.clone()
            },
        },
        Case {
            name: "periodic x, 4th order, W",
            n: 65,
            dims: 2,
            options: Options {
                boundary: periodic_x,
                order: Order::Fourth,
                cycle: Cycle::W,
                ..base.clone()
            },
        },
        Case {
            name: "Neumann and penalty sides",
            n: 65,
            dims: 2,
            options: Options {
                boundary: mixed_sides,
                ..base.clone()
            },
        },
        Case {
            name: "no level gathered, Jacobi",
            n: 129,
            dims: 2,
            options: Options {
                gather_below: 0,
                coarsest: 17,
                smoother: Smoother::Jacobi { omega: 0.8 },
                max_cycles: 200,
                ..base.clone()
            },
        },
        Case {
            name: "no level gathered, fused red-black",
            n: 129,
            dims: 2,
            options: Options {
                gather_below: 0,
                coarsest: 17,
                schedule: Some(Schedule::FUSED),
                ..base.clone()
            },
        },
        Case {
            name: "3D, F cycle",
            n: 33,
            dims: 3,
            options: Options {
                cycle: Cycle::F,
                gather_below: 9,
                ..base
            },
        },
    ]
}

fn check(ranks: &Arc<Ranks>, backend: &Backend) -> Result<Vec<String>, Failure> {
    let mut lines = Vec::new();
    for case in cases() {
        let (n, dims, o) = (case.n, case.dims, &case.options);
        let name = case.name;
        let mut alone = Solver::new(backend, n, dims, o)?;
        let mut split = Solver::on_ranks(backend, ranks.clone(), n, dims, o)?;
        let rows = split.rows();
        let mut whole = Problem::on_rows(backend, n, dims, 0..n, exact, source)?;
        let mut part = Problem::on_rows(backend, n, dims, rows.clone(), exact, source)?;
        for cycle in 1..=4 {
            alone.cycle(&mut whole.u, &whole.f)?;
            split.cycle(&mut part.u, &part.f)?;
            if let Some(e) = first_difference(&part.u, &whole.u, rows.start) {
                return Err(format!("{name}: after cycle {cycle}: {e}").into());
            }
            let (a, b) = (
                alone.residual_norm(&mut whole.u, &whole.f)?,
                split.residual_norm(&mut part.u, &part.f)?,
            );
            if (a - b).abs() > 1e-12 * a.abs() {
                return Err(
                    format!("{name}: cycle {cycle}: residual {b:e} split, {a:e} whole").into(),
                );
            }
        }
        let mut whole = Problem::on_rows(backend, n, dims, 0..n, exact, source)?;
        let mut part = Problem::on_rows(backend, n, dims, rows.clone(), exact, source)?;
        let (a, b) = (
            alone.solve(&mut whole.u, &whole.f)?,
            split.solve(&mut part.u, &part.f)?,
        );
        if a.cycles.len() != b.cycles.len() {
            return Err(format!(
                "{name}: {} cycles split, {} whole",
                b.cycles.len(),
                a.cycles.len()
            )
            .into());
        }
        for (k, (x, y)) in a.cycles.iter().zip(&b.cycles).enumerate() {
            if (x.residual - y.residual).abs() > 1e-10 * x.residual.abs() {
                return Err(format!(
                    "{name}: solve cycle {}: residual {:e} split, {:e} whole",
                    k + 1,
                    y.residual,
                    x.residual
                )
                .into());
            }
        }
        if let Some(e) = first_difference(&part.u, &whole.u, rows.start) {
            return Err(format!("{name}: solved: {e}").into());
        }
        lines.push(format!(
            "rank {} of {}, {name}: nodes {:?} of {n}, {} cycles: ok",
            ranks.rank(),
            ranks.size(),
            rows,
            b.cycles.len()
        ));
    }
    Ok(lines)
}

/// The median of `v` (sorted here).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time(ranks: &Arc<Ranks>, backend: &Backend, args: &[String]) -> Result<String, Failure> {
    let n: usize = args
        .get(2)
        .ok_or("`time` needs the nodes per axis, e.g. 8193")?
        .parse()?;
    let flag = |name: &str| args.iter().any(|a| a == name);
    let value = |name: &str, default: usize| -> Result<usize, Failure> {
        match args.iter().position(|a| a == name) {
            Some(k) => Ok(args
                .get(k + 1)
                .ok_or(format!("{name} needs a number"))?
                .parse()?),
            None => Ok(default),
        }
    };
    let repeat = value("--repeat", 5)?;
    if repeat == 0 {
        return Err("--repeat needs at least 1 solve".into());
    }
    let options = Options {
        precision: if flag("--mixed") {
            Precision::Mixed
        } else {
            Precision::F64
        },
        gather_below: value("--gather-below", multigrid::GATHER_BELOW)?,
        graph: !flag("--no-graph"),
        schedule: flag("--unfused").then_some(Schedule::UNFUSED),
        ..Options::default()
    };
    let mut solver = Solver::on_ranks(backend, ranks.clone(), n, 2, &options)?;
    let rows = solver.rows();
    let fresh = Problem::on_rows(backend, n, 2, rows.clone(), exact, source)?;
    let mut p = Problem::on_rows(backend, n, 2, rows.clone(), exact, source)?;
    let slowest = |t: f64| {
        let mut v = [t];
        ranks.all_reduce(&mut v, Op::Max);
        v[0]
    };
    let mut times = Vec::new();
    let mut cycles = 0;
    for k in 0..=repeat {
        p.u.copy_from(&fresh.u)?;
        backend.synchronize()?;
        let t = Instant::now();
        let report = solver.solve(&mut p.u, &p.f)?;
        backend.synchronize()?;
        let seconds = slowest(t.elapsed().as_secs_f64());
        if k > 0 {
            times.push(seconds);
        }
        cycles = report.cycles.len();
    }
    let mut error = [p.max_error_at(exact)?];
    ranks.all_reduce(&mut error, Op::Max);
    // One exchange of the finest level's ghost planes, alone.
    let exchange = match solver.exchange_seconds(&mut p.u, 50)? {
        Some(s) => format!("{:.1} us", slowest(s) * 1e6),
        None => "none (one rank)".into(),
    };
    let best = times.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(format!(
        "poisson {n}^2 {:?}{} on {} ranks, gathered below {}: best {:.2} ms, median {:.2} ms per solve, {cycles} cycles, error {:.2e}, one ghost exchange {exchange}",
        options.precision,
        if flag("--unfused") { " unfused" } else { "" },
        ranks.size(),
        options.gather_below,
        best * 1e3,
        median(&mut times) * 1e3,
        error[0],
    ))
}

fn main() {
    let (ranks, backend) = stencil_ranks::check_program();
    let args: Vec<String> = std::env::args().collect();
    let out = match args.get(1).map(String::as_str) {
        Some("check") => check(&ranks, &backend).map(|l| l.join("\n")),
        Some("time") => time(&ranks, &backend, &args),
        _ => Err(
            "usage: poisson-ranks check [--device] | time N [--mixed] [--device] [--repeat K] [--gather-below G] [--no-graph] [--unfused]"
                .into(),
        ),
    };
    let timing = args.get(1).is_some_and(|a| a == "time");
    match out {
        // A timing is the same on every rank: rank 0 prints it.
        Ok(_) if timing && ranks.rank() > 0 => {}
        Ok(text) => println!("{text}"),
        Err(e) => ranks.abort(&e),
    }
}
