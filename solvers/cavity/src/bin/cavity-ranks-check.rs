//! The cavity over ranks, run under `mpirun -np N` by `tests/ranks.rs`: every rank steps
//! its slab of each case ([`Cavity::over_ranks`]) beside the whole grid alone
//! ([`Cavity::new`]); every check must give the same time step bit for bit and the same
//! change and Poisson residual to 1e-12 (sums over the ranks' sums), and after the last
//! step the slab's vorticity and stream function must equal the whole grid's rows bit
//! for bit. A case that goes unstable must stop every rank with the same step and place.
//! Prints one `ok` line per rank and case. With `--device` every rank runs on the device
//! of its local rank (ghost rows through NCCL).
//!
//! `cavity-ranks-check time N STEPS [--device]`: milliseconds per RK4 step of the cavity
//! at Re 1000 on N x N nodes over the ranks (the slowest rank's, after 10 untimed steps).

use cavity::{Cavity, CavityError, Config, Until};
use multigrid::Precision;
use std::sync::Arc;
use stencil_ranks::{first_difference, Ranks};
use stencil_runtime::Backend;

type Failure = Box<dyn std::error::Error>;

/// Whether `a` and `b` agree to `tolerance` relative.
fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance * a.abs().max(b.abs())
}

fn run(ranks: &Arc<Ranks>, backend: &Backend) -> Result<Vec<String>, Failure> {
    let cases = [
        (
            "Re 100, 65 nodes",
            Config {
                n: 65,
                check_every: 5,
                ..Config::default()
            },
            40,
        ),
        (
            "Re 1000, 129 nodes, mixed precision, 2 cycles a stage",
            Config {
                re: 1000.0,
                n: 129,
                precision: Precision::Mixed,
                poisson_cycles: 2,
                check_every: 4,
                ..Config::default()
            },
            24,
        ),
    ];
    let mut lines = Vec::new();
    for (name, config, steps) in cases {
        let mut whole = Cavity::new(backend, &config)?;
        let mut split = Cavity::over_ranks(backend, &config, ranks.clone())?;
        let rows = split.rows();
        for step in 1..=steps {
            whole.rk4_step()?;
            split.rk4_step()?;
            if step % config.check_every != 0 {
                continue;
            }
            let (a, b) = (whole.check()?, split.check()?);
            let same = a.dt.to_bits() == b.dt.to_bits()
                && close(a.change, b.change, 1e-12)
                && close(a.poisson_residual, b.poisson_residual, 1e-10)
                && a.largest_vorticity == b.largest_vorticity;
            if !same {
                return Err(format!("{name}: step {step}: check {b:?} split, {a:?} whole").into());
            }
        }
        for (field, part, all) in [("w", &split.w, &whole.w), ("psi", &split.psi, &whole.psi)] {
            if let Some(e) = first_difference(part, all, rows.start) {
                return Err(format!("{name}: {field} after {steps} steps: {e}").into());
            }
        }
        lines.push(format!(
            "rank {} of {}, {name}: rows {rows:?}, {steps} steps: ok",
            ranks.rank(),
            ranks.size(),
        ));
    }
    // Too long a time step: every rank stops with the whole grid's step and place.
    let config = Config {
        n: 65,
        cfl: 4.0,
        until: Until::Time(10.0),
        check_every: 1,
        ..Config::default()
    };
    let unstable = |mut c: Cavity| match c.run(|_, _| true) {
        Err(CavityError::Unstable { at, .. }) => Ok((at.step, at.i, at.j)),
        other => Err(format!("cfl 4 should go unstable, not {other:?}")),
    };
    let (a, b) = (
        unstable(Cavity::new(backend, &config)?)?,
        unstable(Cavity::over_ranks(backend, &config, ranks.clone())?)?,
    );
    if a != b {
        return Err(format!("unstable at (step, i, j) {b:?} split, {a:?} whole").into());
    }
    lines.push(format!(
        "rank {} of {}, unstable at step {}, node ({}, {}): ok",
        ranks.rank(),
        ranks.size(),
        a.0,
        a.1,
        a.2
    ));
    Ok(lines)
}

/// Milliseconds per step of `steps` RK4 steps on `n x n` nodes, after 10 untimed ones.
fn time(ranks: &Arc<Ranks>, backend: &Backend, args: &[String]) -> Result<String, Failure> {
    let number = |k: usize, what: &str| -> Result<usize, Failure> {
        Ok(args.get(k).ok_or(format!("`time` needs {what}"))?.parse()?)
    };
    let (n, steps) = (number(2, "the nodes per axis")?, number(3, "the steps")?);
    let config = Config {
        re: 1000.0,
        n,
        ..Config::default()
    };
    let mut flow = Cavity::over_ranks(backend, &config, ranks.clone())?;
    for _ in 0..10 {
        flow.rk4_step()?;
    }
    flow.backend().synchronize()?;
    let start = std::time::Instant::now();
    for _ in 0..steps {
        flow.rk4_step()?;
    }
    flow.backend().synchronize()?;
    let mut t = [start.elapsed().as_secs_f64() / steps as f64];
    ranks.all_reduce(&mut t, stencil_ranks::Op::Max);
    Ok(format!(
        "cavity Re 1000, {n}^2 on {} ranks: {:.3} ms per step ({steps} steps)",
        ranks.size(),
        t[0] * 1e3
    ))
}

fn main() {
    let (ranks, backend) = stencil_ranks::check_program();
    let args: Vec<String> = std::env::args().collect();
    let out = match args.get(1).map(String::as_str) {
        Some("time") => time(&ranks, &backend, &args),
        _ => run(&ranks, &backend).map(|lines| lines.join("\n")),
    };
    match out {
        Ok(text) if ranks.rank() == 0 || !text.starts_with("cavity Re") => println!("{text}"),
        Ok(_) => {}
        Err(e) => ranks.abort(&e),
    }
}
