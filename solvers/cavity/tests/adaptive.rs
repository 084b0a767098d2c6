//! The cavity on a wavelet-adaptive tree (`cavity::adaptive::AdaptiveCavity`), on the CPU:
//! at Re = 100 its steady state matches the uniform solver's of the same finest
//! resolution, on a fraction of the points; bad settings are typed errors.

use cavity::adaptive::{AdaptiveCavity, AdaptiveConfig};
use cavity::{Cavity, CavityError, Config, Outcome};
use stencil_runtime::{Backend, Field};

/// The smallest value of a uniform `n x n` field and the centre lines' `u(0.5, y)` and
/// `v(x, 0.5)` from central differences of `psi` (one-sided at the walls is not needed:
/// the walls' velocities are known).
fn summary(psi: &Field<f64>, n: usize) -> (f64, Vec<f64>, Vec<f64>) {
    let host = psi.to_host().unwrap();
    let at = |i: usize, j: usize| host.get([i as isize, j as isize, 0]).unwrap();
    let min = (0..n * n)
        .map(|k| at(k % n, k / n))
        .fold(f64::MAX, f64::min);
    let (mid, h) = (n / 2, 1.0 / (n - 1) as f64);
    let u = (1..n - 1)
        .map(|j| (at(mid, j + 1) - at(mid, j - 1)) / (2.0 * h))
        .collect();
    let v = (1..n - 1)
        .map(|i| -(at(i + 1, mid) - at(i - 1, mid)) / (2.0 * h))
        .collect();
    (min, u, v)
}

#[test]
fn steady_state_matches_the_uniform_solver_of_the_finest_resolution() {
    let cpu = Backend::Cpu;
    let n = 65;
    let mut uniform = Cavity::new(
        &cpu,
        &Config {
            re: 100.0,
            n,
            ..Config::default()
        },
    )
    .unwrap();
    assert_eq!(uniform.run(|_, _| true).unwrap(), Outcome::Steady);
    uniform.poisson_solve_exactly().unwrap();
    let (umin, uu, uv) = summary(&uniform.psi, n);

    // Levels of 5, 9, 17, 33 (all present) and 65 points (where the details say).
    let config = AdaptiveConfig {
        re: 100.0,
        n0: 5,
        levels: 5,
        full: 4,
        eps: 1e-3,
        ..AdaptiveConfig::default()
    };
    assert_eq!(config.finest_points(), n);
    let mut flow = AdaptiveCavity::new(&cpu, &config).unwrap();
    let outcome = flow.run_to_steady(1e-5, 50, 100_000, |_, _| true).unwrap();
    assert_eq!(outcome, Outcome::Steady);
    let residual = flow.poisson_solve_exactly().unwrap();
    assert!(residual < 1e-10, "{residual}");
    let fraction = flow.tree().present_fraction();
    let (psi, _) = flow.uniform(4).unwrap();
    let (amin, au, av) = summary(&psi, n);
    let profile_gap = uu
        .iter()
        .zip(&au)
        .chain(uv.iter().zip(&av))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!(
        "uniform psi_min {umin:.7}; adaptive {amin:.7} on {:.1}% of the points, steps {}; largest centre-line gap {profile_gap:.2e}",
        100.0 * fraction,
        flow.step
    );
    assert!(fraction < 0.95, "{fraction}");
    assert!(
        ((amin - umin) / umin).abs() < 1e-3,
        "psi_min {amin} against {umin}"
    );
    assert!(profile_gap < 5e-3, "{profile_gap}");
}

#[test]
fn bad_settings_are_typed_errors() {
    let cpu = Backend::Cpu;
    let cases = [
        AdaptiveConfig {
            n0: 6,
            ..AdaptiveConfig::default()
        },
        AdaptiveConfig {
            eps: 0.0,
            ..AdaptiveConfig::default()
        },
        AdaptiveConfig {
            full: 0,
            ..AdaptiveConfig::default()
        },
        AdaptiveConfig {
            levels: 3,
            full: 4,
            ..AdaptiveConfig::default()
        },
        AdaptiveConfig {
            block: 4,
            ..AdaptiveConfig::default()
        },
    ];
    for config in cases {
        match AdaptiveCavity::new(&cpu, &config) {
            Err(CavityError::Config { .. }) => {}
            Err(e) => panic!("{config:?}: {e}"),
            Ok(_) => panic!("{config:?} was accepted"),
        }
    }
}

#[test]
fn a_resumed_run_continues_bit_for_bit() {
    use cavity::adaptive::AdaptiveCheckpoint;
    let cpu = Backend::Cpu;
    let config = AdaptiveConfig {
        re: 400.0,
        n0: 5,
        levels: 5,
        full: 3,
        eps: 1e-3,
        adapt_every: 10,
        ..AdaptiveConfig::default()
    };
    let mut flow = AdaptiveCavity::new(&cpu, &config).unwrap();
    for _ in 0..25 {
        flow.step().unwrap();
    }
    flow.check().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("checkpoint.bin");
    AdaptiveCheckpoint::of(&flow).unwrap().write(&path).unwrap();
    for _ in 0..25 {
        flow.step().unwrap();
    }
    let saved = AdaptiveCheckpoint::read(&path).unwrap();
    let mut resumed = AdaptiveCavity::new(&cpu, &saved.config()).unwrap();
    saved.restore(&mut resumed).unwrap();
    for _ in 0..25 {
        resumed.step().unwrap();
    }
    assert_eq!(flow.step, resumed.step);
    assert_eq!(flow.time.to_bits(), resumed.time.to_bits());
    let a = AdaptiveCheckpoint::of(&flow).unwrap();
    let b = AdaptiveCheckpoint::of(&resumed).unwrap();
    assert!(
        a.blocks.iter().any(|b| b.0 == 4),
        "the finest level is in use"
    );
    assert_eq!(a.blocks, b.blocks);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert!(
        bits(&a.w) == bits(&b.w) && bits(&a.psi) == bits(&b.psi),
        "the fields differ"
    );
    // A checkpoint of other settings is refused.
    let other = AdaptiveConfig {
        eps: 1e-2,
        ..config
    };
    assert!(matches!(
        saved.matches(&other),
        Err(CavityError::Checkpoint(_))
    ));
}
