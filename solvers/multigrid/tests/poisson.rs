//! The multigrid and defect-correction solvers on manufactured solutions: convergence
//! order under refinement, textbook multigrid efficiency, full multigrid, mixed precision,
//! boundary kinds, smoothers and cycles, and the errors a bad setup gets.

use multigrid::{
    solve, srj_schedule, Boundary, BoundaryKind, Cycle, Options, Order, Precision, Problem,
    Schedule, Smoother, SolveError,
};
use std::f64::consts::PI;
use stencil_runtime::Backend;

/// A smooth solution with non-zero boundary values.
fn exact(x: f64, y: f64) -> f64 {
    (PI * x).sin() * (2.0 * PI * y).sin() + x * x * y + 0.5
}

/// `-(ax u_xx + ay u_yy)` of [`exact`].
fn source(ax: f64, ay: f64) -> impl Fn(f64, f64) -> f64 {
    move |x, y| {
        let s = (PI * x).sin() * (2.0 * PI * y).sin();
        ax * (PI * PI * s - 2.0 * y) + ay * 4.0 * PI * PI * s
    }
}

fn solved(n: usize, options: &Options) -> (Problem, multigrid::Report) {
    let cpu = Backend::Cpu;
    let mut p = Problem::new(&cpu, n, exact, source(options.ax, options.ay)).expect("problem");
    let report = solve(&cpu, &mut p, options).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    (p, report)
}

/// Observed orders between successive grids of `sizes`.
fn observed_orders(order: Order, sizes: &[usize]) -> Vec<f64> {
    let options = Options {
        order,
        tolerance: 1e-12,
        ..Options::default()
    };
    let errors: Vec<f64> = sizes
        .iter()
        .map(|&n| solved(n, &options).0.max_error(exact).expect("error"))
        .collect();
    println!("{order:?}: errors {errors:?}");
    errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect()
}

#[test]
fn second_order_defect_converges_at_second_order() {
    let orders = observed_orders(Order::Second, &[17, 33, 65, 129]);
    assert!(orders.iter().all(|&p| (p - 2.0).abs() < 0.15), "{orders:?}");
}

#[test]
fn fourth_order_defect_converges_at_fourth_order() {
    let orders = observed_orders(Order::Fourth, &[33, 65, 129, 257]);
    assert!(orders.iter().all(|&p| (p - 4.0).abs() < 0.3), "{orders:?}");
}

#[test]
fn sixth_order_defect_converges_at_sixth_order() {
    // Coarse grids converge faster than 6th order (the one-sided boundary stencils'
    // errors are still falling); the finest pair shows the asymptotic order.
    let orders = observed_orders(Order::Sixth, &[17, 33, 65]);
    assert!(orders.iter().all(|&p| p > 5.5), "{orders:?}");
    assert!((orders[orders.len() - 1] - 6.0).abs() < 0.5, "{orders:?}");
}

#[test]
fn v22_red_black_cycles_reduce_the_residual_tenfold_on_every_grid() {
    for n in [33, 65, 129, 257, 513] {
        let (_, report) = solved(n, &Options::default());
        let worst = report.cycles.iter().map(|c| c.rate).fold(0.0, f64::max);
        println!(
            "n = {n}: {} cycles, worst rate {worst:.4}",
            report.cycles.len()
        );
        assert!(worst < 0.1, "n = {n}:\n{}", report.table());
    }
}

#[test]
fn full_multigrid_reaches_the_discretisation_error_in_one_pass() {
    for n in [65, 129, 257] {
        let converged = solved(n, &Options::default())
            .0
            .max_error(exact)
            .expect("error");
        let fmg = Options {
            fmg: true,
            max_cycles: 1,
            tolerance: 0.999,
            ..Options::default()
        };
        let one_pass = solved(n, &fmg).0.max_error(exact).expect("error");
        println!(
            "n = {n}: discretisation error {converged:.3e}, after one FMG pass {one_pass:.3e}"
        );
        assert!(
            one_pass < 1.5 * converged,
            "n = {n}: {one_pass:e} vs {converged:e}"
        );
    }
}

#[test]
fn mixed_precision_reaches_the_same_residual_and_solution_as_f64() {
    let n = 257;
    let (p64, r64) = solved(n, &Options::default());
    let mixed = Options {
        precision: Precision::Mixed,
        ..Options::default()
    };
    let (p32, r32) = solved(n, &mixed);
    println!("f64:\n{}mixed:\n{}", r64.table(), r32.table());
    assert!(r32.relative_residual() <= 1e-10);
    let u64 = p64.u.interior().expect("u");
    let u32 = p32.u.interior().expect("u");
    let diff = u64
        .iter()
        .zip(&u32)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-9, "solutions differ by {diff:e}");
    assert!(r32.cycles.len() <= r64.cycles.len() + 2);
}

#[test]
fn mixed_precision_defect_correction_keeps_sixth_order() {
    let options = Options {
        order: Order::Sixth,
        precision: Precision::Mixed,
        tolerance: 1e-12,
        ..Options::default()
    };
    let e1 = solved(17, &options).0.max_error(exact).expect("error");
    let e2 = solved(33, &options).0.max_error(exact).expect("error");
    assert!((e1 / e2).log2() > 5.5, "{e1:e} -> {e2:e}");
}

#[test]
fn w_and_f_cycles_and_every_smoother_converge() {
    let cases = [
        (Cycle::W, Smoother::RedBlack, 0.1),
        (Cycle::F, Smoother::RedBlack, 0.1),
        (Cycle::V, Smoother::Jacobi { omega: 2.0 / 3.0 }, 0.35),
        (Cycle::V, Smoother::Jacobi { omega: 0.8 }, 0.35),
        (
            Cycle::V,
            Smoother::Srj {
                factors: srj_schedule(2),
            },
            0.2,
        ),
        (Cycle::V, Smoother::Zebra, 0.05),
    ];
    for (cycle, smoother, bound) in cases {
        let options = Options {
            cycle,
            smoother: smoother.clone(),
            ..Options::default()
        };
        let (p, report) = solved(129, &options);
        let rate = report.mean_rate();
        println!(
            "{cycle:?} {smoother:?}: {} cycles, mean rate {rate:.4}",
            report.cycles.len()
        );
        assert!(rate < bound, "{cycle:?} {smoother:?}: rate {rate}");
        assert!(p.max_error(exact).expect("error") < 2e-4);
    }
}

#[test]
fn zebra_lines_stay_fast_on_strongly_anisotropic_problems() {
    for (ax, ay) in [(1.0, 1e-3), (1e-3, 1.0)] {
        let zebra = Options {
            ax,
            ay,
            smoother: Smoother::Zebra,
            ..Options::default()
        };
        let (_, report) = solved(129, &zebra);
        let point = Options {
            ax,
            ay,
            max_cycles: 8,
            stagnation: 1.0,
            ..Options::default()
        };
        let cpu = Backend::Cpu;
        let mut p = Problem::new(&cpu, 129, exact, source(ax, ay)).expect("problem");
        let point_rate = match solve(&cpu, &mut p, &point) {
            Ok(r) => r.mean_rate(),
            Err(SolveError::NotConverged { residual, .. }) => residual.powf(1.0 / 8.0),
            Err(e) => panic!("{e}"),
        };
        println!(
            "ax {ax} ay {ay}: zebra rate {:.4}, point red-black {point_rate:.4}",
            report.mean_rate()
        );
        assert!(report.mean_rate() < 0.1, "{}", report.table());
        assert!(
            point_rate > 0.3 && point_rate > 20.0 * report.mean_rate(),
            "the point smoother is expected to struggle: {point_rate}"
        );
    }
}

/// `cos(pi x) sin(pi y)`: zero normal derivative on x = 0, 1; zero on y = 0, 1.
fn neumann_exact(x: f64, y: f64) -> f64 {
    (PI * x).cos() * (PI * y).sin()
}

#[test]
fn neumann_sides_converge_at_second_order() {
    let options = Options {
        boundary: Boundary {
            west: BoundaryKind::Neumann,
            east: BoundaryKind::Neumann,
            south: BoundaryKind::Dirichlet,
            north: BoundaryKind::Dirichlet,
            ..Boundary::all(BoundaryKind::Dirichlet)
        },
        ..Options::default()
    };
    let cpu = Backend::Cpu;
    let f = |x: f64, y: f64| 2.0 * PI * PI * neumann_exact(x, y);
    let mut errors = Vec::new();
    for n in [33, 65, 129] {
        let mut p = Problem::new(&cpu, n, neumann_exact, f).expect("problem");
        let report = solve(&cpu, &mut p, &options).expect("solve");
        assert!(report.mean_rate() < 0.15, "{}", report.table());
        errors.push(p.max_error(neumann_exact).expect("error"));
    }
    let orders: Vec<f64> = errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
    assert!(orders.iter().all(|&p| (p - 2.0).abs() < 0.2), "{errors:?}");
}

#[test]
fn penalty_dirichlet_matches_direct_dirichlet() {
    let penalty = Options {
        boundary: Boundary::all(BoundaryKind::Penalty),
        ..Options::default()
    };
    let (p_direct, _) = solved(129, &Options::default());
    let (p_penalty, report) = solved(129, &penalty);
    let direct = p_direct.max_error(exact).expect("error");
    let pen = p_penalty.max_error(exact).expect("error");
    println!(
        "direct {direct:e}, penalty {pen:e}, {} cycles",
        report.cycles.len()
    );
    assert!(report.mean_rate() < 0.15, "{}", report.table());
    assert!(
        (pen - direct).abs() < 0.05 * direct,
        "{pen:e} vs {direct:e}"
    );
}

#[test]
fn bad_setups_are_clear_errors() {
    let cpu = Backend::Cpu;
    assert!(matches!(
        Problem::new(&cpu, 100, exact, source(1.0, 1.0)),
        Err(SolveError::Size { n: 100 })
    ));
    let mut p = Problem::new(&cpu, 33, exact, source(1.0, 1.0)).expect("problem");
    let all_neumann = Options {
        boundary: Boundary::all(BoundaryKind::Neumann),
        ..Options::default()
    };
    assert!(matches!(
        solve(&cpu, &mut p, &all_neumann),
        Err(SolveError::Singular)
    ));
    let few = Options {
        max_cycles: 2,
        ..Options::default()
    };
    let e = solve(&cpu, &mut p, &few).unwrap_err();
    assert!(
        matches!(e, SolveError::NotConverged { cycles: 2, .. }),
        "{e}"
    );
    let wrong = Options {
        smoother: Smoother::Jacobi { omega: 1.9 },
        ..Options::default()
    };
    let mut p = Problem::new(&cpu, 33, exact, source(1.0, 1.0)).expect("problem");
    let e = solve(&cpu, &mut p, &wrong).unwrap_err();
    assert!(
        matches!(
            e,
            SolveError::Diverged { .. } | SolveError::Stagnated { .. }
        ),
        "{e}"
    );
    println!("{e}");
}

#[test]
fn a_solve_hands_back_the_callers_own_solution_buffer() {
    // The fused update writes into the solver's second buffer and the two alternate; after
    // an odd or even number of cycles alike, the caller's field keeps its storage.
    let cpu = Backend::Cpu;
    let n = 33;
    let mut counts = Vec::new();
    for tolerance in [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8] {
        let options = Options {
            tolerance,
            ..Options::default()
        };
        let mut p = Problem::new(&cpu, n, exact, source(1.0, 1.0)).expect("problem");
        let before = p.u.as_slice().expect("host field").as_ptr();
        let mut solver = multigrid::Solver::new(&cpu, n, 2, &options).expect("solver");
        let report = solver.solve(&mut p.u, &p.f).expect("solve");
        assert_eq!(p.u.as_slice().expect("host field").as_ptr(), before);
        let check = solver.residual_norm(&mut p.u, &p.f).expect("norm");
        assert!(
            check <= tolerance * report.initial,
            "{check:e} for {tolerance:e}"
        );
        counts.push(report.cycles.len());
    }
    assert!(
        counts.iter().any(|c| c % 2 == 1) && counts.iter().any(|c| c % 2 == 0),
        "{counts:?}"
    );
}

#[test]
fn a_kept_solver_warm_starts_and_matches_one_off_solves() {
    // Cycles queued one by one (as a time-stepping code does) converge to the answer of a
    // one-off solve; a kept solver then re-solves a changed right-hand side from there.
    let cpu = Backend::Cpu;
    let n = 65;
    let options = Options {
        precision: Precision::Mixed,
        ..Options::default()
    };
    let mut reference = Problem::new(&cpu, n, exact, source(1.0, 1.0)).expect("problem");
    solve(&cpu, &mut reference, &options).expect("one-off solve");
    let mut p = Problem::new(&cpu, n, exact, source(1.0, 1.0)).expect("problem");
    let mut solver = multigrid::Solver::new(&cpu, n, 2, &options).expect("solver");
    let initial = solver.residual_norm(&mut p.u, &p.f).expect("norm");
    let mut norms = vec![initial];
    for _ in 0..12 {
        solver.cycle(&mut p.u, &p.f).expect("cycle");
        norms.push(solver.residual_norm(&mut p.u, &p.f).expect("norm"));
    }
    for w in norms.windows(2).take(6) {
        assert!(
            w[1] < 0.15 * w[0],
            "a cycle reduced the residual only {:?}",
            w
        );
    }
    assert!(norms[12] < 1e-10 * initial, "residuals {norms:?}");
    let (a, b) = (
        p.u.interior().expect("u"),
        reference.u.interior().expect("u"),
    );
    let diff = a
        .iter()
        .zip(&b)
        .fold(0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(
        diff < 1e-9,
        "kept solver and one-off solve differ by {diff:e}"
    );
    // Warm start: a slightly changed right-hand side needs fewer cycles than from zero.
    let f2 = stencil_runtime::Field::from_fn(&[n, n], 6, |q| {
        let h = 1.0 / (n - 1) as f64;
        1.01 * source(1.0, 1.0)(q[0] as f64 * h, q[1] as f64 * h)
    });
    let warm = solver.solve(&mut p.u, &f2).expect("warm solve");
    let mut cold = Problem::new(&cpu, n, exact, source(1.0, 1.0)).expect("problem");
    let cold = solver.solve(&mut cold.u, &f2).expect("cold solve");
    assert!(
        warm.initial < 0.05 * cold.initial,
        "warm start residual {:e} vs cold {:e}",
        warm.initial,
        cold.initial
    );
}

/// Fusing launches (the zeroing with the first half-sweep; with Dirichlet sides the
/// residual with its restriction and the prolongation with the next half-sweep; with one
/// pre-sweep, the level's first sweep recomputed instead of stored) leaves every cycle's
/// residual and the solution as they were, for every cycle shape, both precisions and a
/// boundary that allows only the first fusion.
#[test]
fn fused_launches_give_the_same_iterates() {
    let mut neumann_west = Boundary::all(BoundaryKind::Dirichlet);
    neumann_west.west = BoundaryKind::Neumann;
    for boundary in [Boundary::all(BoundaryKind::Dirichlet), neumann_west] {
        for (cycle, pre, post) in [
            (Cycle::V, 1, 2),
            (Cycle::V, 2, 2),
            (Cycle::W, 1, 2),
            (Cycle::F, 2, 2),
            (Cycle::V, 3, 3),
            (Cycle::V, 2, 1),
        ] {
            for precision in [Precision::F64, Precision::Mixed] {
                let run = |schedule| {
                    solved(
                        65,
                        &Options {
                            cycle,
                            precision,
                            boundary,
                            pre,
                            post,
                            tolerance: 1e-10,
                            schedule: Some(schedule),
                            ..Options::default()
                        },
                    )
                };
                let ((fused, fr), (plain, pr)) = (run(Schedule::FUSED), run(Schedule::UNFUSED));
                let (_, cpu) = run(Schedule::for_backend(&Backend::Cpu));
                let residuals = |r: &multigrid::Report| -> Vec<f64> {
                    r.cycles.iter().map(|c| c.residual).collect()
                };
                let case = format!("{boundary:?} {cycle:?}({pre}, {post}) {precision:?}");
                assert!(fr.cycles.len() >= 3, "{case}: {} cycles", fr.cycles.len());
                assert_eq!(residuals(&fr), residuals(&pr), "{case}");
                assert_eq!(residuals(&cpu), residuals(&pr), "{case}");
                let (a, b) = (fused.u.interior().unwrap(), plain.u.interior().unwrap());
                assert!(a.iter().zip(&b).all(|(x, y)| x == y), "{case}");
            }
        }
    }
}

/// Every smoother's solve (red-black points, zebra lines, Jacobi, in f64 and mixed
/// precision) gives the same bits on the kernels' plain rows as on their AVX copies
/// (`stencil_runtime::cpu::on_plain_rows`; the same copy twice where the CPU lacks AVX).
#[test]
fn solves_on_the_plain_rows_equal_the_avx_rows_bit_for_bit() {
    let smoothers = [
        Smoother::RedBlack,
        Smoother::Zebra,
        Smoother::Jacobi { omega: 0.8 },
    ];
    for smoother in smoothers {
        for precision in [Precision::F64, Precision::Mixed] {
            let options = Options {
                smoother: smoother.clone(),
                precision,
                ..Options::default()
            };
            let bits = |p: &Problem| -> Vec<u64> {
                let u = p.u.interior().expect("u");
                u.iter().map(|v| v.to_bits()).collect()
            };
            let (wide, _) = solved(65, &options);
            let (plain, _) = stencil_runtime::cpu::on_plain_rows(|| solved(65, &options));
            assert!(
                bits(&wide) == bits(&plain),
                "{smoother:?} {precision:?}: the plain rows' solution differs"
            );
        }
    }
}
