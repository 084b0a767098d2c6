//! Throughput of the KP07 scheme and the Malpasset wall time.
//!
//! - Dense, all wet (the [`cases::radial`] case): cell updates per second of a full RK2
//!   step on n x n cells in f32 and f64, each stage in two passes (a face-flux pass with
//!   the fused CFL reduction, the first read back, and the update), in one (the face
//!   fluxes staged on chip: `kp07::stage_in_one`, after the CFL pass `kp07::face_speeds`)
//!   and as rates and their update (`kp07::rates`, the fluxes staged and three rates per
//!   cell written, then `kp07::apply_rates`),
//!   and the step's effective bandwidth against the device's copy bandwidth.
//! - Malpasset (`--malpasset DIR`, the folder of `topo.asc` and `eta0.asc`): the wall
//!   time of the 4000 s simulation, its steps and its volume error.
//! - The hand-written CUDA reference (`--hand PATH`, the `kp07.cubin` that
//!   `benchmarks/cuda/build.sh` builds from `benchmarks/cuda/kp07.cu`), on a device: its
//!   state after some steps against the solver's, and its step time on the same cases
//!   beside the generated kernels' ([`hand`]).
//!
//! `cargo bench -p shallow-water --bench kp07 [-- --cpu] [-- --sizes 4096,8192]
//! [-- --steps 20] [-- --malpasset ../shared/data/malpasset] [-- --hand FILE]
//! [-- --out FILE]` (on a GPU machine: `../shared/tools/stage-gpu -p shallow-water --bench
//! kp07`).

#[path = "kp07/hand.rs"]
mod hand;

use shallow_water::{cases, Passes, ShallowWater};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;
use stencil_runtime::cuda::LaunchShape;
use stencil_runtime::{Backend, Cuda, Real};
use stencil_tests::bench::hand::Hand;
use stencil_tests::bench::{arg, median_device_time, R};

/// Values one RK2 step in two passes per stage must move per cell: per stage the face
/// pass reads `w, u, v` and the bed and writes six face fluxes (10), the update reads
/// `w, q, p`, the fluxes and the bed and writes `w, q, p, u, v` (15); the second stage's
/// update also reads the state it averages with (3).
const VALUES_PER_CELL: f64 = 2.0 * (10.0 + 15.0) + 3.0;

/// The same in one pass per stage: the CFL pass reads `w, u, v` and the bed (4), each
/// stage reads `w, q, p, u, v` and the bed and writes `w, q, p, u, v` (11), the second
/// also the state it averages with (3).
const VALUES_PER_CELL_ONE_PASS: f64 = 4.0 + 2.0 * 11.0 + 3.0;

/// The same as rates and their update: per stage the rates pass reads `w, u, v` and the
/// bed and writes three rates (7), the update reads `w, q, p`, the rates and the bed and
/// writes `w, q, p, u, v` (12), the second also the state it averages with (3).
const VALUES_PER_CELL_RATES: f64 = 2.0 * (7.0 + 12.0) + 3.0;

/// The values per cell and step of each way to run a stage, and its name in the tables.
fn scheme(passes: Passes) -> (f64, &'static str) {
    match passes {
        Passes::Two => (VALUES_PER_CELL, "2"),
        Passes::One => (VALUES_PER_CELL_ONE_PASS, "1"),
        Passes::Rates => (VALUES_PER_CELL_RATES, "rates + update"),
    }
}

/// The ways the bench times.
const SCHEMES: [Passes; 3] = [Passes::Two, Passes::One, Passes::Rates];

/// Seconds per RK2 step of `case`, each stage run as `passes` says, after warm-up steps
/// (enough for every kernel's launch-shape trial, which takes its first launches).
fn timed<T: Real>(backend: &Backend, case: &cases::Case, steps: usize, passes: Passes) -> R<f64> {
    let mut flow = ShallowWater::<T>::new(backend, &case.setup)?;
    flow.set_passes(passes)?;
    for _ in 0..LaunchShape::MOST_TRIAL_LAUNCHES + 2 {
        flow.step(f64::INFINITY)?;
    }
    wait(backend)?;
    let start = Instant::now();
    for _ in 0..steps {
        flow.step(f64::INFINITY)?;
    }
    wait(backend)?;
    let per_step = start.elapsed().as_secs_f64() / steps as f64;
    flow.check()?;
    Ok(per_step)
}

/// Seconds per RK2 step on the dense (all wet) `n x n` radial case.
fn dense<T: Real>(backend: &Backend, n: usize, steps: usize, passes: Passes) -> R<f64> {
    timed::<T>(backend, &cases::radial(n)?, steps, passes)
}

/// Each way's seconds per RK2 step on the dense `n x n` case (see [`dense`]).
fn dense_all<T: Real>(backend: &Backend, n: usize, steps: usize) -> R<Vec<(Passes, f64)>> {
    SCHEMES
        .iter()
        .map(|&p| Ok((p, dense::<T>(backend, n, steps, p)?)))
        .collect()
}

/// A Malpasset run's wall seconds, steps and relative volume change.
type Run = (f64, u64, f64);

/// Each way's Malpasset run (see [`malpasset`]).
fn malpasset_all<T: Real>(backend: &Backend, dir: &str) -> R<Vec<(Passes, Run)>> {
    SCHEMES
        .iter()
        .map(|&p| Ok((p, malpasset::<T>(backend, dir, p)?)))
        .collect()
}

/// Malpasset to 4000 s, dense (every cell computed; `benches/sparse.rs` runs it on a
/// block grid): wall seconds, steps, relative volume change.
fn malpasset<T: Real>(backend: &Backend, dir: &str, passes: Passes) -> R<Run> {
    let case = cases::malpasset(std::path::Path::new(dir))?;
    let mut flow = ShallowWater::<T>::new(backend, &case.setup)?;
    flow.set_passes(passes)?;
    wait(backend)?;
    let start = Instant::now();
    flow.advance_to(case.end_time)?;
    wait(backend)?;
    let wall = start.elapsed().as_secs_f64();
    let s = flow.survey()?;
    Ok((
        wall,
        flow.steps(),
        (s.volume - flow.initial_volume()) / flow.initial_volume(),
    ))
}

fn main() -> R<()> {
    let cpu = std::env::args().any(|a| a == "--cpu");
    let backend = if cpu { Backend::Cpu } else { Backend::auto()? };
    let default_sizes = if matches!(backend, Backend::Cuda(_)) {
        "4096,8192"
    } else {
        "512,1024"
    };
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or_else(|| default_sizes.into())
        .split(',')
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let steps: usize = arg("--steps").map_or(Ok(20), |s| s.parse())?;
    let mut out = String::new();
    let mut printed = 0;
    let copy = match &backend {
        Backend::Cuda(c) => {
            let bw = c.copy_bandwidth(1 << 30)?;
            writeln!(
                out,
                "device: {} (copy bandwidth {:.0} GB/s)\n",
                c.device_name(),
                bw / 1e9
            )?;
            Some(bw)
        }
        Backend::Cpu => {
            let bw = stencil_runtime::cpu::copy_bandwidth(256 << 20);
            writeln!(
                out,
                "device: the CPU, {} threads (copy bandwidth {:.0} GB/s; AVX copies of the kernels: {})\n",
                rayon_threads(),
                bw / 1e9,
                stencil_runtime::cpu::wide_vectors()
            )?;
            Some(bw)
        }
    };
    writeln!(
        out,
        "| cells | precision | passes per stage | ms per RK2 step | Mcell updates/s | T_eff GB/s | T_eff / copy |"
    )?;
    writeln!(out, "| --- | --- | --- | --- | --- | --- | --- |")?;
    // (n, precision, ms per step) of the fastest generated scheme.
    let mut generated: Vec<(usize, &str, f64)> = Vec::new();
    for &n in &sizes {
        let dense_rows = [
            ("f32", 4.0, dense_all::<f32>(&backend, n, steps)?),
            ("f64", 8.0, dense_all::<f64>(&backend, n, steps)?),
        ];
        for (name, bytes, way, per_step) in
            dense_rows.into_iter().flat_map(|(name, bytes, times)| {
                times.into_iter().map(move |(w, t)| (name, bytes, w, t))
            })
        {
            let cells = (n * n) as f64;
            let (values, passes) = scheme(way);
            let t_eff = values * bytes * cells / per_step;
            let ratio = copy.map_or("".into(), |c| format!("{:.2}", t_eff / c));
            match generated.iter_mut().find(|g| g.0 == n && g.1 == name) {
                Some(g) => g.2 = g.2.min(per_step),
                None => generated.push((n, name, per_step)),
            }
            writeln!(
                out,
                "| {n}^2 | {name} | {passes} | {:.3} | {:.0} | {:.0} | {ratio} |",
                per_step * 1e3,
                cells / per_step / 1e6,
                t_eff / 1e9
            )?;
            eprint!("{}", &out[printed..]);
            printed = out.len();
        }
    }
    if let (Some(cubin), Backend::Cuda(cuda)) = (arg("--hand"), &backend) {
        let copy = copy.unwrap_or(f64::NAN);
        hand_rows(&mut out, cuda, Path::new(&cubin), &generated, steps, copy)?;
        eprint!("{}", &out[printed..]);
        printed = out.len();
    }
    if let Some(dir) = arg("--malpasset") {
        writeln!(
            out,
            "\nMalpasset, 4000 s simulated, 15 m cells (1151 x 615):\n"
        )?;
        writeln!(
            out,
            "| precision | passes per stage | wall time s | steps | relative volume change |"
        )?;
        writeln!(out, "| --- | --- | --- | --- | --- |")?;
        let runs = [
            ("f32", malpasset_all::<f32>(&backend, &dir)?),
            ("f64", malpasset_all::<f64>(&backend, &dir)?),
        ];
        for (name, way, (wall, steps, drift)) in runs
            .into_iter()
            .flat_map(|(name, runs)| runs.into_iter().map(move |(w, r)| (name, w, r)))
        {
            let passes = scheme(way).1;
            writeln!(
                out,
                "| {name} | {passes} | {wall:.2} | {steps} | {drift:.2e} |"
            )?;
            eprint!("{}", &out[printed..]);
            printed = out.len();
        }
    }
    eprint!("{}", &out[printed..]);
    if let Some(path) = arg("--out") {
        std::fs::write(path, out)?;
    }
    Ok(())
}

/// The hand-written reference against the solver: their states after 20 steps on the
/// radial case at 256^2, then the reference's step time on each size of `generated` (the
/// fastest generated scheme's time there) and the generated speed over its.
fn hand_rows(
    out: &mut String,
    cuda: &Cuda,
    cubin: &Path,
    generated: &[(usize, &str, f64)],
    steps: usize,
    copy: f64,
) -> R<()> {
    let hand = Hand::load(cubin)?;
    let case = cases::radial(256)?;
    writeln!(
        out,
        "\nThe hand-written reference ({}) against the solver, radial 256^2, 20 steps of half the first Courant step:\n",
        cubin.display()
    )?;
    writeln!(
        out,
        "| precision and tile | largest difference w, q, p (over each field's largest value) | first Courant step, hand / solver |"
    )?;
    writeln!(out, "| --- | --- | --- |")?;
    for (name, rows) in [
        ("f32", agreements::<f32>(&hand, cuda, &case)?),
        ("f64", agreements::<f64>(&hand, cuda, &case)?),
    ] {
        for (tile, d, (dt_hand, dt_solver)) in rows {
            writeln!(
                out,
                "| {name} {}x{} | {:.2e}, {:.2e}, {:.2e} | {dt_hand:.9e} / {dt_solver:.9e} |",
                tile[0], tile[1], d[0], d[1], d[2]
            )?;
        }
    }
    writeln!(
        out,
        "\n| cells | precision | hand-written ms per RK2 step (fastest tile) | Mcell updates/s | T_eff / copy ({} values) | generated (fastest scheme) ms | generated speed / hand-written |",
        hand::VALUES_PER_CELL
    )?;
    writeln!(out, "| --- | --- | --- | --- | --- | --- | --- |")?;
    for &(n, name, gen) in generated {
        let case = cases::radial(n)?;
        let ((per_step, tile), bytes) = if name == "f32" {
            (hand_step::<f32>(cuda, &hand, &case, steps)?, 4.0)
        } else {
            (hand_step::<f64>(cuda, &hand, &case, steps)?, 8.0)
        };
        let cells = (n * n) as f64;
        let t_eff = hand::VALUES_PER_CELL * bytes * cells / per_step;
        writeln!(
            out,
            "| {n}^2 | {name} | {:.3} ({}x{}) | {:.0} | {:.2} | {:.3} | {:.3} |",
            per_step * 1e3,
            tile[0],
            tile[1],
            cells / per_step / 1e6,
            t_eff / copy,
            gen * 1e3,
            per_step / gen
        )?;
    }
    Ok(())
}

/// The hand-written scheme against the solver on `case`, in each tile kp07.cu has.
type Agreement = ([u32; 2], [f64; 3], (f64, f64));

fn agreements<T: Real>(hand: &Hand, cuda: &Cuda, case: &cases::Case) -> R<Vec<Agreement>> {
    hand::tiles::<T>()
        .iter()
        .map(|&tile| {
            let (d, dts) = hand::agreement::<T>(hand, cuda, &case.setup, tile, 20)?;
            Ok((tile, d, dts))
        })
        .collect()
}

/// Median seconds of one hand-written RK2 step on `case` in its fastest tile, and that
/// tile (each step timed alone with device events, `steps` of them, after three).
fn hand_step<T: Real>(
    cuda: &Cuda,
    hand: &Hand,
    case: &cases::Case,
    steps: usize,
) -> R<(f64, [u32; 2])> {
    let mut best = (f64::INFINITY, [0, 0]);
    for &tile in hand::tiles::<T>() {
        let mut scheme = hand::HandKp07::<T>::new(hand, cuda, &case.setup, tile)?;
        let t = median_device_time(cuda, steps, || scheme.step(f64::INFINITY))?;
        if t < best.0 {
            best = (t, tile);
        }
    }
    Ok(best)
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Waits for all work on the backend's device (a simulation queues its work on a stream
/// of its own).
fn wait(backend: &Backend) -> R<()> {
    if let Backend::Cuda(c) = backend {
        c.synchronize_device()?;
    }
    Ok(())
}
