//! A dense simulation's time steps: decided on the host ([`ShallowWater::step`]) or on
//! the backend by its clock ([`ShallowWater::advance`], see [`crate::clock`]).

use super::{Integrator, Kp07Steps, ShallowWater, Which, CHECK_EVERY};
use crate::clock::{Clock, Clocked};
use crate::FloodError;
use std::num::NonZeroU64;
use stencil_runtime::{Backend, Real, Value};

/// What runs after each step of [`ShallowWater::advance`]: it gets the simulation and the
/// time after the step, held on the backend. It may only queue launches (e.g. recording
/// the flood's extent), never read anything back: on a device the step, this included, is
/// recorded once per call of `advance` and replayed for the later steps of the call (and
/// of later calls, with [`ShallowWater::advance_replaying`]).
pub type AfterStep<'a, T> = dyn FnMut(&ShallowWater<T>, &Value<T>) -> Result<(), FloodError> + 'a;

/// A dense simulation stepped by its clock, with what runs after each step.
pub(crate) struct DenseStepping<'a, T: Real> {
    pub flow: &'a mut ShallowWater<T>,
    pub after_step: &'a mut AfterStep<'a, T>,
    /// Set where `after_step` queues the same launches on the same memory in every call
    /// given this key: a step recorded in one call is replayed in the next.
    pub same_after: Option<NonZeroU64>,
}

impl<T: Real> Clocked<T> for DenseStepping<'_, T> {
    fn backend(&self) -> &Backend {
        &self.flow.backend
    }

    fn before_step(&mut self) -> Result<Option<u64>, FloodError> {
        // Recordings are for one call (0), or for every call with the same key.
        let layout = self.same_after.map_or(0, NonZeroU64::get);
        Ok((self.flow.physics.integrator == Integrator::Rk2).then_some(layout))
    }

    fn recordings_outlive_calls(&self) -> bool {
        // Without a key, `after_step` is the caller's, call by call.
        self.same_after.is_some()
    }

    fn queue_step(&mut self, clock: &mut Clock<T>) -> Result<(), FloodError> {
        self.flow.queue_clocked_stages(clock)?;
        (self.after_step)(self.flow, &clock.after)
    }

    fn known(&self) -> (f64, u64) {
        (self.flow.progress.time, self.flow.progress.steps)
    }

    fn set_known(&mut self, time: f64, steps: u64) {
        (self.flow.progress.time, self.flow.progress.steps) = (time, steps);
    }

    fn check_state(&mut self) -> Result<(), FloodError> {
        self.flow.check().map(|_| ())
    }

    fn unstable(&self) -> FloodError {
        self.flow.locate_instability()
    }
}

/// The target of [`ShallowWater::advance_steps`] and its sparse twin: a finite time (a
/// target must be one) of some 30 years, which step counts end long before.
pub(crate) const FAR_TARGET: f64 = 1e9;

impl<T: Real> ShallowWater<T> {
    /// Takes one time step of at most `limit` seconds (the CFL step, shortened to
    /// `limit`), decided on the host; returns the step taken.
    pub fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        let speed = self
            .evaluate_fluxes(Which::Now, self.progress.time, true)?
            .as_f64();
        let unstable = ShallowWater::locate_instability;
        let dt = self.host_decided_stages(speed, limit, unstable, |_, _| Ok(()))?;
        self.progress.count_step(dt);
        Ok(dt)
    }

    /// Steps until simulated time `t_end` (the last step shortened to land on it),
    /// checking for instability every hundred steps and at the end.
    pub fn advance_to(&mut self, t_end: f64) -> Result<(), FloodError> {
        while self.progress.time < t_end {
            self.advance(t_end, 0.0, u64::MAX, &mut |_, _| Ok(()))?;
        }
        self.check()?;
        Ok(())
    }

    /// Takes `steps` steps as [`ShallowWater::advance`] does, towards a time they do not
    /// reach ([`FAR_TARGET`]; for timing and comparing runs step by step).
    pub fn advance_steps(&mut self, steps: u64) -> Result<(), FloodError> {
        self.advance(FAR_TARGET, 0.0, steps, &mut |_, _| Ok(()))
    }

    /// Steps towards `target` until the time is within `slack` of it or `budget` steps are
    /// taken, checking for instability every hundred steps; `after_step` runs after each
    /// step with the time after it held on the backend. With sides whose values do not
    /// change, the step is decided on the backend ([`crate::clock`]): the same steps as
    /// [`ShallowWater::step`] takes, without a read-back per step.
    pub fn advance(
        &mut self,
        target: f64,
        slack: f64,
        budget: u64,
        after_step: &mut AfterStep<'_, T>,
    ) -> Result<(), FloodError> {
        self.advance_after(target, slack, budget, after_step, None)
    }

    /// [`ShallowWater::advance`] where `after_step` queues the same launches on the same
    /// memory in every call given `key` (the flood's extent, say): on a device a step
    /// recorded in one call is replayed in the next calls with that key instead of
    /// recorded again, which calls of a few steps each (a program sampling gauges) would
    /// otherwise pay for at every call.
    pub fn advance_replaying(
        &mut self,
        target: f64,
        slack: f64,
        budget: u64,
        after_step: &mut AfterStep<'_, T>,
        key: NonZeroU64,
    ) -> Result<(), FloodError> {
        self.advance_after(target, slack, budget, after_step, Some(key))
    }

    fn advance_after(
        &mut self,
        target: f64,
        slack: f64,
        budget: u64,
        after_step: &mut AfterStep<'_, T>,
        same_after: Option<NonZeroU64>,
    ) -> Result<(), FloodError> {
        if self.boundaries.steady() {
            return self.run_on_clock(|flow, clock| {
                let mut stepping = DenseStepping {
                    flow,
                    after_step,
                    same_after,
                };
                crate::clock::run(&mut stepping, clock, target, slack, budget)
            });
        }
        // Sides whose values change with time: each step decided on the host.
        for _ in 0..budget {
            if self.progress.time >= target - slack {
                break;
            }
            self.step(target - self.progress.time)?;
            let clock = self.take_clock()?;
            let after = after_step(self, &clock.after);
            self.progress.clock = Some(clock);
            after?;
            if self.progress.steps.is_multiple_of(CHECK_EVERY) {
                self.check()?;
            }
        }
        Ok(())
    }
}
