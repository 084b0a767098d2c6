//! Steps decided on the backend (`advance`, the clock kernel) equal steps decided on the
//! host (`step`), bit for bit, dense and sparse, with the targets a run lands on.

mod common;

use common::{clocked, host, OnePass};
use shallow_water::{cases, Physics, Setup, ShallowWater, SparseShallowWater};
use stencil_runtime::Backend;

fn all_agree(setup: &Setup, every: f64, end: f64, label: &str) {
    let b = &Backend::Cpu;
    let want = host::<ShallowWater<f64>>(b, setup, every, end);
    assert!(want.1 > 10, "{label}: {} steps", want.1);
    for budget in [3, 64] {
        assert!(
            clocked::<ShallowWater<f64>>(b, setup, every, end, budget) == want,
            "{label}: dense, clocked in calls of {budget} steps"
        );
    }
    assert!(
        host::<OnePass>(b, setup, every, end) == want,
        "{label}: dense, one pass per stage"
    );
    assert!(
        clocked::<OnePass>(b, setup, every, end, 7) == want,
        "{label}: dense, one pass per stage, clocked"
    );
    assert!(
        host::<SparseShallowWater<f64>>(b, setup, every, end) == want,
        "{label}: sparse"
    );
    assert!(
        clocked::<SparseShallowWater<f64>>(b, setup, every, end, 5) == want,
        "{label}: sparse, clocked"
    );
}

#[test]
fn a_clocked_radial_dam_break_equals_host_steps() {
    let case = cases::radial(48).unwrap();
    all_agree(&case.setup, 0.5, 3.0, "radial dam break");
}

#[test]
fn a_clocked_euler_dam_break_equals_host_steps() {
    let mut case = cases::radial(48).unwrap();
    case.setup.physics.integrator = shallow_water::Integrator::Euler;
    all_agree(&case.setup, 0.5, 2.0, "radial dam break, Euler");
}

#[test]
fn a_clocked_pond_with_friction_equals_host_steps() {
    let case = cases::pond(40).unwrap();
    let physics = Physics {
        manning: 0.03,
        ..case.setup.physics
    };
    let setup = Setup {
        physics,
        ..case.setup
    };
    all_agree(&setup, 0.5, 2.0, "pond with friction");
}

#[test]
fn a_clocked_malpasset_equals_host_steps() {
    let Some(case) = common::malpasset() else {
        return;
    };
    all_agree(&case.setup, 2.0, 6.0, "malpasset");
}

#[test]
fn an_endless_target_is_a_typed_error() {
    let case = cases::pond(16).unwrap();
    let mut flow = ShallowWater::<f64>::new(&Backend::Cpu, &case.setup).unwrap();
    let e = flow
        .advance(f64::INFINITY, 0.0, 10, &mut |_, _| Ok(()))
        .unwrap_err();
    assert!(e.to_string().contains("target time"), "{e}");
    let mut sparse = SparseShallowWater::<f64>::new(&Backend::Cpu, &case.setup).unwrap();
    assert!(sparse.advance(f64::NAN, 0.0, 10).is_err());
}
