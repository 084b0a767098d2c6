//! Vertices smoothed per second on a generated mesh with a circular front: the serial CPU
//! path (one thread), the parallel CPU path (every core) and the GPU, in one run, from the
//! same mesh; the paths' meshes are compared.
//!
//! ```text
//! cargo bench -p mesh-smoothing --bench smoothing -- --n 2048 --methods pain,min-quality \
//!     --metric barycentric,grid,texture --grid 4096
//! ```
//!
//! `--metric` chooses how a candidate position's metric is interpolated: `barycentric` in
//! the cavity triangle holding it, `grid` bilinearly from the super-sampled metric
//! (`--grid` samples per axis; the kernels interpolate in software on every path), and
//! `texture`, the same grid read on the GPU through textures with hardware filtering (the
//! CPU paths of `texture` are `grid`'s, so its speed-ups are over `grid`'s serial path).
//!
//! The serial path is timed on the first colour only (a full serial sweep of millions of
//! vertices takes minutes); its rate is that colour's vertices over its time. The
//! parallel and GPU paths are timed on whole sweeps (the GPU's after a warm-up sweep that
//! loads its code).

use mesh_smoothing::colour::{greedy, Colouring};
use mesh_smoothing::metric_grid::MetricGrid;
use mesh_smoothing::smooth::{serially, Method, Smoother};
use mesh_smoothing::{generate, Mesh};
use std::time::Instant;
use stencil_runtime::{Backend, Filtering};

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

/// Where candidates' metric comes from: the cavity's triangles, or a grid read with the
/// given filtering.
type Source<'a> = Option<(&'a MetricGrid, Filtering)>;

/// A smoother of `mesh` on `backend` reading the metric from `source`.
fn smoother(mesh: &Mesh, colouring: &Colouring, backend: &Backend, source: Source) -> Smoother {
    let s = Smoother::new(mesh, colouring, backend).expect("smoother");
    match source {
        None => s,
        Some((grid, filtering)) => s.with_metric_grid(grid, filtering).expect("metric grid"),
    }
}

/// Seconds of one sweep of `method` on `backend` from `mesh`, and the mesh after it.
fn timed_sweep(
    mesh: &Mesh,
    colouring: &Colouring,
    method: Method,
    backend: &Backend,
    source: Source,
) -> (f64, Mesh) {
    let mut s = smoother(mesh, colouring, backend, source);
    backend.synchronize().expect("sync");
    let t = Instant::now();
    s.sweep(method).expect("sweep");
    backend.synchronize().expect("sync");
    let secs = t.elapsed().as_secs_f64();
    let mut out = mesh.clone();
    s.write_back(&mut out).expect("write back");
    (secs, out)
}

fn largest_difference(a: &Mesh, b: &Mesh) -> f64 {
    a.points
        .iter()
        .zip(&b.points)
        .map(|(p, q)| (p[0] - q[0]).abs().max((p[1] - q[1]).abs()))
        .fold(0.0, f64::max)
}

fn main() {
    let n: usize = arg("--n", "512").parse().expect("--n N");
    let methods = arg("--methods", "pain");
    let gpu_sweeps: usize = arg("--gpu-sweeps", "5").parse().expect("--gpu-sweeps K");
    let metrics = arg("--metric", "barycentric");
    let grid_n: usize = arg("--grid", &(2 * n).to_string())
        .parse()
        .expect("--grid N");
    let t = Instant::now();
    let mesh = generate::square_with_front(n, 0.3).expect("mesh");
    let colouring = greedy(&mesh);
    let interior: usize = colouring.colours.iter().map(Vec::len).sum();
    let first = Colouring {
        colours: vec![colouring.colours[0].clone()],
    };
    println!(
        "mesh: {} vertices ({interior} interior), {} triangles, {} colours; built and coloured in {:.1} s",
        mesh.points.len(),
        mesh.triangles.len(),
        colouring.colours.len(),
        t.elapsed().as_secs_f64()
    );
    let cores = rayon::current_num_threads();
    let gpu = Backend::cuda(0).ok();
    let grid = (metrics != "barycentric").then(|| {
        let t = Instant::now();
        let g = MetricGrid::sample(&mesh, grid_n);
        println!(
            "metric grid: {grid_n}^2 samples in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        g
    });
    println!(
        "| method | metric | path | vertices | seconds | vertices/s | vs serial |\n| --- | --- | --- | --- | --- | --- | --- |"
    );
    for name in methods.split(',') {
        let method: Method = name.parse().expect("method");
        let mut serial_rate = f64::NAN;
        let mut par_mesh = mesh.clone();
        let mut par_rate = f64::NAN;
        for metric in metrics.split(',') {
            let (cpu_source, gpu_source): (Source, Source) = match metric {
                "barycentric" => (None, None),
                "grid" | "texture" => {
                    let g = grid.as_ref().expect("sampled above");
                    let f = if metric == "texture" {
                        Filtering::Hardware
                    } else {
                        Filtering::Software
                    };
                    (Some((g, Filtering::Software)), Some((g, f)))
                }
                other => panic!("unknown --metric {other}: barycentric, grid or texture"),
            };
            if metric != "texture" {
                // Serial: the first colour on one thread.
                let (serial_s, serial_mesh) =
                    serially(|| timed_sweep(&mesh, &first, method, &Backend::Cpu, cpu_source))
                        .expect("pool");
                serial_rate = first.colours[0].len() as f64 / serial_s;
                println!(
                    "| {name} | {metric} | CPU serial (colour 0) | {} | {serial_s:.3} | {serial_rate:.3e} | 1 |",
                    first.colours[0].len()
                );
                let (par_first_s, par_first) =
                    timed_sweep(&mesh, &first, method, &Backend::Cpu, cpu_source);
                let d = largest_difference(&serial_mesh, &par_first);
                let (par_s, mesh_after) =
                    timed_sweep(&mesh, &colouring, method, &Backend::Cpu, cpu_source);
                par_mesh = mesh_after;
                par_rate = interior as f64 / par_s;
                println!(
                    "| {name} | {metric} | CPU parallel ({cores} threads) | {interior} | {par_s:.3} | {par_rate:.3e} | {:.1} |",
                    par_rate / serial_rate
                );
                println!(
                    "<!-- colour 0 in parallel: {par_first_s:.3} s, largest difference from serial {d:.1e} -->"
                );
            }
            let Some(gpu) = &gpu else {
                println!("(no CUDA device: GPU path not measured)");
                continue;
            };
            let case = GpuCase {
                method,
                name,
                metric,
                source: gpu_source,
                interior,
                serial: serial_rate,
                parallel: par_rate,
                par_mesh: &par_mesh,
            };
            gpu_path(&mesh, &colouring, gpu, gpu_sweeps, case);
        }
    }
}

/// What one GPU measurement is compared with and labelled by.
struct GpuCase<'a> {
    method: Method,
    name: &'a str,
    metric: &'a str,
    source: Source<'a>,
    /// Vertices per sweep.
    interior: usize,
    /// The serial CPU path's rate (of the same metric source; `grid`'s for `texture`).
    serial: f64,
    /// The parallel CPU path's rate.
    parallel: f64,
    /// The parallel CPU path's mesh after one sweep.
    par_mesh: &'a Mesh,
}

/// Times the GPU path: a warm-up, one sweep compared with the parallel CPU's mesh, then
/// `sweeps` steady sweeps.
fn gpu_path(mesh: &Mesh, colouring: &Colouring, gpu: &Backend, sweeps: usize, c: GpuCase) {
    let first = Colouring {
        colours: vec![colouring.colours[0].clone()],
    };
    // Warm-up (loads the module), then one timed sweep from the same start.
    let _ = timed_sweep(mesh, &first, c.method, gpu, c.source);
    let (gpu_s, gpu_mesh) = timed_sweep(mesh, colouring, c.method, gpu, c.source);
    let d = largest_difference(c.par_mesh, &gpu_mesh);
    // Steady sweeps.
    let mut s = smoother(mesh, colouring, gpu, c.source);
    s.sweep(c.method).expect("sweep");
    gpu.synchronize().expect("sync");
    let t = Instant::now();
    for _ in 0..sweeps {
        s.sweep(c.method).expect("sweep");
    }
    gpu.synchronize().expect("sync");
    let steady = t.elapsed().as_secs_f64() / sweeps as f64;
    let rate = c.interior as f64 / steady;
    println!(
        "| {} | {} | GPU ({}) | {} | {steady:.4} | {rate:.3e} | {:.0} |",
        c.name,
        c.metric,
        gpu.name(),
        c.interior,
        rate / c.serial
    );
    println!(
        "<!-- GPU first sweep {gpu_s:.4} s; largest difference from the CPU's mesh {d:.1e}; GPU / parallel CPU {:.1} -->",
        rate / c.parallel
    );
}
