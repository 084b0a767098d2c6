//! Smoothing smooth_2d.vtu (9958 vertices, metric included): colourings are independent
//! sets; no method inverts an element; smart Laplacian and the min-quality optimisation
//! never lower the smallest quality; the optimisation methods end with a mean quality of
//! at least 0.7 and a minimum of at least 0.3; serial and parallel sweeps give the same
//! mesh bit for bit.

use mesh_smoothing::colour::{greedy, jones_plassmann};
use mesh_smoothing::mesh::signed_area2;
use mesh_smoothing::quality::{min_mean, qualities};
use mesh_smoothing::smooth::{serially, sweep, Method};
use mesh_smoothing::{vtu, Mesh};
use std::path::Path;
use stencil_runtime::Backend;

fn smooth_2d() -> Option<Mesh> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/meshes/smooth_2d.vtu");
    if !p.exists() {
        println!("SKIPPED: no {}", p.display());
        return None;
    }
    Some(vtu::read_mesh(&p).unwrap())
}

fn inverted(mesh: &Mesh) -> usize {
    mesh.triangles
        .iter()
        .filter(|t| signed_area2(mesh.points[t[0]], mesh.points[t[1]], mesh.points[t[2]]) <= 0.0)
        .count()
}

#[test]
fn colourings_are_independent_sets() {
    let Some(mesh) = smooth_2d() else { return };
    let g = greedy(&mesh);
    let jp = jones_plassmann(&mesh, 7);
    println!(
        "greedy: {} colours, Jones-Plassmann: {} colours",
        g.colours.len(),
        jp.colours.len()
    );
    assert!(g.is_valid(&mesh) && jp.is_valid(&mesh));
    assert!(g.colours.len() <= 8 && jp.colours.len() <= 10);
}

#[test]
fn every_method_improves_without_inverting() {
    let Some(start) = smooth_2d() else { return };
    let colouring = greedy(&start);
    let (min0, mean0) = min_mean(&qualities(&start));
    println!("before: min {min0:.4} mean {mean0:.4}");
    for method in [
        Method::Laplacian,
        Method::SmartLaplacian,
        Method::Pain,
        Method::MinQuality,
    ] {
        let mut mesh = start.clone();
        let mut last_min = min0;
        for s in 1..=5 {
            let r = sweep(&mut mesh, &colouring, method, &Backend::Cpu).unwrap();
            println!(
                "{method:?} sweep {s}: min {:.4} mean {:.4}, {} moved",
                r.min, r.mean, r.moved
            );
            assert_eq!(inverted(&mesh), 0, "{method:?} inverted an element");
            if matches!(method, Method::SmartLaplacian | Method::MinQuality) {
                assert!(
                    r.min >= last_min,
                    "{method:?} lowered the minimum: {last_min} -> {}",
                    r.min
                );
            }
            last_min = r.min;
        }
        let (min, mean) = min_mean(&qualities(&mesh));
        if matches!(method, Method::Pain | Method::MinQuality) {
            assert!(
                mean >= 0.7 && min >= 0.3,
                "{method:?}: min {min} mean {mean}"
            );
        }
    }
}

#[test]
fn serial_and_parallel_sweeps_agree() {
    let Some(start) = smooth_2d() else { return };
    let colouring = jones_plassmann(&start, 3);
    for method in [Method::SmartLaplacian, Method::Pain, Method::MinQuality] {
        let (mut a, mut b) = (start.clone(), start.clone());
        for _ in 0..2 {
            serially(|| sweep(&mut a, &colouring, method, &Backend::Cpu))
                .unwrap()
                .unwrap();
            sweep(&mut b, &colouring, method, &Backend::Cpu).unwrap();
        }
        assert!(
            a.points == b.points,
            "{method:?}: serial and parallel differ"
        );
    }
}

#[test]
fn a_generated_mesh_with_a_front_is_smoothed_too() {
    let mut mesh = mesh_smoothing::generate::square_with_front(120, 0.3).unwrap();
    assert_eq!(mesh.points.len(), 14_400);
    let colouring = jones_plassmann(&mesh, 1);
    let (min0, mean0) = min_mean(&qualities(&mesh));
    let mut last = min0;
    for _ in 0..5 {
        let r = sweep(&mut mesh, &colouring, Method::MinQuality, &Backend::Cpu).unwrap();
        assert!(r.min >= last);
        last = r.min;
    }
    let (min, mean) = min_mean(&qualities(&mesh));
    println!(
        "generated 120^2 with a front: min {min0:.3} -> {min:.3}, mean {mean0:.3} -> {mean:.3}"
    );
    assert_eq!(inverted(&mesh), 0);
    assert!(mean > mean0 && min > min0, "{min0} {mean0} -> {min} {mean}");
}

#[test]
fn the_super_sampled_metric_matches_the_vertex_metric() {
    use mesh_smoothing::metric_grid::MetricGrid;
    let Some(start) = smooth_2d() else { return };
    let grid = MetricGrid::sample(&start, 512);
    // At the vertices the grid is close to the given metric (relative Frobenius error).
    let errors: Vec<f64> = start
        .points
        .iter()
        .zip(&start.metric)
        .map(|(&p, m)| {
            let g = grid.at(p);
            let d = ((g.a - m.a).powi(2) + 2.0 * (g.b - m.b).powi(2) + (g.c - m.c).powi(2)).sqrt();
            d / (m.a * m.a + 2.0 * m.b * m.b + m.c * m.c).sqrt()
        })
        .collect();
    let mut sorted = errors.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    println!("super-sampled metric (512^2) at the vertices: median relative error {median:.2e}, largest {:.2e}", sorted[sorted.len() - 1]);
    assert!(median < 0.05, "{median}");
}

#[test]
fn sweeps_reading_the_super_sampled_metric_improve_without_inverting() {
    use mesh_smoothing::metric_grid::MetricGrid;
    use mesh_smoothing::smooth::Smoother;
    use stencil_runtime::Filtering;
    let Some(start) = smooth_2d() else { return };
    let colouring = greedy(&start);
    let grid = MetricGrid::sample(&start, 512);
    let (min0, mean0) = min_mean(&qualities(&start));
    for method in [Method::SmartLaplacian, Method::Pain, Method::MinQuality] {
        let mut mesh = start.clone();
        let mut s = Smoother::new(&start, &colouring, &Backend::Cpu)
            .unwrap()
            .with_metric_grid(&grid, Filtering::Software)
            .unwrap();
        let mut last_min = min0;
        for sweep in 1..=5 {
            s.sweep(method).unwrap();
            s.write_back(&mut mesh).unwrap();
            let (min, mean) = min_mean(&qualities(&mesh));
            println!("{method:?} (metric grid 512^2) sweep {sweep}: min {min:.4} mean {mean:.4}");
            assert_eq!(inverted(&mesh), 0, "{method:?} sweep {sweep}");
            if method != Method::Pain {
                assert!(
                    min >= last_min,
                    "{method:?} sweep {sweep}: {last_min} -> {min}"
                );
            }
            last_min = min;
        }
        let (min, mean) = min_mean(&qualities(&mesh));
        assert!(mean > mean0, "{method:?}: mean {mean0} -> {mean}");
        if method != Method::SmartLaplacian {
            assert!(
                mean >= 0.7 && min >= 0.3,
                "{method:?}: min {min} mean {mean}"
            );
        }
    }
    // Hardware filtering needs a GPU.
    let e = Smoother::new(&start, &colouring, &Backend::Cpu)
        .unwrap()
        .with_metric_grid(&grid, Filtering::Hardware)
        .err()
        .unwrap();
    assert!(e.to_string().contains("CUDA"), "{e}");
}
