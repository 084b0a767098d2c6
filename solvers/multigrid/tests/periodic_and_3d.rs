//! Periodic sides (partly and fully periodic, 2D and 3D) and the 3D solver, on
//! manufactured solutions: convergence order, multigrid efficiency, agreement of mixed
//! precision, and the errors of setups the solver cannot take.

use multigrid::{solve, Boundary, BoundaryKind, Options, Order, Precision, Problem, Smoother};
use multigrid::{Report, SolveError};
use std::f64::consts::PI;
use stencil_runtime::{Backend, Field};

const TWO_PI: f64 = 2.0 * PI;

/// Periodic in x, Dirichlet in y: `sin(2 pi x) sin(pi y) + y`.
fn half_periodic(x: f64, y: f64) -> f64 {
    (TWO_PI * x).sin() * (PI * y).sin() + y
}

fn half_periodic_source(x: f64, y: f64) -> f64 {
    (TWO_PI * TWO_PI + PI * PI) * (TWO_PI * x).sin() * (PI * y).sin()
}

/// Periodic in both directions, zero mean.
fn fully_periodic(x: f64, y: f64) -> f64 {
    (TWO_PI * x).cos() * (2.0 * TWO_PI * y).sin() + 0.5 * (TWO_PI * (x + y)).sin()
}

fn fully_periodic_source(x: f64, y: f64) -> f64 {
    5.0 * TWO_PI * TWO_PI * (TWO_PI * x).cos() * (2.0 * TWO_PI * y).sin()
        + TWO_PI * TWO_PI * (TWO_PI * (x + y)).sin()
}

fn periodic_x() -> Boundary {
    Boundary {
        west: BoundaryKind::Periodic,
        east: BoundaryKind::Periodic,
        ..Boundary::all(BoundaryKind::Dirichlet)
    }
}

fn solve_2d(
    n: usize,
    options: &Options,
    u: impl Fn(f64, f64) -> f64 + Copy,
    f: impl Fn(f64, f64) -> f64,
) -> (f64, Report) {
    let cpu = Backend::Cpu;
    let mut p = Problem::new(&cpu, n, u, f).expect("problem");
    let report = solve(&cpu, &mut p, options).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    (p.max_error(u).expect("error"), report)
}

fn orders(errors: &[f64]) -> Vec<f64> {
    errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect()
}

fn worst_rate(report: &Report) -> f64 {
    report.cycles.iter().map(|c| c.rate).fold(0.0, f64::max)
}

/// The error of `run` (a solve on `n` nodes per axis, its error and report), after
/// printing it with its worst convergence rate (after `prefix`) and asserting that rate is
/// below `bound`.
fn rate_checked(prefix: &str, n: usize, (error, report): (f64, Report), bound: f64) -> f64 {
    println!(
        "{prefix}n = {n}: error {error:.3e}, {} cycles, worst rate {:.3}",
        report.cycles.len(),
        worst_rate(&report)
    );
    assert!(worst_rate(&report) < bound, "n = {n}:\n{}", report.table());
    error
}

#[test]
fn the_halo_wrap_copies_periodic_images() {
    let n = 9;
    let mut f = Field::from_fn(&[n, n], 2, |[i, j, _]| (100 * i + j) as f64);
    f.wrap_periodic(&Backend::Cpu, 0, n - 1, 2).expect("wrap x");
    f.wrap_periodic(&Backend::Cpu, 1, n - 1, 1).expect("wrap y");
    let at = |i, j| f.get([i, j, 0]).expect("inside");
    // Ghost -1 holds node n - 2 (the last node repeats the first), ghost n holds node 1.
    assert_eq!(at(-1, 3), 100.0 * 7.0 + 3.0);
    assert_eq!(at(-2, 3), 100.0 * 6.0 + 3.0);
    assert_eq!(at(9, 4), 100.0 + 4.0);
    assert_eq!(at(10, 4), 200.0 + 4.0);
    assert_eq!(at(2, -1), 200.0 + 7.0);
    assert_eq!(at(2, 9), 200.0 + 1.0);
    // Corners: x was wrapped first, so the y wrap carries the wrapped ghost columns.
    assert_eq!(at(-1, -1), 100.0 * 7.0 + 7.0);
    // Too deep a wrap is an error, not an out-of-bounds copy.
    assert!(f.wrap_periodic(&Backend::Cpu, 0, n - 1, 3).is_err());
    assert!(f.wrap_periodic(&Backend::Cpu, 2, n - 1, 1).is_err());
}

#[test]
fn periodic_in_x_converges_at_second_and_fourth_order() {
    for (order, sizes, expected) in [
        (Order::Second, [17, 33, 65, 129], 2.0),
        (Order::Fourth, [17, 33, 65, 129], 4.0),
    ] {
        let options = Options {
            boundary: periodic_x(),
            order,
            tolerance: 1e-12,
            ..Options::default()
        };
        let errors: Vec<f64> = sizes
            .iter()
            .map(|&n| solve_2d(n, &options, half_periodic, half_periodic_source).0)
            .collect();
        let p = orders(&errors);
        println!("{order:?}: errors {errors:?}, orders {p:?}");
        assert!(p.iter().all(|&q| (q - expected).abs() < 0.3), "{p:?}");
    }
}

#[test]
fn fully_periodic_problems_give_the_zero_mean_solution_with_textbook_rates() {
    let options = Options {
        boundary: Boundary::all(BoundaryKind::Periodic),
        tolerance: 1e-10,
        ..Options::default()
    };
    let mut errors = Vec::new();
    for n in [33, 65, 129, 257] {
        let run = solve_2d(n, &options, fully_periodic, fully_periodic_source);
        errors.push(rate_checked("", n, run, 0.1));
    }
    let p = orders(&errors);
    assert!(p.iter().all(|&q| (q - 2.0).abs() < 0.15), "{p:?}");
}

#[test]
fn fully_periodic_mixed_precision_matches_f64() {
    let n = 129;
    let run = |precision| {
        let options = Options {
            boundary: Boundary::all(BoundaryKind::Periodic),
            precision,
            order: Order::Fourth,
            ..Options::default()
        };
        let cpu = Backend::Cpu;
        let mut p = Problem::new(&cpu, n, fully_periodic, fully_periodic_source).expect("p");
        let report = solve(&cpu, &mut p, &options).expect("solve");
        assert!(report.relative_residual() <= 1e-10);
        p.u.interior().expect("u")
    };
    let (a, b) = (run(Precision::F64), run(Precision::Mixed));
    let diff = a
        .iter()
        .zip(&b)
        .fold(0f64, |m, (x, y)| m.max((x - y).abs()));
    println!("max |f64 - mixed| = {diff:e}");
    assert!(diff < 1e-9, "{diff}");
}

#[test]
fn periodic_setups_the_solver_cannot_take_are_clear_errors() {
    let cpu = Backend::Cpu;
    let run = |boundary: Boundary, smoother: Smoother, f: fn(f64, f64) -> f64| {
        let mut p = Problem::new(&cpu, 17, |_, _| 0.0, f).expect("problem");
        let options = Options {
            boundary,
            smoother,
            ..Options::default()
        };
        solve(&cpu, &mut p, &options)
    };
    let one_sided = Boundary {
        west: BoundaryKind::Periodic,
        ..Boundary::all(BoundaryKind::Dirichlet)
    };
    let e = run(one_sided, Smoother::RedBlack, fully_periodic_source).unwrap_err();
    assert!(
        matches!(
            e,
            SolveError::Option {
                name: "boundary",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("opposite side"), "{e}");

    let e = run(periodic_x(), Smoother::Zebra, half_periodic_source).unwrap_err();
    assert!(
        matches!(
            e,
            SolveError::Option {
                name: "smoother",
                ..
            }
        ),
        "{e}"
    );

    let all = Boundary::all(BoundaryKind::Periodic);
    let e = run(all, Smoother::RedBlack, |_, _| 1.0).unwrap_err();
    assert!(matches!(e, SolveError::Incompatible { .. }), "{e}");
    assert!(e.to_string().contains("zero mean"), "{e}");

    let neumann_and_periodic = Boundary {
        south: BoundaryKind::Neumann,
        north: BoundaryKind::Neumann,
        ..all
    };
    let e = run(
        neumann_and_periodic,
        Smoother::RedBlack,
        fully_periodic_source,
    )
    .unwrap_err();
    assert!(matches!(e, SolveError::Singular), "{e}");
}

/// A smooth 3D solution with non-zero boundary values.
fn exact_3d(x: f64, y: f64, z: f64) -> f64 {
    (PI * x).sin() * (PI * y).sin() * (2.0 * PI * z).sin() + x * y * z
}

fn source_3d(x: f64, y: f64, z: f64) -> f64 {
    6.0 * PI * PI * (PI * x).sin() * (PI * y).sin() * (2.0 * PI * z).sin()
}

fn solve_3d(n: usize, options: &Options) -> (f64, Report) {
    let cpu = Backend::Cpu;
    let mut p = Problem::new_3d(&cpu, n, exact_3d, source_3d).expect("problem");
    let report = solve(&cpu, &mut p, options).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    (p.max_error_3d(exact_3d).expect("error"), report)
}

/// 3D red-black V(2,2) cycles settle at a rate of about 0.11 (the 7-point operator's
/// smoothing factor is weaker than the 5-point one's); the bound checks that the rate does
/// not grow with the grid.
#[test]
fn three_d_v_cycles_converge_independently_of_the_grid_and_at_second_order() {
    let mut errors = Vec::new();
    for n in [9, 17, 33, 65] {
        errors.push(rate_checked(
            "3D ",
            n,
            solve_3d(n, &Options::default()),
            0.13,
        ));
    }
    let p = orders(&errors[1..]);
    assert!(p.iter().all(|&q| (q - 2.0).abs() < 0.2), "{errors:?} {p:?}");
}

#[test]
fn three_d_fourth_order_mixed_precision_converges_at_fourth_order() {
    let options = Options {
        order: Order::Fourth,
        precision: Precision::Mixed,
        ..Options::default()
    };
    let errors: Vec<f64> = [17, 33, 65]
        .iter()
        .map(|&n| solve_3d(n, &options).0)
        .collect();
    let p = orders(&errors);
    println!("3D 4th order mixed: errors {errors:?}, orders {p:?}");
    assert!(p.iter().all(|&q| (q - 4.0).abs() < 0.5), "{p:?}");
}

#[test]
fn three_d_boundary_kinds_smoothers_and_fmg() {
    // Neumann on x = 0 and x = 1 (the solution's x-derivative vanishes there), periodic in
    // z, Dirichlet in y: u = cos(pi x) sin(pi y) sin(2 pi z).
    let u = |x: f64, y: f64, z: f64| (PI * x).cos() * (PI * y).sin() * (2.0 * PI * z).sin();
    let f = move |x, y, z| 6.0 * PI * PI * u(x, y, z);
    let boundary = Boundary {
        west: BoundaryKind::Neumann,
        east: BoundaryKind::Neumann,
        bottom: BoundaryKind::Periodic,
        top: BoundaryKind::Periodic,
        ..Boundary::all(BoundaryKind::Dirichlet)
    };
    let cpu = Backend::Cpu;
    for (name, options) in [
        (
            "RB-GS",
            Options {
                boundary,
                ..Options::default()
            },
        ),
        (
            "Jacobi 6/7 + FMG",
            Options {
                boundary,
                smoother: Smoother::Jacobi { omega: 6.0 / 7.0 },
                pre: 3,
                post: 3,
                fmg: true,
                ..Options::default()
            },
        ),
    ] {
        let mut errors = Vec::new();
        for n in [17, 33] {
            let mut p = Problem::new_3d(&cpu, n, u, f).expect("problem");
            let report = solve(&cpu, &mut p, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
            let error = p.max_error_3d(u).expect("error");
            println!(
                "{name} n = {n}: error {error:.3e}, {} cycles, mean rate {:.3}",
                report.cycles.len(),
                report.mean_rate()
            );
            assert!(report.mean_rate() < 0.3, "{name}:\n{}", report.table());
            errors.push(error);
        }
        let p = orders(&errors)[0];
        assert!((p - 2.0).abs() < 0.3, "{name}: {errors:?}");
    }
    let zebra = Options {
        smoother: Smoother::Zebra,
        ..Options::default()
    };
    let mut p = Problem::new_3d(&cpu, 9, u, f).expect("problem");
    let e = solve(&cpu, &mut p, &zebra).unwrap_err();
    assert!(
        matches!(
            e,
            SolveError::Option {
                name: "smoother",
                ..
            }
        ),
        "{e}"
    );
}
