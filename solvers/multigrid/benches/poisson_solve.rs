//! The multigrid benchmark: 2D Poisson on 4097^2 (and 1025^2) and 3D Poisson on 257^3 to
//! a relative residual of 1e-10, in f64 and in mixed precision (f32 preconditioner, f64
//! residual and update), with and without full multigrid: cycles, time per cycle, total
//! time, the mixed-precision speed-up; the same with the cycles launched one by one
//! instead of replayed from a CUDA graph; one V-cycle's time against its bytes moved over
//! the device's copy bandwidth; and a per-level profile. On the CPU with `--cpu`. Writes a
//! Markdown table to the path after `--out` (default `poisson_solve.md`).
//!
//! `cargo bench -p multigrid --bench poisson_solve [-- --cpu] [-- --sizes 1025,4097]
//! [-- --sizes3d 129,257] [-- --schedule fused|unfused|FLAGS] [-- --pre 2 --post 2]`
//!
//! With `--cpu` it also times the generated cycle against a hand-written Rust V(2,2) cycle
//! ([`hand_cycle`]) on the same problem, and checks that both give the same residuals.

mod hand_cycle;

use multigrid::{kernels, solve, Options, Precision, Problem, Report, Schedule, Solver};
use std::f64::consts::PI;
use std::fmt::Write as _;
use std::time::Instant;
use stencil_runtime::{Backend, Field, Real};
use stencil_tests::bench::{arg, R};

fn exact(x: f64, y: f64) -> f64 {
    (PI * x).sin() * (2.0 * PI * y).sin() + x * x * y
}

fn source(x: f64, y: f64) -> f64 {
    5.0 * PI * PI * (PI * x).sin() * (2.0 * PI * y).sin() - 2.0 * y
}

fn exact_3d(x: f64, y: f64, z: f64) -> f64 {
    (PI * x).sin() * (PI * y).sin() * (2.0 * PI * z).sin() + x * y * z
}

fn source_3d(x: f64, y: f64, z: f64) -> f64 {
    6.0 * PI * PI * (PI * x).sin() * (PI * y).sin() * (2.0 * PI * z).sin()
}

/// Bytes one V(2,2) red-black cycle must move on levels of `n` nodes down to 3, with
/// elements of `s` bytes: each launch reads its inputs once and writes its outputs once
/// (an in-place field counts twice). In 3D (`dims = 3`), unfused: per level 4 sweeps x 2
/// colours x 3 fields, the residual (3), restriction (1 + 1/8), zeroing the coarse
/// correction (1/8) and the prolongation (2 + 1/8); plus the f64 defect (8 + 8 + s), the
/// update (16 + s), or with `update_with_defect` both in one pass (24 + 2s), and zeroing
/// the correction (s) on the finest grid. In 2D with `zero_with_sweep`, the zeroing of each
/// correction is part of its first half-sweep (which reads one field fewer). In 2D with
/// `recomputing` (Dirichlet sides): both sweeps from zero (2), the residual with its
/// restriction (2 + 1/4), the prolongation with a half-sweep (3 + 1/4), and the other
/// three half-sweeps out of place (3); plus the defect and update.
fn vcycle_bytes(n: usize, dims: u32, s: f64, schedule: Schedule) -> f64 {
    let coarse = 0.5f64.powi(dims as i32);
    let (per_level, per_coarsest, zeroing) = if dims == 2 && schedule.recomputing {
        (2.0 + (2.0 + coarse) + (3.0 + coarse) + 3.0, 2.0, 0.0)
    } else if dims == 2 && schedule.zero_with_sweep {
        (23.0 + 3.0 + (1.0 + coarse) + (2.0 + coarse), 23.0, 0.0)
    } else {
        (
            24.0 + 3.0 + (1.0 + coarse) + coarse + (2.0 + coarse),
            24.0,
            1.0,
        )
    };
    let mut bytes = 0.0;
    let mut m = n;
    while m > 3 {
        let pts = (m as f64).powi(dims as i32);
        bytes += pts * s * per_level;
        m = m.div_ceil(2);
    }
    bytes += 3f64.powi(dims as i32) * s * per_coarsest;
    let fine = (n as f64).powi(dims as i32);
    // The update and the next defect: one pass with `update_with_defect` (u, e, f read;
    // u', r written), else two.
    let update_defect = if schedule.update_with_defect {
        24.0 + 2.0 * s
    } else {
        16.0 + s + 16.0 + s
    };
    bytes + fine * (update_defect + zeroing * s)
}

/// The best of 20 timed red-black sweeps (red then black half-sweep, the generated
/// `rbgs` kernel) on an `n x n` level with four Dirichlet sides, and the bytes a sweep must
/// move: per half-sweep the correction read and written and the right-hand side read.
fn finest_sweep<T: Real>(backend: &Backend, n: usize) -> R<(f64, f64)> {
    let h = 1.0 / (n - 1) as f64;
    let r = Field::<T>::from_fn(&[n, n], 1, |[i, j, _]| {
        T::from_f64(((i * 7 + j * 3) % 11) as f64)
    })
    .to(backend)?;
    let mut e = Field::<T>::zeros_on(backend, &[n, n], 1)?;
    let (one, h2inv) = (T::one(), T::from_f64(1.0 / (h * h)));
    let sweep = |e: &mut Field<T>| -> R<()> {
        for colour in [0, 1] {
            kernels::mg::rbgs::launch(backend, e, &r, &dirichlet([one, one], h2inv), colour)?;
        }
        Ok(())
    };
    sweep(&mut e)?;
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        backend.synchronize()?;
        let t = Instant::now();
        sweep(&mut e)?;
        backend.synchronize()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    let bytes = 2.0 * 3.0 * (n * n * std::mem::size_of::<T>()) as f64;
    Ok((best, bytes))
}

/// The level operator with coefficients `c` and four Dirichlet sides imposed directly.
fn dirichlet<T: Real>(c: [T; 2], h2inv: T) -> kernels::mg::Level<T> {
    kernels::mg::Level {
        c: c.into(),
        h2inv,
        kappa: T::zero(),
        lo: [0, 0].into(),
        hi: [0, 0].into(),
    }
}

/// The best of 20 generated f64 passes on an `n x n` level (Dirichlet sides), as
/// [`hand_cycle::pass_times`] times the hand-written ones.
fn generated_pass_times(backend: &Backend, n: usize) -> R<Vec<(&'static str, f64)>> {
    let h = 1.0 / (n - 1) as f64;
    let nc = n.div_ceil(2);
    let r =
        Field::<f64>::from_fn(&[n, n], 1, |[i, j, _]| ((i * 7 + j * 3) % 11) as f64).to(backend)?;
    let mut e = Field::<f64>::zeros_on(backend, &[n, n], 1)?;
    let mut t = Field::<f64>::zeros_on(backend, &[n, n], 1)?;
    let mut coarse = Field::<f64>::zeros_on(backend, &[nc, nc], 1)?;
    let (sides, h2inv) = ([0i64, 0], 1.0 / (h * h));
    let l = dirichlet([1.0, 1.0], h2inv);
    let best = |f: &mut dyn FnMut() -> R<()>| -> R<f64> {
        f()?;
        let mut b = f64::INFINITY;
        for _ in 0..20 {
            let t0 = Instant::now();
            f()?;
            backend.synchronize()?;
            b = b.min(t0.elapsed().as_secs_f64());
        }
        Ok(b)
    };
    let sweep = best(&mut || {
        for colour in [0, 1] {
            kernels::mg::rbgs::launch(backend, &mut e, &r, &l, colour)?;
        }
        Ok(())
    })?;
    let residual = best(&mut || {
        kernels::mg::residual::launch(backend, &e, &r, &mut t, &l)?;
        Ok(())
    })?;
    let restrict = best(&mut || {
        kernels::mg::restrict_full::launch(backend, &t, &mut coarse, &sides, &sides)?;
        Ok(())
    })?;
    let prolong = best(&mut || {
        kernels::mg::prolong_add::launch(backend, &mut e, &coarse, &sides, &sides)?;
        Ok(())
    })?;
    Ok(vec![
        ("sweep", sweep),
        ("residual", residual),
        ("restrict", restrict),
        ("prolong", prolong),
    ])
}

/// Writes the markdown table header `header` (`| a | b |`, after any leading newline)
/// and its separator row.
fn table_header(md: &mut String, header: &str) -> R<()> {
    let columns = header.matches('|').count() - 1;
    writeln!(md, "{header}")?;
    writeln!(md, "|{}", " --- |".repeat(columns))?;
    Ok(())
}

/// A row of the finest-sweep table.
fn sweep_row(md: &mut String, n: usize, precision: &str, t: f64, bytes: f64, bw: f64) -> R<()> {
    writeln!(
        md,
        "| {n}^2 | {precision} | {:.3} | {:.1} | {:.1} | {:.2} |",
        t * 1e3,
        bytes / 1e6,
        bytes / t / 1e9,
        bytes / t / bw
    )?;
    Ok(())
}

/// The best of `reps` solves of the 2D (`dims = 2`) or 3D problem (fresh problem each
/// time; the first run also loads the PTX).
fn timed_solve(
    backend: &Backend,
    n: usize,
    dims: u32,
    options: &Options,
    reps: usize,
) -> R<(Report, f64, f64)> {
    let mut best: Option<(Report, f64, f64)> = None;
    for _ in 0..reps {
        let mut p = if dims == 2 {
            Problem::new(backend, n, exact, source)?
        } else {
            Problem::new_3d(backend, n, exact_3d, source_3d)?
        };
        backend.synchronize()?;
        let t = Instant::now();
        let report = solve(backend, &mut p, options)?;
        backend.synchronize()?;
        let total = t.elapsed().as_secs_f64();
        let err = if dims == 2 {
            p.max_error(exact)?
        } else {
            p.max_error_3d(exact_3d)?
        };
        if best.as_ref().is_none_or(|b| total < b.1) {
            best = Some((report, total, err));
        }
    }
    best.ok_or_else(|| "no run".into())
}

/// The best and the median of `reps` solves of the 2D or 3D problem by one [`Solver`]
/// prepared beforehand (hierarchy allocated, launch shapes tuned and, with graphs, the
/// cycle recorded by an untimed solve), each from the same starting field: the cost of a
/// solve in a code that solves the same operator again and again. Also the time per cycle
/// of the same number of [`Solver::cycle`] calls queued back to back with one wait at the
/// end (no residual read between cycles): what the device needs without the host.
fn prepared_solves(
    backend: &Backend,
    n: usize,
    dims: u32,
    options: &Options,
    reps: usize,
) -> R<(usize, f64, f64, f64)> {
    let mut p = if dims == 2 {
        Problem::new(backend, n, exact, source)?
    } else {
        Problem::new_3d(backend, n, exact_3d, source_3d)?
    };
    let start = p.u.to(backend)?;
    let mut solver = Solver::new(backend, n, dims as usize, options)?;
    let mut times = Vec::with_capacity(reps);
    let mut cycles = 0;
    for rep in 0..=reps {
        p.u.copy_from(&start)?;
        backend.synchronize()?;
        let t = Instant::now();
        let report = solver.solve(&mut p.u, &p.f)?;
        backend.synchronize()?;
        if rep > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
        cycles = report.cycles.len();
    }
    times.sort_by(f64::total_cmp);
    // Two untimed cycles tune and record, then the best of `reps` runs of `cycles` queued.
    let mut queued = f64::INFINITY;
    for rep in 0..reps + 2 {
        p.u.copy_from(&start)?;
        backend.synchronize()?;
        let t = Instant::now();
        for _ in 0..if rep < 2 { 1 } else { cycles } {
            solver.cycle(&mut p.u, &p.f)?;
        }
        backend.synchronize()?;
        if rep >= 2 {
            queued = queued.min(t.elapsed().as_secs_f64() / cycles as f64);
        }
    }
    Ok((cycles, times[0], times[times.len() / 2], queued))
}

/// The generated f64 V(2,2) cycle (with `schedule`, the CPU's by default; prepared solver,
/// cycles back to back) against the hand-written one, per size: time per cycle, their ratio, and the
/// largest relative difference of their residual histories (the same iterates up to
/// rounding).
fn hand_comparison(
    md: &mut String,
    backend: &Backend,
    schedule: Schedule,
    sizes: &[usize],
    reps: usize,
) -> R<()> {
    hand_cycle::self_check()?;
    writeln!(md, "\nThe generated f64 V(2,2) cycle against a hand-written Rust one (`benches/hand_cycle`, rayon, same passes), per cycle, best of {} runs of the solve's cycles, the two alternating:\n", reps.max(5))?;
    table_header(md, "| grid | cycles | generated (ms) | hand-written (ms) | generated / hand | max residual difference |")?;
    for &n in sizes {
        let options = Options {
            schedule: Some(schedule),
            ..Options::default()
        };
        let (report, _, _) = timed_solve(backend, n, 2, &options, 1)?;
        let (mut generated, mut hand_time) = (f64::INFINITY, f64::INFINITY);
        let mut difference: f64 = 0.0;
        // The two alternate, so that a slow spell of a shared machine meets both.
        for _ in 0..reps.max(5) {
            let (cycles, _, _, queued) = prepared_solves(backend, n, 2, &options, 1)?;
            generated = generated.min(queued);
            let mut hand = hand_cycle::HandCycle::new(n, exact, source);
            let t = Instant::now();
            let residuals: Vec<f64> = (0..cycles).map(|_| hand.cycle()).collect();
            hand_time = hand_time.min(t.elapsed().as_secs_f64() / cycles as f64);
            for (h, g) in residuals.iter().zip(&report.cycles) {
                difference = difference.max((h - g.residual).abs() / g.residual);
            }
        }
        let cycles = report.cycles.len();
        writeln!(
            md,
            "| {n}^2 | {cycles} | {:.3} | {:.3} | {:.2} | {difference:.1e} |",
            generated * 1e3,
            hand_time * 1e3,
            generated / hand_time
        )?;
    }
    writeln!(
        md,
        "\nThe finest level's passes alone, f64, Dirichlet sides, best of 20 each:\n"
    )?;
    table_header(
        md,
        "| grid | pass | generated (ms) | hand-written (ms) | generated / hand |",
    )?;
    for &n in sizes {
        let hand = hand_cycle::pass_times(n);
        for ((pass, g), (_, h)) in generated_pass_times(backend, n)?.into_iter().zip(hand) {
            writeln!(
                md,
                "| {n}^2 | {pass} | {:.3} | {:.3} | {:.2} |",
                g * 1e3,
                h * 1e3,
                g / h
            )?;
        }
    }
    Ok(())
}

fn main() -> R<()> {
    let cpu_only = std::env::args().any(|a| a == "--cpu");
    let schedule = arg("--schedule").map(|s| Schedule::parse(&s)).transpose()?;
    // V(pre, post) cycles (the byte model below assumes V(2, 2)).
    let pre: usize = arg("--pre").map_or(Ok(2), |s| s.parse())?;
    let post: usize = arg("--post").map_or(Ok(2), |s| s.parse())?;
    let Some((backend, device, copy)) = stencil_tests::bench::machine()? else {
        return Ok(());
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
    let schedule = schedule.unwrap_or_else(|| Schedule::for_backend(&backend));
    writeln!(md, "Schedule: {schedule:?}")?;
    if let Some(bw) = copy {
        writeln!(
            md,
            "Copy bandwidth (read + write, measured in this run): {:.0} GB/s",
            bw / 1e9
        )?;
    }
    table_header(&mut md, "\n| grid | preconditioner | start | cycles | time per cycle (ms) | total (ms) | final rel. residual | max error | speed-up of mixed |")?;
    let sizes3d: Vec<usize> = arg("--sizes3d")
        .unwrap_or_else(|| if cpu_only { "129".into() } else { "257".into() })
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let grids: Vec<(usize, u32)> = sizes
        .iter()
        .map(|&n| (n, 2))
        .chain(sizes3d.iter().map(|&n| (n, 3)))
        .collect();
    let graphs: &[bool] = if cpu_only { &[true] } else { &[true, false] };
    for &(n, dims) in &grids {
        for &graph in graphs {
            for fmg in [false, true] {
                if fmg && !graph {
                    continue;
                }
                let mut f64_total = 0.0;
                for precision in [Precision::F64, Precision::Mixed] {
                    let options = Options {
                        precision,
                        fmg,
                        graph,
                        schedule: Some(schedule),
                        pre,
                        post,
                        ..Options::default()
                    };
                    let (report, total, err) = timed_solve(&backend, n, dims, &options, reps)?;
                    let cycles = report.cycles.len();
                    let per_cycle =
                        report.cycles.iter().map(|c| c.seconds).sum::<f64>() / cycles as f64;
                    let speedup = if precision == Precision::F64 {
                        f64_total = total;
                        String::from("")
                    } else {
                        format!("{:.2}x", f64_total / total)
                    };
                    let launch = match (&backend, graph) {
                        (Backend::Cpu, _) => "",
                        (_, true) => ", graph",
                        (_, false) => ", launches",
                    };
                    writeln!(
                        md,
                        "| {n}^{dims} | {}{launch} | {} | {cycles} | {:.3} | {:.2} | {:.1e} | {:.2e} | {speedup} |",
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
                        "{n}^{dims} {precision:?} fmg={fmg} graph={graph}: {cycles} cycles, {:.2} ms (graph nodes {:?})\n{}",
                        total * 1e3,
                        report.graph_nodes,
                        report.table()
                    );
                }
            }
        }
    }
    writeln!(
        md,
        "\nPrepared solver (allocated, tuned, cycle recorded; `Solver::solve` from the same start, best and median of {} solves):\n",
        reps.max(5)
    )?;
    table_header(&mut md, "| grid | preconditioner | cycles | best (ms) | median (ms) | speed-up of mixed (best) | queued `cycle` calls, per cycle (ms) |")?;
    for &(n, dims) in &grids {
        let mut f64_best = 0.0;
        for precision in [Precision::F64, Precision::Mixed] {
            let options = Options {
                precision,
                schedule: Some(schedule),
                pre,
                post,
                ..Options::default()
            };
            let (cycles, best, median, queued) =
                prepared_solves(&backend, n, dims, &options, reps.max(5))?;
            let speedup = if precision == Precision::F64 {
                f64_best = best;
                String::new()
            } else {
                format!("{:.2}x", f64_best / best)
            };
            writeln!(
                md,
                "| {n}^{dims} | {precision:?} | {cycles} | {:.2} | {:.2} | {speedup} | {:.3} |",
                best * 1e3,
                median * 1e3,
                queued * 1e3
            )?;
        }
    }
    if let Some(bw) = copy {
        table_header(&mut md, "\n| grid | preconditioner | V-cycle + defect + update (ms) | bytes moved (MB) | T_eff (GB/s) | T_eff / copy |")?;
        for &(n, dims) in &grids {
            for (precision, s) in [(Precision::F64, 8.0), (Precision::Mixed, 4.0)] {
                let options = Options {
                    precision,
                    max_cycles: 12,
                    schedule: Some(schedule),
                    ..Options::default()
                };
                let (report, _, _) = timed_solve(&backend, n, dims, &options, reps)?;
                let mut t: Vec<f64> = report.cycles.iter().map(|c| c.seconds).collect();
                t.sort_by(f64::total_cmp);
                let median = t[t.len() / 2];
                let bytes = vcycle_bytes(n, dims, s, schedule);
                writeln!(
                    md,
                    "| {n}^{dims} | {precision:?} | {:.3} | {:.0} | {:.0} | {:.2} |",
                    median * 1e3,
                    bytes / 1e6,
                    bytes / median / 1e9,
                    bytes / median / bw
                )?;
            }
        }
    }
    if let Some(bw) = copy {
        writeln!(md, "\nOne red-black Gauss-Seidel sweep (both colours) on the finest level, Dirichlet sides, best of 20 (bytes: per half-sweep `e` read and written and `r` read, whole lines):\n")?;
        table_header(
            &mut md,
            "| grid | precision | sweep (ms) | bytes (MB) | T_eff (GB/s) | T_eff / copy |",
        )?;
        for &n in &sizes {
            let (t, bytes) = finest_sweep::<f64>(&backend, n)?;
            sweep_row(&mut md, n, "f64", t, bytes, bw)?;
            let (t, bytes) = finest_sweep::<f32>(&backend, n)?;
            sweep_row(&mut md, n, "f32", t, bytes, bw)?;
        }
    }
    if copy.is_some() {
        hand_comparison(&mut md, &backend, schedule, &sizes, reps)?;
    }
    // Where the time goes: each level's share (waits after every launch: slower overall).
    let n = *sizes.last().ok_or("no sizes")?;
    let options = Options {
        profile: true,
        schedule: Some(schedule),
        pre,
        post,
        ..Options::default()
    };
    let (report, _, _) = timed_solve(&backend, n, 2, &options, 1)?;
    writeln!(md, "\nPer level, {n}^2, f64, profiled (a wait after every launch), whole solve of {} cycles:\n", report.cycles.len())?;
    table_header(
        &mut md,
        "| level | nodes per axis | launches | time (ms) | time per launch (us) |",
    )?;
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
