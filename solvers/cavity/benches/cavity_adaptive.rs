//! The wavelet-adaptive cavity against the uniform one of the same finest resolution:
//! for each eps, the fraction of the finest grid's points present, the error of psi_min
//! and of the centre-line velocities against the uniform steady state, and the time to
//! steady state; then the slope of the error against eps on log-log axes.
//!
//! `cargo bench -p cavity --bench cavity_adaptive [-- --re 100] [-- --n 33] [-- --levels 2]
//! [-- --eps 1e-2,1e-3,1e-4,1e-5] [-- --tol 1e-5]`, on the CPU (the device's adaptive runs
//! are measured through the program: `benchmarks/results/h100-weighted-halos.md`).

use cavity::adaptive::{AdaptiveCavity, AdaptiveConfig};
use cavity::{Cavity, Config, Outcome};
use std::time::Instant;
use stencil_runtime::{Backend, Field};
use stencil_tests::bench::{arg, R};

/// psi_min and the centre lines `u(0.5, y)`, `v(x, 0.5)` (central differences of psi)
/// of a uniform `n x n` field.
fn summary(psi: &Field<f64>, n: usize) -> R<(f64, Vec<f64>)> {
    let host = psi.to_host()?;
    let at = |i: usize, j: usize| host.get([i as isize, j as isize, 0]).unwrap_or(f64::NAN);
    let min = (0..n * n)
        .map(|k| at(k % n, k / n))
        .fold(f64::MAX, f64::min);
    let (mid, h) = (n / 2, 1.0 / (n - 1) as f64);
    let u = (1..n - 1).map(|j| (at(mid, j + 1) - at(mid, j - 1)) / (2.0 * h));
    let v = (1..n - 1).map(|i| -(at(i + 1, mid) - at(i - 1, mid)) / (2.0 * h));
    Ok((min, u.chain(v).collect()))
}

/// The least-squares slope of log(y) against log(x).
fn slope(points: &[(f64, f64)]) -> f64 {
    let logs: Vec<(f64, f64)> = points.iter().map(|(x, y)| (x.ln(), y.ln())).collect();
    let n = logs.len() as f64;
    let (mx, my) = logs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let sxy: f64 = logs.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = logs.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

fn main() -> R<()> {
    let re: f64 = arg("--re").map_or(Ok(100.0), |s| s.parse())?;
    let base: usize = arg("--n").map_or(Ok(33), |s| s.parse())?;
    let levels: u8 = arg("--levels").map_or(Ok(2), |s| s.parse())?;
    let tol: f64 = arg("--tol").map_or(Ok(1e-5), |s| s.parse())?;
    let eps: Vec<f64> = arg("--eps")
        .unwrap_or_else(|| "1e-2,1e-3,1e-4,1e-5".into())
        .split(',')
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let cpu = Backend::Cpu;
    let coarsest = 5;
    let full = ((base - 1) / (coarsest - 1)).ilog2() as u8 + 1;
    let n = (base - 1) * (1 << levels) + 1;
    println!("# adaptive cavity, Re = {re}, {base}^2 everywhere, finest {n}^2, tolerance {tol}, CPU ({} threads)", std::thread::available_parallelism().map_or(1, |t| t.get()));

    let start = Instant::now();
    let mut uniform = Cavity::new(
        &cpu,
        &Config {
            re,
            n,
            tolerance: tol,
            ..Config::default()
        },
    )?;
    if uniform.run(|_, _| true)? != Outcome::Steady {
        return Err("the uniform run did not reach steady state".into());
    }
    uniform.poisson_solve_exactly()?;
    let uniform_time = start.elapsed().as_secs_f64();
    let (umin, ulines) = summary(&uniform.psi, n)?;
    println!(
        "uniform {n}^2: psi_min {umin:.7}, {uniform_time:.1} s, {} steps",
        uniform.step
    );
    println!("| eps | points present | psi_min | rel. error of psi_min | max centre-line error | steps | time to steady (s) |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut errors = Vec::new();
    for &e in &eps {
        let config = AdaptiveConfig {
            re,
            n0: coarsest,
            levels: full + levels,
            full,
            eps: e,
            ..AdaptiveConfig::default()
        };
        let mut flow = AdaptiveCavity::new(&cpu, &config)?;
        let start = Instant::now();
        if flow.run_to_steady(tol, 50, 10_000_000, |_, _| true)? != Outcome::Steady {
            return Err(format!("eps {e}: no steady state").into());
        }
        flow.poisson_solve_exactly()?;
        let time = start.elapsed().as_secs_f64();
        let (psi, _) = flow.uniform(full + levels - 1)?;
        let (amin, alines) = summary(&psi, n)?;
        let line_error = ulines
            .iter()
            .zip(&alines)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let rel = ((amin - umin) / umin).abs();
        errors.push((
            e,
            rel.max(f64::MIN_POSITIVE),
            line_error.max(f64::MIN_POSITIVE),
        ));
        println!(
            "| {e:.0e} | {:.1}% | {amin:.7} | {rel:.2e} | {line_error:.2e} | {} | {time:.1} |",
            100.0 * flow.tree().present_fraction(),
            flow.step
        );
    }
    if errors.len() >= 2 {
        let psi: Vec<(f64, f64)> = errors.iter().map(|&(e, r, _)| (e, r)).collect();
        let lines: Vec<(f64, f64)> = errors.iter().map(|&(e, _, l)| (e, l)).collect();
        println!(
            "slope of the error against eps (log-log, over the eps whose grid is not full): psi_min {:.2}, centre lines {:.2}",
            slope(&psi),
            slope(&lines)
        );
    }
    Ok(())
}
