//! Runs to a series of targets, each step decided on the host (`step`) or on the backend
//! (`advance`), dense or sparse, for the clock's tests on the CPU (`clock.rs`) and on a
//! device (`gpu.rs`); and the Malpasset case where its data is present.
#![allow(dead_code)]

use shallow_water::cases::{self, Case};
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

/// Implements [`Simulation`] for `$model<f64>` by its own methods of the same names,
/// `advance` by `$advance` with the simulation as `$s` (the dense model's `advance` also
/// takes what runs after each step).
macro_rules! simulation_by_methods {
    ($model:ident, |$s:ident, $target:ident, $slack:ident, $budget:ident| $advance:expr) => {
        impl Simulation for $model<f64> {
            fn start(b: &Backend, setup: &Setup) -> Result<Self, FloodError> {
                $model::new(b, setup)
            }
            fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
                $model::step(self, limit)
            }
            fn advance(
                &mut self,
                $target: f64,
                $slack: f64,
                $budget: u64,
            ) -> Result<(), FloodError> {
                let $s = self;
                $advance
            }
            fn time(&self) -> f64 {
                $model::time(self)
            }
            fn steps(&self) -> u64 {
                $model::steps(self)
            }
            fn state(&self) -> Result<[Vec<f64>; 3], FloodError> {
                $model::state(self)
            }
        }
    };
}

simulation_by_methods!(ShallowWater, |s, target, slack, budget| {
    s.advance(target, slack, budget, &mut |_, _| Ok(()))
});
simulation_by_methods!(SparseShallowWater, |s, target, slack, budget| {
    s.advance(target, slack, budget)
});

/// The dense model with each stage in one pass (`ShallowWater::set_one_pass`), as it
/// runs on a device by default.
pub struct OnePass(pub ShallowWater<f64>);

impl Simulation for OnePass {
    fn start(b: &Backend, setup: &Setup) -> Result<Self, FloodError> {
        let mut flow = ShallowWater::new(b, setup)?;
        flow.set_one_pass(true)?;
        Ok(OnePass(flow))
    }
    fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        self.0.step(limit)
    }
    fn advance(&mut self, target: f64, slack: f64, budget: u64) -> Result<(), FloodError> {
        self.0.advance(target, slack, budget, &mut |_, _| Ok(()))
    }
    fn time(&self) -> f64 {
        self.0.time()
    }
    fn steps(&self) -> u64 {
        self.0.steps()
    }
    fn state(&self) -> Result<[Vec<f64>; 3], FloodError> {
        self.0.state()
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

/// The Malpasset case from `shared/data/malpasset`, or `None` (the test skipped, as it
/// prints) where the data is absent.
pub fn malpasset() -> Option<Case> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset");
    if !dir.exists() {
        println!("SKIPPED: no Malpasset data at {}", dir.display());
        return None;
    }
    Some(cases::malpasset(&dir).unwrap())
}
