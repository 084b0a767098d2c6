//! Runs to a series of targets, each step decided on the host (`step`) or on the backend
//! (`advance`), for the clock's tests on the CPU (`clock.rs`) and on a device (`gpu.rs`).
#![allow(dead_code)]

use shallow_water::{Setup, ShallowWater, SparseShallowWater};
use stencil_runtime::Backend;

/// What a run ends with: time, steps and the state's bits.
pub type End = (u64, u64, Vec<Vec<u64>>);

fn bits(state: [Vec<f64>; 3]) -> Vec<Vec<u64>> {
    state
        .iter()
        .map(|f| f.iter().map(|x| x.to_bits()).collect())
        .collect()
}

/// The targets every `every` seconds up to `end`, and the slack a run allows them.
fn targets(every: f64, end: f64) -> (Vec<f64>, f64) {
    let n = (end / every).round() as usize;
    ((1..=n).map(|k| k as f64 * every).collect(), end * 1e-12)
}

pub fn host_dense(b: &Backend, setup: &Setup, every: f64, end: f64) -> End {
    let mut flow = ShallowWater::<f64>::new(b, setup).unwrap();
    let (targets, slack) = targets(every, end);
    for t in targets {
        while flow.time() < t - slack {
            flow.step(t - flow.time()).unwrap();
        }
    }
    (
        flow.time().to_bits(),
        flow.steps(),
        bits(flow.state().unwrap()),
    )
}

pub fn clocked_dense(b: &Backend, setup: &Setup, every: f64, end: f64, budget: u64) -> End {
    let mut flow = ShallowWater::<f64>::new(b, setup).unwrap();
    let (targets, slack) = targets(every, end);
    for t in targets {
        while flow.time() < t - slack {
            flow.advance(t, slack, budget, &mut |_, _| Ok(())).unwrap();
        }
    }
    (
        flow.time().to_bits(),
        flow.steps(),
        bits(flow.state().unwrap()),
    )
}

pub fn host_sparse(b: &Backend, setup: &Setup, every: f64, end: f64) -> End {
    let mut flow = SparseShallowWater::<f64>::new(b, setup).unwrap();
    let (targets, slack) = targets(every, end);
    for t in targets {
        while flow.time() < t - slack {
            flow.step(t - flow.time()).unwrap();
        }
    }
    (
        flow.time().to_bits(),
        flow.steps(),
        bits(flow.state().unwrap()),
    )
}

pub fn clocked_sparse(b: &Backend, setup: &Setup, every: f64, end: f64, budget: u64) -> End {
    let mut flow = SparseShallowWater::<f64>::new(b, setup).unwrap();
    let (targets, slack) = targets(every, end);
    for t in targets {
        while flow.time() < t - slack {
            flow.advance(t, slack, budget).unwrap();
        }
    }
    (
        flow.time().to_bits(),
        flow.steps(),
        bits(flow.state().unwrap()),
    )
}
