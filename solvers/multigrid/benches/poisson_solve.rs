//! The multigrid benchmark: 2D Poisson on 4097^2 (and 1025^2) to a relative residual of
//! 1e-10, in f64 and in mixed precision (f32 preconditioner, f64 residual and update), with
//! and without full multigrid: cycles, time per cycle, total time, the mixed-precision
//! speed-up; one V-cycle's time against its bytes moved over the device's copy bandwidth;
//! and a per-level profile. On the CPU with `--cpu`. Writes a Markdown table to the path
//! after `--out` (default `poisson_solve.md`).
//!
//! `cargo bench -p multigrid --bench poisson_solve [-- --cpu] [-- --sizes 1025,4097]`

use multigrid::{solve, Options, Precision, Problem, Report};
use std::f64::consts::PI;
use std::fmt::Write as _;
use std::time::Instant;
use stencil_runtime::{Backend, Cuda, Field};

type R<T> = Result<T, Box<dyn std::error::Error>>;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn exact(x: f64, y: f64) -> f64 {
    (PI * x).sin() * (2.0 * PI * y).sin() + x * x * y
}

fn source(x: f64, y: f64) -> f64 {
    5.0 * PI * PI * (PI * x).sin() * (2.0 * PI * y).sin() - 2.0 * y
}

/// Bytes one V(2,2) red-black cycle must move on levels of `n` nodes down to 3, with
/// elements of `s` bytes: each launch reads its inputs once and writes its outputs once
/// (an in-place field counts twice): per level 4 sweeps x 2 colours x 3 fields, the
/// residual (3), restriction (1 + 1/4), zeroing the coarse correction (1/4) and the
/// prolongation (2 + 1/4); plus the f64 defect (8 + 8 + s), the update (16 + s) and
/// zeroing the correction (s) on the finest grid.
fn vcycle_bytes(n: usize, s: f64) -> f64 {
    let mut bytes = 0.0;
    let mut m = n;
    while m > 3 {
        let pts = (m * m) as f64;
        bytes += pts * s * (24.0 + 3.0 + 1.25 + 0.25 + 2.25);
        m = m.div_ceil(2);
    }
    bytes += 9.0 * s * 24.0;
    let fine = (n * n) as f64;
    bytes + fine * (16.0 + s + 16.0 + s + s)
}

/// Device-to-device copy bandwidth (bytes read + written per second), median of 7.
fn copy_bandwidth(cuda: &Cuda) -> R<f64> {
    let b = Backend::Cuda(cuda.clone());
    let n = 1usize << 27;
    let src = Field::<f64>::zeros_on(&b, &[n], 0)?;
    let dst = Field::<f64>::zeros_on(&b, &[n], 0)?;
    let (ps, pd) = (
        src.device_args().ok_or("device")?.1,
        dst.device_args().ok_or("device")?.1,
    );
    let mut times = Vec::new();
    for _ in 0..8 {
        let mut t = cuda.timer()?;
        cuda.bind()?;
        t.start()?;
        // SAFETY: both fields hold n f64 from their origins.
        unsafe { cudarc::driver::result::memcpy_dtod_async(pd, ps, n * 8, cuda.raw_stream()) }
            .map_err(|e| format!("copy: {e:?}"))?;
        times.push(t.stop()?);
    }
    times.remove(0);
    times.sort_by(f64::total_cmp);
    Ok(2.0 * (n * 8) as f64 / times[times.len() / 2])
}

/// The best of `reps` solves (fresh problem each time; the first run also loads the PTX).
fn timed_solve(
    backend: &Backend,
    n: usize,
    options: &Options,
    reps: usize,
) -> R<(Report, f64, f64)> {
    let mut best: Option<(Report, f64, f64)> = None;
    for _ in 0..reps {
        let mut p = Problem::new(backend, n, exact, source)?;
        backend.synchronize()?;
        let t = Instant::now();
        let report = solve(backend, &mut p, options)?;
        backend.synchronize()?;
        let total = t.elapsed().as_secs_f64();
        let err = p.max_error(exact)?;
        if best.as_ref().is_none_or(|b| total < b.1) {
            best = Some((report, total, err));
        }
    }
    best.ok_or_else(|| "no run".into())
}

fn main() -> R<()> {
    let cpu_only = std::env::args().any(|a| a == "--cpu");
    let (backend, device, copy) = if cpu_only {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        (Backend::Cpu, format!("CPU ({threads} threads)"), None)
    } else {
        match Cuda::new(0) {
            Ok(c) => {
                let bw = copy_bandwidth(&c)?;
                let name = c.device_name().to_string();
                (Backend::Cuda(c), name, Some(bw))
            }
            Err(why) => {
                println!("SKIPPED: no CUDA device ({why}); run with --cpu for the CPU benchmark");
                return Ok(());
            }
        }
    };
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or_else(|| {
            if cpu_only {
                "1025".into()
            } else {
                "1025,4097".into()
            }
        })
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let reps: usize = arg("--reps")
        .and_then(|s| s.parse().ok())
        .unwrap_or(if cpu_only { 1 } else { 3 });
    let mut md = String::new();
    writeln!(md, "Device: {device}")?;
    if let Some(bw) = copy {
        writeln!(
            md,
            "Copy bandwidth (device to device, read + write): {:.0} GB/s",
            bw / 1e9
        )?;
    }
    writeln!(md, "\n| grid | preconditioner | start | cycles | time per cycle (ms) | total (ms) | final rel. residual | max error | speed-up of mixed |")?;
    writeln!(
        md,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )?;
    for &n in &sizes {
        for fmg in [false, true] {
            let mut f64_total = 0.0;
            for precision in [Precision::F64, Precision::Mixed] {
                let options = Options {
                    precision,
                    fmg,
                    ..Options::default()
                };
                let (report, total, err) = timed_solve(&backend, n, &options, reps)?;
                let cycles = report.cycles.len();
                let per_cycle =
                    report.cycles.iter().map(|c| c.seconds).sum::<f64>() / cycles as f64;
                let speedup = if precision == Precision::F64 {
                    f64_total = total;
                    String::from("")
                } else {
                    format!("{:.2}x", f64_total / total)
                };
                writeln!(
                    md,
                    "| {n}^2 | {} | {} | {cycles} | {:.3} | {:.2} | {:.1e} | {:.2e} | {speedup} |",
                    if precision == Precision::F64 {
                        "f64"
                    } else {
                        "f32 (mixed)"
                    },
                    if fmg { "FMG" } else { "zero" },
                    per_cycle * 1e3,
                    total * 1e3,
                    report.relative_residual(),
                    err
                )?;
                println!(
                    "{n}^2 {precision:?} fmg={fmg}: {cycles} cycles, {:.2} ms\n{}",
                    total * 1e3,
                    report.table()
                );
            }
        }
    }
    if let Some(bw) = copy {
        writeln!(md, "\n| grid | preconditioner | V-cycle + defect + update (ms) | bytes moved (MB) | T_eff (GB/s) | T_eff / copy |")?;
        writeln!(md, "| --- | --- | --- | --- | --- | --- |")?;
        for &n in &sizes {
            for (precision, s) in [(Precision::F64, 8.0), (Precision::Mixed, 4.0)] {
                let options = Options {
                    precision,
                    max_cycles: 12,
                    ..Options::default()
                };
                let (report, _, _) = timed_solve(&backend, n, &options, reps)?;
                let mut t: Vec<f64> = report.cycles.iter().map(|c| c.seconds).collect();
                t.sort_by(f64::total_cmp);
                let median = t[t.len() / 2];
                let bytes = vcycle_bytes(n, s);
                writeln!(
                    md,
                    "| {n}^2 | {precision:?} | {:.3} | {:.0} | {:.0} | {:.2} |",
                    median * 1e3,
                    bytes / 1e6,
                    bytes / median / 1e9,
                    bytes / median / bw
                )?;
            }
        }
    }
    // Where the time goes: each level's share (waits after every launch: slower overall).
    let n = *sizes.last().ok_or("no sizes")?;
    let options = Options {
        profile: true,
        ..Options::default()
    };
    let (report, _, _) = timed_solve(&backend, n, &options, 1)?;
    writeln!(md, "\nPer level, {n}^2, f64, profiled (a wait after every launch), whole solve of {} cycles:\n", report.cycles.len())?;
    writeln!(
        md,
        "| level | nodes per axis | launches | time (ms) | time per launch (us) |"
    )?;
    writeln!(md, "| --- | --- | --- | --- | --- |")?;
    for (l, s) in report.levels.iter().enumerate() {
        writeln!(
            md,
            "| {l} | {} | {} | {:.3} | {:.1} |",
            s.n,
            s.launches,
            s.seconds * 1e3,
            s.seconds * 1e6 / s.launches.max(1) as f64
        )?;
    }
    let out = arg("--out").unwrap_or_else(|| "poisson_solve.md".into());
    std::fs::write(&out, &md)?;
    println!("{md}\nwritten to {out}");
    Ok(())
}
