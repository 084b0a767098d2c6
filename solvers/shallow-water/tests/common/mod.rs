//! Runs to a series of targets, each step decided on the host (`step`) or on the backend
//! (`advance`), dense or sparse, for the clock's tests on the CPU (`clock.rs`) and on a
//! device (`gpu.rs`).
#![allow(dead_code)]

use shallow_water::{FloodError, Setup, ShallowWater, SparseShallowWater};
use stencil_runtime::Backend;

/// What a run ends with: time, steps and the state's bits.
pub type End = (u64, u64, Vec<Vec<u64>>);

/// A simulation in f64, dense or sparse.
pub trait Simulation: Sized {
    fn start(b: &Backend, setup: &Setup) -> Result<Self, FloodError>;
    fn step(&mut self, limit: f64) -> Result<f64, FloodError>;
    fn advance(&mut self, target: f64, slack: f64, budget: u64) -> Result<(), FloodError>;
    fn time(&self) -> f64;
    fn steps(&self) -> u64;
    fn state(&self) -> Result<[Vec<f64>; 3], FloodError>;
}

impl Simulation for ShallowWater<f64> {
    fn start(b: &Backend, setup: &Setup) -> Result<Self, FloodError> {
        ShallowWater::new(b, setup)
    }
    fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        ShallowWater::step(self, limit)
    }
    fn advance(&mut self, target: f64, slack: f64, budget: u64) -> Result<(), FloodError> {
        ShallowWater::advance(self, target, slack, budget, &mut |_, _| Ok(()))
    }
    fn time(&self) -> f64 {
        ShallowWater::time(self)
    }
    fn steps(&self) -> u64 {
        ShallowWater::steps(self)
    }
    fn state(&self) -> Result<[Vec<f64>; 3], FloodError> {
        ShallowWater::state(self)
    }
}

impl Simulation for SparseShallowWater<f64> {
    fn start(b: &Backend, setup: &Setup) -> Result<Self, FloodError> {
        SparseShallowWater::new(b, setup)
    }
    fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        SparseShallowWater::step(self, limit)
    }
    fn advance(&mut self, target: f64, slack: f64, budget: u64) -> Result<(), FloodError> {
        SparseShallowWater::advance(self, target, slack, budget)
    }
    fn time(&self) -> f64 {
        SparseShallowWater::time(self)
    }
    fn steps(&self) -> u64 {
        SparseShallowWater::steps(self)
    }
    fn state(&self) -> Result<[Vec<f64>; 3], FloodError> {
        SparseShallowWater::state(self)
    }
}

/// The targets every `every` seconds up to `end`, and the slack a run allows them.
fn targets(every: f64, end: f64) -> (Vec<f64>, f64) {
    let n = (end / every).round() as usize;
    ((1..=n).map(|k| k as f64 * every).collect(), end * 1e-12)
}

fn end_of(s: &impl Simulation) -> End {
    let bits = s
        .state()
        .unwrap()
        .iter()
        .map(|f| f.iter().map(|x| x.to_bits()).collect())
        .collect();
    (s.time().to_bits(), s.steps(), bits)
}

/// Runs `S` with every step decided on the host.
pub fn host<S: Simulation>(b: &Backend, setup: &Setup, every: f64, end: f64) -> End {
    let mut s = S::start(b, setup).unwrap();
    let (targets, slack) = targets(every, end);
    for t in targets {
        while s.time() < t - slack {
            s.step(t - s.time()).unwrap();
        }
    }
    end_of(&s)
}

/// Runs `S` with the steps decided on the backend, in calls of at most `budget` steps.
pub fn clocked<S: Simulation>(
    b: &Backend,
    setup: &Setup,
    every: f64,
    end: f64,
    budget: u64,
) -> End {
    let mut s = S::start(b, setup).unwrap();
    let (targets, slack) = targets(every, end);
    for t in targets {
        while s.time() < t - slack {
            s.advance(t, slack, budget).unwrap();
        }
    }
    end_of(&s)
}
