//! Vertices smoothed per second on a generated mesh with a circular front: the serial CPU
//! path (one thread), the parallel CPU path (every core) and the GPU, in one run, from the
//! same mesh; the paths' meshes are compared.
//!
//! ```text
//! cargo bench -p mesh-smoothing --bench smoothing -- --n 2048 --methods pain,min-quality
//! ```
//!
//! The serial path is timed on the first colour only (a full serial sweep of millions of
//! vertices takes minutes); its rate is that colour's vertices over its time. The
//! parallel and GPU paths are timed on whole sweeps (the GPU's after a warm-up sweep that
//! loads its code).

use mesh_smoothing::colour::{greedy, Colouring};
use mesh_smoothing::smooth::{serially, Method, Smoother};
use mesh_smoothing::{generate, Mesh};
use std::time::Instant;
use stencil_runtime::Backend;

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

/// Seconds of one sweep of `method` on `backend` from `mesh`, and the mesh after it.
fn timed_sweep(
    mesh: &Mesh,
    colouring: &Colouring,
    method: Method,
    backend: &Backend,
) -> (f64, Mesh) {
    let mut s = Smoother::new(mesh, colouring, backend).expect("smoother");
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
    println!(
        "| method | path | vertices | seconds | vertices/s | vs serial |\n| --- | --- | --- | --- | --- | --- |"
    );
    for name in methods.split(',') {
        let method: Method = name.parse().expect("method");
        // Serial: the first colour on one thread.
        let (serial_s, serial_mesh) =
            serially(|| timed_sweep(&mesh, &first, method, &Backend::Cpu)).expect("pool");
        let serial_rate = first.colours[0].len() as f64 / serial_s;
        println!(
            "| {name} | CPU serial (colour 0) | {} | {serial_s:.3} | {serial_rate:.3e} | 1 |",
            first.colours[0].len()
        );
        let (par_first_s, par_first) = timed_sweep(&mesh, &first, method, &Backend::Cpu);
        let d = largest_difference(&serial_mesh, &par_first);
        let (par_s, par_mesh) = timed_sweep(&mesh, &colouring, method, &Backend::Cpu);
        let par_rate = interior as f64 / par_s;
        println!(
            "| {name} | CPU parallel ({cores} threads) | {interior} | {par_s:.3} | {par_rate:.3e} | {:.1} |",
            par_rate / serial_rate
        );
        println!(
            "<!-- colour 0 in parallel: {par_first_s:.3} s, largest difference from serial {d:.1e} -->"
        );
        let Some(gpu) = &gpu else {
            println!("(no CUDA device: GPU path not measured)");
            continue;
        };
        // Warm-up (loads the module), then one timed sweep from the same start.
        let _ = timed_sweep(&mesh, &first, method, gpu);
        let (gpu_s, gpu_mesh) = timed_sweep(&mesh, &colouring, method, gpu);
        let d = largest_difference(&par_mesh, &gpu_mesh);
        // Steady sweeps.
        let mut s = Smoother::new(&mesh, &colouring, gpu).expect("smoother");
        s.sweep(method).expect("sweep");
        gpu.synchronize().expect("sync");
        let t = Instant::now();
        for _ in 0..gpu_sweeps {
            s.sweep(method).expect("sweep");
        }
        gpu.synchronize().expect("sync");
        let steady = t.elapsed().as_secs_f64() / gpu_sweeps as f64;
        let gpu_rate = interior as f64 / steady;
        println!(
            "| {name} | GPU ({}) | {interior} | {steady:.4} | {gpu_rate:.3e} | {:.0} |",
            gpu.name(),
            gpu_rate / serial_rate
        );
        println!(
            "<!-- GPU first sweep {gpu_s:.4} s; largest difference from the CPU's mesh {d:.1e}; GPU / parallel CPU {:.1} -->",
            gpu_rate / par_rate
        );
    }
}
