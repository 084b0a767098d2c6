//! First launches on a device with empty caches: for each kernel and precision, the wall
//! time of its first launch (loading its code through the driver's JIT and choosing a
//! launch shape, then running), the launches until its launch shape is tuned, and the
//! steady-state time of a launch with that shape (median of device-timed launches), with
//! its effective bandwidth against the device's copy bandwidth measured in the same run.
//!
//! Run it once per tuning policy, each in a fresh process with empty caches, on a GPU
//! machine:
//!
//! ```text
//! CUDA_CACHE_DISABLE=1 STENCIL_TUNE=on     STENCIL_TUNE_CACHE=$(mktemp -u) first_launch
//! CUDA_CACHE_DISABLE=1 STENCIL_TUNE=search STENCIL_TUNE_CACHE=$(mktemp -u) first_launch
//! ```
//!
//! (`CUDA_CACHE_DISABLE=1` turns the driver's own cache of compiled PTX off.) Options:
//! `--size2 N` (2D kernels over N x N, default 4096), `--size3 N` (3D over N^3, default
//! 256). Without a GPU it says so and exits.

use kernels_gen::ir::Access;
use std::time::Instant;
use stencil_runtime::cuda::{KernelCode, TUNE_CACHE_ENV};
use stencil_runtime::{Backend, Cuda, Field, Real};
use stencil_tests::bench::{arg, median_device_time, R};
use stencil_tests::device::decided_shapes;
use stencil_tests::dispatch;
use stencil_tests::harness::{kernel_ir_of_dims, random_field, rng};
use stencil_tests::kernels::{suite, ALL};

/// Device-timed launches of the steady state; the median is reported.
const REPS: usize = 15;

/// Launches after which a kernel whose shape is still not tuned is reported as such.
const MOST_LAUNCHES: usize = 20;

/// The kernels measured: the suite's bandwidth-bound stencils and a reduction.
fn kernels() -> [&'static KernelCode; 7] {
    [
        &suite::lap5::CODE,
        &suite::lap9::CODE,
        &suite::lap7::CODE,
        &suite::jacobi::CODE,
        &suite::upwind::CODE,
        &suite::reconstruct::CODE,
        &suite::cfl::CODE,
    ]
}

/// One row of the table.
struct Row {
    kernel: &'static str,
    precision: &'static str,
    first_ms: f64,
    launches: Option<usize>,
    tuned_ms: f64,
    shape: String,
    steady_ms: f64,
    gbs: f64,
}

fn measure<T: Real>(cuda: &Cuda, code: &'static KernelCode, n: &[usize]) -> R<Row> {
    let name = code.name;
    let c = ALL
        .iter()
        .find(|c| c.name == name)
        .ok_or("a suite kernel")?;
    let k = kernel_ir_of_dims(c.source, c.name, c.dims);
    let backend = Backend::Cuda(cuda.clone());
    let mut r = rng(name);
    let mut inputs = Vec::new();
    for f in k.fields.iter().filter(|f| f.access == Access::In) {
        inputs.push(random_field::<T>(&mut r, n, f.halo() as usize, 0.5, 2.0).to(&backend)?);
    }
    let ins: Vec<&Field<T>> = inputs.iter().collect();
    let outs = k.fields.len() - inputs.len();
    let mut out: Vec<Field<T>> = (0..outs)
        .map(|_| Field::zeros_on(&backend, n, 0))
        .collect::<Result<_, _>>()?;
    let scalars = vec![0.1; k.scalars.len()];
    let domain = [0, 1, 2].map(|a| n.get(a).copied().unwrap_or(1));
    let mut launch = || dispatch::launch(name, &backend, &ins, &mut out, &scalars).map(|_| ());

    // Launches until the tuning cache file holds one more decided shape (a search decides
    // in the first launch; trials once each proposal has run and a later launch sees the
    // times); the lines of trial launches (`key <TAB> trial ..`) do not count.
    let cached = || {
        let file = std::env::var(TUNE_CACHE_ENV).unwrap_or_default();
        std::fs::read_to_string(file).map_or(0, |t| decided_shapes(&t))
    };
    let before = cached();
    let start = Instant::now();
    launch()?;
    cuda.synchronize()?;
    let first_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut launches = None;
    for count in 1..=MOST_LAUNCHES {
        if cached() > before {
            launches = Some(count);
            break;
        }
        launch()?;
        cuda.synchronize()?;
    }
    let tuned_ms = start.elapsed().as_secs_f64() * 1e3;
    let shape = cuda.launch_shape(code, T::PRECISION, domain).to_string();

    let steady = median_device_time(cuda, REPS, || Ok(launch()?))?;
    let points: usize = n.iter().product();
    let bytes = (k.fields.len() * points * std::mem::size_of::<T>()) as f64;
    Ok(Row {
        kernel: name,
        precision: if T::PRECISION == stencil_runtime::Precision::F32 {
            "f32"
        } else {
            "f64"
        },
        first_ms,
        launches,
        tuned_ms,
        shape,
        steady_ms: steady * 1e3,
        gbs: bytes / steady / 1e9,
    })
}

fn main() -> R<()> {
    let cuda = match Cuda::new(0) {
        Ok(c) => c,
        Err(why) => {
            println!("SKIPPED: the first-launch benchmark needs a CUDA device: {why}");
            return Ok(());
        }
    };
    let size2: usize = arg("--size2").map_or(Ok(4096), |s| s.parse())?;
    let size3: usize = arg("--size3").map_or(Ok(256), |s| s.parse())?;
    // The context, the memory pool and the copy bandwidth first: not part of any kernel's
    // first launch.
    let copy = cuda.copy_bandwidth(1 << 30)?;
    println!(
        "device: {}; tuning: {:?}; STENCIL_TUNE_CACHE={}; CUDA_CACHE_DISABLE={}; copy bandwidth {:.0} GB/s",
        cuda.device_name(),
        cuda.tuning(),
        std::env::var(TUNE_CACHE_ENV).unwrap_or_default(),
        std::env::var("CUDA_CACHE_DISABLE").unwrap_or_default(),
        copy / 1e9
    );
    println!("| kernel | precision | domain | first launch (ms) | launches until tuned | time until tuned (ms) | shape | steady launch (ms) | T_eff (GB/s) | of copy |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for code in kernels() {
        let n = match code.dims {
            1 => vec![size2 * size2],
            2 => vec![size2; 2],
            _ => vec![size3; 3],
        };
        let rows = [
            measure::<f32>(&cuda, code, &n)?,
            measure::<f64>(&cuda, code, &n)?,
        ];
        for r in rows {
            let launches = r
                .launches
                .map_or(format!("over {MOST_LAUNCHES}"), |l| l.to_string());
            println!(
                "| {} | {} | {:?} | {:.1} | {} | {:.1} | {} | {:.4} | {:.0} | {:.3} |",
                r.kernel,
                r.precision,
                n,
                r.first_ms,
                launches,
                r.tuned_ms,
                r.shape,
                r.steady_ms,
                r.gbs,
                r.gbs * 1e9 / copy
            );
        }
    }
    Ok(())
}
