//! What a run's stepping keeps, dense or over blocks ([`Progress`]): the present state and
//! the RK stage, the clock, the time, the steps and the initial volume, with the getters
//! both models make public written once ([`progress_getters`]).

use super::Which;
use crate::clock::Clock;
use crate::{FloodError, SavedState};
use stencil_runtime::{Backend, Real};

/// What a simulation's stepping keeps, over the state type `S` (the dense fields or the
/// block fields) in precision `T`.
pub(crate) struct Progress<S, T: Real> {
    /// The present state.
    pub now: S,
    /// The RK stage.
    pub stage: S,
    /// The time step and the time on the backend (taken out while a clocked loop runs).
    pub clock: Option<Clock<T>>,
    /// Simulated time (s), as the host knows it.
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    /// The water volume at the start (m^3).
    pub initial_volume: f64,
}

impl<S, T: Real> Progress<S, T> {
    /// The state `now` and the stage `stage` at time 0, no step taken, with a clock on
    /// `backend` (the initial volume 0 until surveyed).
    pub fn new(backend: &Backend, now: S, stage: S) -> Result<Progress<S, T>, FloodError> {
        Ok(Progress {
            now,
            stage,
            clock: Some(Clock::new(backend, 0.0)?),
            time: 0.0,
            steps: 0,
            initial_volume: 0.0,
        })
    }

    /// The present state or the stage, as `which` names it.
    pub fn pick(&mut self, which: Which) -> &mut S {
        match which {
            Which::Now => &mut self.now,
            Which::Stage => &mut self.stage,
        }
    }

    /// The state a stage reads and the one it writes: the present state into the stage
    /// when `forward`, else the stage back into the present state.
    pub fn stage_pair(&mut self, forward: bool) -> (&S, &mut S) {
        if forward {
            (&self.now, &mut self.stage)
        } else {
            (&self.stage, &mut self.now)
        }
    }

    /// Swaps the present state and the stage (after an Euler stage).
    pub fn swap_stage(&mut self) {
        std::mem::swap(&mut self.now, &mut self.stage);
    }

    /// Counts a step of `dt` seconds taken.
    pub fn count_step(&mut self, dt: f64) {
        self.time += dt;
        self.steps += 1;
    }

    /// The time, the step count and the initial volume of `saved` (its fields are the
    /// model's to put back).
    pub fn resume_from(&mut self, saved: &SavedState) {
        self.time = saved.time;
        self.steps = saved.steps;
        self.initial_volume = saved.initial_volume;
    }
}

/// The public getters of a model's [`Progress`] (its time, steps and initial volume),
/// expanded inside the `impl` of a model that keeps it in a field `progress`: the dense
/// and the sparse model answer the same.
macro_rules! progress_getters {
    () => {
        /// Simulated time (s).
        pub fn time(&self) -> f64 {
            self.progress.time
        }

        /// Steps taken.
        pub fn steps(&self) -> u64 {
            self.progress.steps
        }

        /// The water volume at the start (m^3).
        pub fn initial_volume(&self) -> f64 {
            self.progress.initial_volume
        }
    };
}
pub(crate) use progress_getters;
