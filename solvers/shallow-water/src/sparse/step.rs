//! A sparse run's time steps: decided on the host ([`SparseShallowWater::step`]) or on
//! the backend by its clock ([`SparseShallowWater::advance`], see [`crate::clock`]), with
//! the layout's work at each step's start and end.

use super::SparseShallowWater;
use crate::clock::{Clock, Clocked};
use crate::model::{Integrator, Kp07Steps, Which, CHECK_EVERY};
use crate::FloodError;
use stencil_runtime::{Backend, Real};

impl<T: Real> SparseShallowWater<T> {
    /// The layout's work at a step's start: the change chosen at the last step's end, and
    /// every so many steps ([`SparseShallowWater::block_updates`]) the measure the next
    /// choice reads.
    fn start_step(&mut self) -> Result<(), FloodError> {
        if self.distribution.as_ref().is_some_and(|d| !d.follows) {
            // Over ranks with every block present, every block stays.
            return Ok(());
        }
        self.choose()?;
        self.regrid()?;
        if self.queued.is_multiple_of(self.regrid_every) {
            self.measure()?;
        }
        Ok(())
    }

    /// Runs `work`; if it fails over ranks on devices, ends the ghost fills it left started
    /// first, so that the grid's stream waits for the ghosts' stream again (the fields and
    /// buffers the messages and the unpack use are then safe to free or reuse).
    fn guarded<R>(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<R, FloodError>,
    ) -> Result<R, FloodError> {
        let done = work(self);
        if done.is_err() {
            if let Some(d) = &mut self.distribution {
                d.finish_started(&self.blocks);
            }
        }
        done
    }

    /// Takes one time step of at most `limit` seconds, decided on the host; returns the
    /// step taken.
    pub fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        self.guarded(|flow| flow.host_step(limit))
    }

    /// [`SparseShallowWater::step`], unguarded.
    fn host_step(&mut self, limit: f64) -> Result<f64, FloodError> {
        self.start_step()?;
        let mut speed = self
            .evaluate_fluxes(Which::Now, self.progress.time, true)?
            .as_f64();
        if let Some(d) = &self.distribution {
            // MPI's maximum does not define what a NaN gives: an instability is carried
            // as infinity, which every rank then rejects at the same step (as the
            // devices' `larger` does).
            if speed.is_nan() {
                speed = f64::INFINITY;
            }
            speed = d.all(speed, stencil_ranks::Op::Max);
        }
        let unstable = SparseShallowWater::instability;
        let track = |flow: &mut Self, clock: &Clock<T>| flow.track_at(&clock.after);
        let dt = self.host_decided_stages(speed, limit, unstable, track)?;
        self.choose()?;
        self.progress.count_step(dt);
        self.queued += 1;
        Ok(dt)
    }

    /// Steps until simulated time `t_end` (the last step shortened to land on it),
    /// checking for instability every hundred steps and at the end.
    pub fn advance_to(&mut self, t_end: f64) -> Result<(), FloodError> {
        while self.progress.time < t_end {
            self.advance(t_end, 0.0, u64::MAX)?;
        }
        self.check()?;
        Ok(())
    }

    /// Takes `steps` steps as [`SparseShallowWater::advance`] does, towards a time they
    /// do not reach (for timing and comparing runs step by step).
    pub fn advance_steps(&mut self, steps: u64) -> Result<(), FloodError> {
        self.advance(crate::model::FAR_TARGET, 0.0, steps)
    }

    /// Steps towards `target` until the time is within `slack` of it or `budget` steps are
    /// taken, recording each in the flood's extent and checking for instability every
    /// hundred steps. With sides whose values do not change, the step is decided on the
    /// backend ([`crate::clock`]): the same steps as [`SparseShallowWater::step`] takes,
    /// without a read-back per step.
    pub fn advance(&mut self, target: f64, slack: f64, budget: u64) -> Result<(), FloodError> {
        self.guarded(|flow| flow.advance_unguarded(target, slack, budget))
    }

    /// [`SparseShallowWater::advance`], unguarded.
    fn advance_unguarded(
        &mut self,
        target: f64,
        slack: f64,
        budget: u64,
    ) -> Result<(), FloodError> {
        // Over ranks on the CPU, or following the water, the CFL maximum is all-reduced
        // on the host.
        let host_decides = self.distribution.is_some() && !self.decides_over_ranks_on_devices();
        if !self.boundaries.steady() || host_decides {
            for _ in 0..budget {
                if self.progress.time >= target - slack {
                    break;
                }
                self.host_step(target - self.progress.time)?;
                if self.progress.steps.is_multiple_of(CHECK_EVERY) {
                    self.check()?;
                }
            }
            return Ok(());
        }
        self.run_on_clock(|flow, clock| crate::clock::run(flow, clock, target, slack, budget))
    }
}

impl<T: Real> Clocked<T> for SparseShallowWater<T> {
    fn backend(&self) -> &Backend {
        &self.backend
    }

    fn before_step(&mut self) -> Result<Option<u64>, FloodError> {
        self.start_step()?;
        // The layout, and the extent's fields (made anew by `track_flood`). A step over
        // ranks is not recorded: its messages travel on a stream of their own.
        let layout = self.blocks.generation() ^ (self.extents_made << 48);
        let records = self.physics.integrator == Integrator::Rk2 && self.distribution.is_none();
        Ok(records.then_some(layout))
    }

    fn recordings_outlive_calls(&self) -> bool {
        true
    }

    fn queue_step(&mut self, clock: &mut Clock<T>) -> Result<(), FloodError> {
        if self.distribution.is_some() {
            self.queue_ranked_clocked_stages(clock)?;
        } else {
            self.queue_clocked_stages(clock)?;
        }
        self.track_at(&clock.after)
    }

    fn after_step(&mut self) -> Result<(), FloodError> {
        self.choose()?;
        self.queued += 1;
        Ok(())
    }

    fn known(&self) -> (f64, u64) {
        (self.progress.time, self.progress.steps)
    }

    fn set_known(&mut self, time: f64, steps: u64) {
        (self.progress.time, self.progress.steps) = (time, steps);
    }

    fn check_state(&mut self) -> Result<(), FloodError> {
        self.check().map(|_| ())
    }

    fn unstable(&self) -> FloodError {
        self.instability()
    }
}
