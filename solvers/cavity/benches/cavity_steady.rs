//! Time to steady state of the lid-driven cavity (default Re = 1000 on 257^2 and 513^2),
//! with the time of one RK4 step split between the Poisson solves and the rest, and the
//! rest's effective bandwidth against the device's copy bandwidth.
//!
//! `cargo bench -p cavity --bench cavity_steady [-- --cpu] [-- --sizes 257,513]
//! [-- --re 1000] [-- --tol 1e-5] [-- --precision f64|mixed] [-- --schedule fused|unfused|FLAGS] [-- --out FILE]`
//! (on a GPU machine: `../shared/tools/stage-gpu -p cavity --bench cavity_steady`).

use cavity::{Cavity, Config, Outcome};
use multigrid::{Precision, Schedule};
use std::fmt::Write as _;
use std::time::Instant;
use stencil_runtime::Backend;
use stencil_tests::bench::{arg, R};

/// Bytes the RK4 stage kernels of one step must move on `n x n` nodes: per stage
/// `rk4_stage` reads four fields and writes two (f64); the wall update touches only the
/// walls.
fn rk4_bytes(n: usize) -> f64 {
    4.0 * 6.0 * 8.0 * (n * n) as f64
}

/// One run to steady state and its profile.
struct Row {
    n: usize,
    steps: u64,
    time: f64,
    wall: f64,
    psi_min: f64,
    /// Seconds per step: whole, Poisson part, the rest.
    parts: [f64; 3],
}

fn run(
    backend: &Backend,
    n: usize,
    re: f64,
    tol: f64,
    precision: Precision,
    poisson_schedule: Option<Schedule>,
) -> R<Row> {
    let config = Config {
        re,
        n,
        tolerance: tol,
        precision,
        poisson_schedule,
        ..Config::default()
    };
    let mut flow = Cavity::new(backend, &config)?;
    backend.synchronize()?;
    let start = Instant::now();
    let outcome = flow.run(|_, _| true)?;
    backend.synchronize()?;
    let wall = start.elapsed().as_secs_f64();
    if outcome != Outcome::Steady {
        return Err(format!("{n}: ended {outcome:?}").into());
    }
    let psi_min = flow
        .psi
        .interior()?
        .into_iter()
        .fold(f64::INFINITY, f64::min);
    let (steps, time) = (flow.step, flow.time);
    let parts = flow.profile(200)?;
    Ok(Row {
        n,
        steps,
        time,
        wall,
        psi_min,
        parts,
    })
}

fn main() -> R<()> {
    let schedule = arg("--schedule").map(|s| Schedule::parse(&s)).transpose()?;
    let Some((backend, device, copy)) = stencil_tests::bench::machine()? else {
        return Ok(());
    };
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or_else(|| "257,513".into())
        .split(',')
        .map(|s| s.trim().parse())
        .collect::<Result<_, _>>()?;
    let re: f64 = arg("--re").map_or(Ok(1000.0), |s| s.parse())?;
    let tol: f64 = arg("--tol").map_or(Ok(1e-5), |s| s.parse())?;
    let precision = match arg("--precision").as_deref() {
        Some("mixed") => Precision::Mixed,
        _ => Precision::F64,
    };
    let mut md = String::new();
    writeln!(
        md,
        "Lid-driven cavity, Re = {re}, to steady state (relative change of w below {tol:e} per unit time), Poisson {precision:?}, one V(1,1) cycle per RK4 stage (schedule {}), on {device}",
        schedule.map_or("of the backend".to_string(), |s| format!("{s:?}"))
    )?;
    if let Some(bw) = copy {
        writeln!(md, "(device copy bandwidth {:.0} GB/s)", bw / 1e9)?;
    }
    writeln!(md, "\n| grid | steps | simulated time | wall time (s) | psi min | step (us) | Poisson (us) | rest (us) | rest bytes (MB) | rest T_eff (GB/s) | T_eff / copy |")?;
    writeln!(
        md,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )?;
    for n in sizes {
        let r = run(&backend, n, re, tol, precision, schedule)?;
        let [step, poisson, rest] = r.parts.map(|s| s * 1e6);
        let bytes = rk4_bytes(r.n);
        let teff = bytes / (rest * 1e-6);
        let ratio = copy.map_or("-".to_string(), |bw| format!("{:.2}", teff / bw));
        let line = format!(
            "| {n}^2 | {} | {:.2} | {:.2} | {:.6} | {step:.1} | {poisson:.1} | {rest:.1} | {:.1} | {:.0} | {ratio} |",
            r.steps,
            r.time,
            r.wall,
            r.psi_min,
            bytes / 1e6,
            teff / 1e9,
        );
        println!("{line}");
        writeln!(md, "{line}")?;
    }
    let out = arg("--out").unwrap_or_else(|| "cavity_steady.md".into());
    std::fs::write(&out, &md)?;
    print!("\n{md}");
    Ok(())
}
