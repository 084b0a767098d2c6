//! The 1D dam breaks of Ritter (dry bed) and Stoker (wet bed) against their exact
//! solutions: the L1 error of the depth falls at least linearly under refinement, the
//! depth stays non-negative and the volume is conserved between walls.

use shallow_water::analytic::DamBreak;
use shallow_water::*;
use stencil_runtime::{Backend, Real};

/// The L1 error of the depth at `t_end` on `nx` cells of `[0, 1]` (one row, walls), and
/// the relative volume change.
fn dam_break<T: Real>(
    exact: DamBreak,
    nx: usize,
    t_end: f64,
    integrator: Integrator,
) -> (f64, f64, f64) {
    let grid = Grid::new(nx, 1, 1.0 / nx as f64, 1.0 / nx as f64, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |_, _| 0.0).unwrap();
    let water = Water::from_depth(&terrain, |x, _| {
        if x < exact.x0 {
            exact.h_left
        } else {
            exact.h_right
        }
    });
    // A 1 m dam on a 1 m domain: films thinner than the default 1 mm matter at this
    // scale (the front's last cells), so the dry depth is scaled down with the problem.
    let physics = Physics {
        integrator,
        dry_depth: 1e-5,
        ..Physics::default()
    };
    let setup = Setup::new(terrain, water, Boundaries::all(Boundary::Wall), physics);
    let mut flow = ShallowWater::<T>::new(&Backend::Cpu, &setup).unwrap();
    flow.advance_to(t_end).unwrap();
    let h = flow.depth().unwrap();
    let error: f64 = h
        .iter()
        .enumerate()
        .map(|(i, h)| (h - exact.at(grid.centre(i, 0).0, t_end).h).abs() * grid.dx)
        .sum();
    let s = flow.survey().unwrap();
    let drift = (s.volume - flow.initial_volume()).abs() / flow.initial_volume();
    (error, s.min_depth, drift)
}

fn orders(name: &str, errors: &[(usize, f64)]) -> Vec<f64> {
    let orders: Vec<f64> = errors
        .windows(2)
        .map(|w| (w[0].1 / w[1].1).log2())
        .collect();
    println!("{name}: L1 errors {errors:?}, orders {orders:?}");
    orders
}

/// A dam at `x = 0.5` holding 1 m of water against `h_right` (m) downstream.
fn dam(h_right: f64) -> DamBreak {
    DamBreak {
        g: 9.81,
        x0: 0.5,
        h_left: 1.0,
        h_right,
    }
}

/// The orders of convergence of the dam break `exact` (RK2, f64) from 100 to 800 cells,
/// each run's smallest depth checked by `depth_ok` and its volume kept.
fn rk2_orders(name: &str, exact: DamBreak, depth_ok: impl Fn(f64) -> bool) -> Vec<f64> {
    let mut errors = vec![];
    for nx in [100, 200, 400, 800] {
        let (e, min_depth, drift) = dam_break::<f64>(exact, nx, 0.05, Integrator::Rk2);
        assert!(depth_ok(min_depth), "depth {min_depth} on {nx} cells");
        assert!(drift < 1e-13, "volume drifted by {drift:e} on {nx} cells");
        errors.push((nx, e));
    }
    orders(name, &errors)
}

#[test]
fn ritters_dry_bed_dam_break_converges() {
    let p = rk2_orders("Ritter", dam(0.0), |min_depth| min_depth >= 0.0);
    assert!(p.iter().all(|&p| p > 0.8), "{p:?}");
}

#[test]
fn stokers_wet_bed_dam_break_converges() {
    let p = rk2_orders("Stoker", dam(0.1), |min_depth| min_depth > 0.0);
    assert!(p.iter().all(|&p| p > 0.8), "{p:?}");
}

#[test]
fn euler_and_f32_converge_too() {
    let exact = dam(0.1);
    let mut euler = vec![];
    let mut single = vec![];
    for nx in [100, 200, 400, 800] {
        euler.push((nx, dam_break::<f64>(exact, nx, 0.05, Integrator::Euler).0));
        if nx < 800 {
            single.push((nx, dam_break::<f32>(exact, nx, 0.05, Integrator::Rk2).0));
        }
    }
    let pe = orders("Stoker, Euler", &euler);
    let ps = orders("Stoker, f32", &single);
    assert!(ps.iter().all(|&p| p > 0.8), "{ps:?}");
    // Forward Euler with the second-order reconstruction converges more slowly on the
    // shock (orders 1.02, 0.72, 0.65 measured): ask that every refinement lowers the
    // error and for the order over the whole range (0.80 measured).
    assert!(pe.iter().all(|&p| p > 0.5), "{pe:?}");
    let overall = (euler[0].1 / euler[3].1).log2() / 3.0;
    assert!(overall > 0.7, "{pe:?}: overall {overall}");
}
