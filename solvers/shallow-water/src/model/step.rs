//! A dense simulation's time steps: decided on the host ([`ShallowWater::step`]) or on
//! the backend by its clock ([`ShallowWater::advance`], see [`crate::clock`]).

use super::{Integrator, ShallowWater, Which, CHECK_EVERY};
use crate::clock::{Clock, Clocked};
use crate::FloodError;
use stencil_runtime::{Backend, Real, Value};

/// What runs after each step of [`ShallowWater::advance`]: it gets the simulation and the
/// time after the step, held on the backend. It may only queue launches (e.g. recording
/// the flood's extent), never read anything back: on a device the step, this included, is
/// recorded once per call of `advance` and replayed for the later steps of the call.
pub type AfterStep<'a, T> = dyn FnMut(&ShallowWater<T>, &Value<T>) -> Result<(), FloodError> + 'a;

/// A dense simulation stepped by its clock, with what runs after each step.
pub(crate) struct DenseStepping<'a, T: Real> {
    pub flow: &'a mut ShallowWater<T>,
    pub after_step: &'a mut AfterStep<'a, T>,
}

impl<T: Real> Clocked<T> for DenseStepping<'_, T> {
    fn backend(&self) -> &Backend {
        &self.flow.backend
    }

    fn before_step(&mut self) -> Result<Option<u64>, FloodError> {
        Ok((self.flow.physics.integrator == Integrator::Rk2).then_some(0))
    }

    fn recordings_outlive_calls(&self) -> bool {
        // `after_step` is the caller's, call by call.
        false
    }

    fn queue_step(&mut self, clock: &mut Clock<T>) -> Result<(), FloodError> {
        let flow = &mut *self.flow;
        let keeping = clock.keeping(&flow.backend);
        // The sides' values do not change: any time serves them.
        let t = flow.time;
        let speed = flow.evaluate_fluxes_on(&keeping, Which::Now, t)?;
        clock.tick(&flow.backend, speed, flow.physics.courant)?;
        flow.stages(&clock.dt, t, t)?;
        (self.after_step)(flow, &clock.after)
    }

    fn known(&self) -> (f64, u64) {
        (self.flow.time, self.flow.steps)
    }

    fn set_known(&mut self, time: f64, steps: u64) {
        (self.flow.time, self.flow.steps) = (time, steps);
    }

    fn check_state(&mut self) -> Result<(), FloodError> {
        self.flow.check().map(|_| ())
    }

    fn unstable(&self) -> FloodError {
        self.flow.locate_instability()
    }
}

impl<T: Real> ShallowWater<T> {
    /// The stages of a step after the first flux evaluation, with the step `dt` held on
    /// the backend; `t` and `t_next` are the times at the step's start and end (only the
    /// sides' values read them).
    fn stages(&mut self, dt: &Value<T>, t: f64, t_next: f64) -> Result<(), FloodError> {
        match self.physics.integrator {
            Integrator::Euler => {
                self.advance_stage(true, t, dt, 0.0)?;
                std::mem::swap(&mut self.now, &mut self.stage);
            }
            Integrator::Rk2 => {
                self.advance_stage(true, t, dt, 0.0)?;
                self.evaluate_fluxes(Which::Stage, t_next, false)?;
                self.advance_stage(false, t_next, dt, 0.5)?;
            }
        }
        Ok(())
    }

    /// The clock, taken out for a loop that also borrows the model.
    fn take_clock(&mut self) -> Result<Clock<T>, FloodError> {
        match self.clock.take() {
            Some(c) => Ok(c),
            None => Clock::new(&self.backend, self.time),
        }
    }

    /// Takes one time step of at most `limit` seconds (the CFL step, shortened to
    /// `limit`), decided on the host; returns the step taken.
    pub fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        let speed = self.evaluate_fluxes(Which::Now, self.time, true)?.as_f64();
        if !(speed >= 0.0 && speed.is_finite()) {
            return Err(self.locate_instability());
        }
        let dt = crate::clock::host_step(self.physics.courant, speed, limit)?;
        let mut clock = self.take_clock()?;
        let stepped = clock
            .set_host_step(dt, self.time + dt)
            .and_then(|()| self.stages(&clock.dt, self.time, self.time + dt));
        self.clock = Some(clock);
        stepped?;
        self.time += dt;
        self.steps += 1;
        Ok(dt)
    }

    /// Steps until simulated time `t_end` (the last step shortened to land on it),
    /// checking for instability every hundred steps and at the end.
    pub fn advance_to(&mut self, t_end: f64) -> Result<(), FloodError> {
        while self.time < t_end {
            self.advance(t_end, 0.0, u64::MAX, &mut |_, _| Ok(()))?;
        }
        self.check()?;
        Ok(())
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
        let mut clock = self.take_clock()?;
        let run = if self.boundaries.steady() {
            let mut stepping = DenseStepping {
                flow: self,
                after_step,
            };
            crate::clock::run(&mut stepping, &mut clock, target, slack, budget)
        } else {
            self.clock = Some(clock);
            return self.host_steps(target, slack, budget, after_step);
        };
        // After an error the clock's reads are dropped (waiting for their copies), and a
        // fresh clock is made when one is next needed. Steps queued after the last read
        // may have run: a run that failed is not continued.
        if run.is_ok() {
            self.clock = Some(clock);
        }
        run
    }

    /// [`ShallowWater::advance`] with each step decided on the host (sides whose values
    /// change with time).
    fn host_steps(
        &mut self,
        target: f64,
        slack: f64,
        budget: u64,
        after_step: &mut AfterStep<'_, T>,
    ) -> Result<(), FloodError> {
        for _ in 0..budget {
            if self.time >= target - slack {
                break;
            }
            self.step(target - self.time)?;
            let clock = self.take_clock()?;
            let after = after_step(self, &clock.after);
            self.clock = Some(clock);
            after?;
            if self.steps.is_multiple_of(CHECK_EVERY) {
                self.check()?;
            }
        }
        Ok(())
    }
}
