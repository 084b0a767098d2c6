//! The stream function's Poisson solve across the levels of a tree (`cavity::adaptive::
//! TreePoisson`), on the CPU: V-cycles converge on a full tree and on a locally refined
//! one, to the discrete solution's accuracy.

use cavity::adaptive::{Hierarchy, TreePoisson};
use std::f64::consts::PI;
use stencil_runtime::blocks::{BlockMeasure, Predictor};
use stencil_runtime::{Backend, BlockField, BlockKey};

/// The exact stream function (0 on the walls) and its `w = -lap(psi)`.
fn exact(x: f64, y: f64) -> f64 {
    (PI * x).sin() * (2.0 * PI * y).sin() * (1.0 + x)
}

fn vorticity(x: f64, y: f64) -> f64 {
    // lap of sin(pi x)(1 + x) sin(2 pi y):
    // d2/dx2 [sin(pi x)(1 + x)] = -pi^2 sin(pi x)(1 + x) + 2 pi cos(pi x)
    let fx = (PI * x).sin() * (1.0 + x);
    let fxx = -PI * PI * fx + 2.0 * PI * (PI * x).cos();
    let gy = (2.0 * PI * y).sin();
    let gyy = -4.0 * PI * PI * gy;
    -(fxx * gy + fx * gyy)
}

/// The largest error against `exact` over every present block's points.
fn largest_error(tree: &Hierarchy, psi: &BlockField<f64>) -> f64 {
    let mut worst: f64 = 0.0;
    for key in tree.grid().keys() {
        let n = tree.points(key.level);
        let h = tree.spacing(key.level);
        let o = tree.grid().geometry().at_level(key.level).origin(key);
        for j in o[1]..(o[1] + 8).min(n) {
            for i in o[0]..(o[0] + 8).min(n) {
                let v = psi
                    .get_at(tree.grid(), key.level, [i, j, 0])
                    .unwrap()
                    .unwrap();
                worst = worst.max((v - exact(i as f64 * h, j as f64 * h)).abs());
            }
        }
    }
    worst
}

/// Cycles until the composite residual stops falling; returns the residuals.
fn solve(tree: &mut Hierarchy, cycles: usize) -> (BlockField<f64>, Vec<f64>) {
    let w = tree.field::<f64>(vorticity).unwrap();
    let mut psi = tree.field::<f64>(|_, _| 0.0).unwrap();
    let mut poisson = TreePoisson::new(tree).unwrap();
    let mut residuals = vec![poisson.relative_residual(tree, &mut psi, &w).unwrap()];
    for _ in 0..cycles {
        poisson.cycle(tree, &mut psi, &w).unwrap();
        residuals.push(poisson.relative_residual(tree, &mut psi, &w).unwrap());
    }
    (psi, residuals)
}

#[test]
fn v_cycles_converge_on_a_full_tree() {
    let cpu = Backend::Cpu;
    // Levels of 9, 17, 33, 65 and 129 points, all present.
    let mut tree = Hierarchy::new(&cpu, 9, 8, 5, 5, Predictor::Cubic).unwrap();
    let (psi, residuals) = solve(&mut tree, 10);
    println!("full tree residuals: {residuals:?}");
    let factor = (residuals[8] / residuals[3]).powf(1.0 / 5.0);
    assert!(factor < 0.2, "convergence factor {factor}: {residuals:?}");
    assert!(residuals[10] < 1e-9, "{residuals:?}");
    // Second order: the error of the 129-point solution (h = 1/128).
    let error = largest_error(&tree, &psi);
    println!("largest error {error:.3e}");
    assert!(error < 2e-3 && error > 1e-6, "{error}");
}

#[test]
fn v_cycles_converge_on_a_locally_refined_tree() {
    let cpu = Backend::Cpu;
    // Levels 0-2 whole (9, 17, 33 points), levels 3 and 4 only near the corner (0.75,
    // 0.75), as an adaptation with the corner's blocks significant makes them.
    let mut tree = Hierarchy::new(&cpu, 9, 8, 5, 3, Predictor::Cubic).unwrap();
    for _ in 0..2 {
        let finest = tree.finest_present();
        let hot = |k: &BlockKey| {
            let n = tree.points(k.level) as f64;
            let centre = |a: usize| (k.index[a] as f64 * 8.0 + 4.0) / (n - 1.0);
            k.level == finest && (centre(0) - 0.75).abs() < 0.2 && (centre(1) - 0.75).abs() < 0.2
        };
        let measures = tree
            .grid()
            .keys()
            .into_iter()
            .filter(hot)
            .map(|k| {
                (
                    k,
                    BlockMeasure {
                        significant: true,
                        above_coarsening: true,
                    },
                )
            })
            .collect();
        tree.adapt::<f64>(&measures, &mut []).unwrap();
    }
    assert_eq!(tree.finest_present(), 4);
    let fraction = tree.present_fraction();
    println!("present fraction {fraction:.3}");
    assert!(fraction < 0.6, "{fraction}");
    let (psi, residuals) = solve(&mut tree, 12);
    println!("refined tree residuals: {residuals:?}");
    assert!(residuals[12] < 1e-9, "{residuals:?}");
    let factor = (residuals[10] / residuals[4]).powf(1.0 / 6.0);
    assert!(factor < 0.3, "convergence factor {factor}: {residuals:?}");
    // The error is that of the coarsest leaves (33 points), not worse.
    let error = largest_error(&tree, &psi);
    let mut uniform = Hierarchy::new(&cpu, 9, 8, 3, 3, Predictor::Cubic).unwrap();
    let (upsi, _) = solve(&mut uniform, 12);
    let uniform_error = largest_error(&uniform, &upsi);
    println!("largest error {error:.3e}; uniform 33 points {uniform_error:.3e}");
    assert!(
        error < 1.5 * uniform_error,
        "{error} against {uniform_error}"
    );
}
