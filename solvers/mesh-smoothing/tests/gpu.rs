//! The GPU path gives the CPU's mesh: every method, two sweeps of smooth_2d.vtu (and a
//! generated mesh), the vertices and their metric compared. Skips with a printed reason
//! without a CUDA device.

use mesh_smoothing::colour::{greedy, jones_plassmann};
use mesh_smoothing::smooth::{Method, Smoother};
use mesh_smoothing::{vtu, Mesh};
use std::path::Path;
use stencil_runtime::Backend;
use stencil_tests::device::gpu_or_skip;

/// The largest difference between two meshes' coordinates and metric components.
fn difference(a: &Mesh, b: &Mesh) -> f64 {
    let mut d: f64 = 0.0;
    for v in 0..a.points.len() {
        for k in 0..2 {
            d = d.max((a.points[v][k] - b.points[v][k]).abs());
        }
        let (p, q) = (a.metric[v], b.metric[v]);
        d = d.max((p.a - q.a).abs() / p.a.abs().max(1.0));
        d = d.max((p.b - q.b).abs() / p.a.abs().max(1.0));
        d = d.max((p.c - q.c).abs() / p.c.abs().max(1.0));
    }
    d
}

fn compare(start: &Mesh, gpu: &Backend, label: &str) {
    let colouring = jones_plassmann(start, 5);
    for method in [
        Method::Laplacian,
        Method::SmartLaplacian,
        Method::Pain,
        Method::MinQuality,
    ] {
        let (mut a, mut b) = (start.clone(), start.clone());
        let mut on_cpu = Smoother::new(start, &colouring, &Backend::Cpu).unwrap();
        let mut on_gpu = Smoother::new(start, &colouring, gpu).unwrap();
        for sweep in 0..2 {
            let moved_cpu = on_cpu.sweep(method).unwrap();
            let moved_gpu = on_gpu.sweep(method).unwrap();
            assert_eq!(moved_cpu, moved_gpu, "{label} {method:?} sweep {sweep}");
        }
        on_cpu.write_back(&mut a).unwrap();
        on_gpu.write_back(&mut b).unwrap();
        let d = difference(&a, &b);
        println!("{label} {method:?}: largest CPU-GPU difference after 2 sweeps {d:.2e}");
        assert!(d <= 1e-12, "{label} {method:?}: {d}");
    }
}

#[test]
fn gpu_sweeps_give_the_cpu_mesh() {
    let Some(gpu) = gpu_or_skip() else { return };
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/meshes/smooth_2d.vtu");
    if p.exists() {
        compare(&vtu::read_mesh(&p).unwrap(), &gpu, "smooth_2d");
    } else {
        println!("no {}: the shared mesh is not compared", p.display());
    }
    let generated = mesh_smoothing::generate::square_with_front(150, 0.3).unwrap();
    compare(&generated, &gpu, "generated 150^2");
    // Colourings differ in order, not in what a GPU can run.
    assert!(greedy(&generated).is_valid(&generated));
}

/// Sweeps reading the super-sampled metric: in software the GPU gives the CPU's mesh; with
/// hardware filtering (textures) the mesh differs slightly but is as good.
#[test]
fn gpu_sweeps_with_the_metric_grid() {
    use mesh_smoothing::metric_grid::MetricGrid;
    use mesh_smoothing::quality::{min_mean, qualities};
    use stencil_runtime::Filtering;
    let Some(gpu) = gpu_or_skip() else { return };
    let start = mesh_smoothing::generate::square_with_front(150, 0.3).unwrap();
    let colouring = jones_plassmann(&start, 5);
    let grid = MetricGrid::sample(&start, 300);
    for method in [Method::Pain, Method::MinQuality] {
        let run = |backend: &Backend, filtering: Filtering| {
            let mut s = Smoother::new(&start, &colouring, backend)
                .unwrap()
                .with_metric_grid(&grid, filtering)
                .unwrap();
            for _ in 0..2 {
                s.sweep(method).unwrap();
            }
            let mut out = start.clone();
            s.write_back(&mut out).unwrap();
            out
        };
        let cpu = run(&Backend::Cpu, Filtering::Software);
        let software = run(&gpu, Filtering::Software);
        let d = difference(&cpu, &software);
        println!("{method:?} metric grid, software: largest CPU-GPU difference {d:.2e}");
        assert!(d <= 1e-12, "{method:?}: {d}");
        let texture = run(&gpu, Filtering::Hardware);
        let ((min_c, mean_c), (min_t, mean_t)) =
            (min_mean(&qualities(&cpu)), min_mean(&qualities(&texture)));
        println!(
            "{method:?} metric grid, texture: min {min_t:.4} mean {mean_t:.4} (CPU {min_c:.4} {mean_c:.4}), largest coordinate or metric difference {:.2e}",
            difference(&cpu, &texture)
        );
        assert!(min_t > 0.0, "{method:?}: an element inverted");
        assert!(
            (mean_t - mean_c).abs() < 2e-3,
            "{method:?}: {mean_t} vs {mean_c}"
        );
        assert!(
            (min_t - min_c).abs() < 2e-2,
            "{method:?}: {min_t} vs {min_c}"
        );
    }
}
