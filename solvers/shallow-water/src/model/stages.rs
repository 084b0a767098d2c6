//! What the dense and the sparse simulation share in a time step: the scalar arguments of
//! the KP07 kernels, the launches of `kp07::faces` and `kp07::advance` (one argument list
//! for the dense and the block launchers), the integrators' stages and the host's part of
//! a step ([`Kp07Steps`]).

use crate::clock::Clock;
use crate::kernels::kp07::Kp07;
use crate::model::{Integrator, Progress};
use crate::{Boundaries, Boundary, FloodError, Grid, Physics};
use stencil_runtime::{Backend, Real, Value};

/// Which state a rate evaluation reads.
#[derive(Clone, Copy)]
pub(crate) enum Which {
    /// The state at the step's start.
    Now,
    /// The RK stage.
    Stage,
}

impl<T: Real> Kp07<T> {
    /// The scalars for `physics` on `grid` with sides `boundaries` at time `t`.
    pub(crate) fn new(physics: &Physics, grid: &Grid, boundaries: &Boundaries, t: f64) -> Kp07<T> {
        let f = T::from_f64;
        let b = boundaries;
        let value = |side: &Boundary| f(side.value_at(t));
        Kp07 {
            g: f(physics.gravity),
            g_n2: f(physics.gravity * physics.manning * physics.manning),
            theta: f(physics.theta),
            eps: physics.eps(),
            dx_inv: f(1.0 / grid.dx),
            dy_inv: f(1.0 / grid.dy),
            west: b.west.kind(),
            east: b.east.kind(),
            south: b.south.kind(),
            north: b.north.kind(),
            west_value: value(&b.west),
            east_value: value(&b.east),
            south_value: value(&b.south),
            north_value: value(&b.north),
        }
    }
}

/// One launch of `kp07::advance`: `to = keep to + (1 - keep) (from + dt R)`.
pub(crate) struct Stage<'a, T: Real> {
    /// From the present state into the stage, else from the stage back.
    pub forward: bool,
    /// The step, held on the backend.
    pub dt: &'a Value<T>,
    /// The weight kept of the state overwritten.
    pub keep: T,
    /// The kernels' scalars at the stage's time.
    pub scalars: Kp07<T>,
}

/// A simulation stepped by the KP07 scheme, dense or over blocks: the launches it makes
/// on its own storage, and the steps built from them.
pub(crate) trait Kp07Steps<T: Real>: Sized {
    /// The backend, the grid, the sides and the parameters.
    fn setting(&self) -> (&Backend, &Grid, &Boundaries, &Physics);

    /// [`Kp07Steps::evaluate_fluxes`] launched on `on` (which decides what becomes of the
    /// speed): the halos the faces read filled first, the fluxes' own after.
    fn evaluate_fluxes_on(&mut self, on: &Backend, which: Which, t: f64) -> Result<T, FloodError>;

    /// Launches `kp07::advance` for `stage`.
    fn launch_advance(&mut self, stage: &Stage<T>) -> Result<(), FloodError>;

    /// The state the launches read and write: the dense fields or the block fields.
    type State;

    /// What the stepping keeps: the present state and the stage, the clock (kept there
    /// between loops, empty while one runs), the time the host knows and the steps.
    fn progress(&mut self) -> &mut Progress<Self::State, T>;

    /// The kernels' scalars at time `t`.
    fn scalars(&self, t: f64) -> Kp07<T> {
        let (_, grid, boundaries, physics) = self.setting();
        Kp07::new(physics, grid, boundaries, t)
    }

    /// Evaluates the face fluxes of `which` state at time `t`; returns the largest
    /// `a / dx` (the inverse of the time step at Courant number 1), or NaN without waiting
    /// for it when `read_speed` is false (on a GPU the launch then queues without a
    /// read-back).
    fn evaluate_fluxes(&mut self, which: Which, t: f64, read_speed: bool) -> Result<T, FloodError> {
        let launch_on = match (self.setting().0, read_speed) {
            (Backend::Cuda(c), false) => Backend::Cuda(c.clone().with_unread_reductions(true)),
            (b, _) => b.clone(),
        };
        self.evaluate_fluxes_on(&launch_on, which, t)
    }

    /// One stage `to = keep to + (1 - keep) (from + dt R)` from the fluxes of `from` at
    /// time `t`, friction included: from the present state into the stage when `forward`,
    /// else back.
    fn advance_stage(
        &mut self,
        forward: bool,
        t: f64,
        dt: &Value<T>,
        keep: f64,
    ) -> Result<(), FloodError> {
        let stage = Stage {
            forward,
            dt,
            keep: T::from_f64(keep),
            scalars: self.scalars(t),
        };
        self.launch_advance(&stage)
    }

    /// The stages of a step after the first flux evaluation, with the step `dt` held on
    /// the backend; `t` and `t_next` are the times at the step's start and end (only the
    /// sides' values read them).
    fn stages(&mut self, dt: &Value<T>, t: f64, t_next: f64) -> Result<(), FloodError> {
        match self.setting().3.integrator {
            Integrator::Euler => {
                self.advance_stage(true, t, dt, 0.0)?;
                self.progress().swap_stage();
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
        let progress = self.progress();
        let time = progress.time;
        match progress.clock.take() {
            Some(c) => Ok(c),
            None => Clock::new(self.setting().0, time),
        }
    }

    /// Queues a step decided by `clock` (sides whose values do not change): the fluxes of
    /// the present state, the clock's tick, the stages.
    fn queue_clocked_stages(&mut self, clock: &mut Clock<T>) -> Result<(), FloodError> {
        let keeping = clock.keeping(self.setting().0);
        // The sides' values do not change: any time serves them.
        let t = self.progress().time;
        let speed = self.evaluate_fluxes_on(&keeping, Which::Now, t)?;
        let (backend, _, _, physics) = self.setting();
        clock.tick(backend, speed, physics.courant)?;
        self.stages(&clock.dt, t, t)
    }

    /// The host's part of a step of at most `limit` seconds after the present state's
    /// fluxes gave the largest speed `speed`: the step (an error from `unstable` where the
    /// speed is not sound), the stages, then `after` with the clock holding the time after
    /// the step; returns the step. The caller counts the step in its time.
    fn host_decided_stages(
        &mut self,
        speed: f64,
        limit: f64,
        unstable: impl FnOnce(&Self) -> FloodError,
        after: impl FnOnce(&mut Self, &Clock<T>) -> Result<(), FloodError>,
    ) -> Result<f64, FloodError> {
        // Minus infinity is the largest speed over no cells (a sparse run with no block
        // present): no wave anywhere, as a dry dense run's zero.
        let speed = if speed == f64::NEG_INFINITY {
            0.0
        } else {
            speed
        };
        if !(speed >= 0.0 && speed.is_finite()) {
            return Err(unstable(self));
        }
        let dt = crate::clock::host_step(self.setting().3.courant, speed, limit)?;
        let mut clock = self.take_clock()?;
        let time = self.progress().time;
        let stepped = clock
            .set_host_step(dt, time + dt)
            .and_then(|()| self.stages(&clock.dt, time, time + dt))
            .and_then(|()| after(self, &clock));
        self.progress().clock = Some(clock);
        stepped?;
        Ok(dt)
    }

    /// Runs `steps` with the clock taken out, putting it back unless they failed.
    fn run_on_clock(
        &mut self,
        steps: impl FnOnce(&mut Self, &mut Clock<T>) -> Result<(), FloodError>,
    ) -> Result<(), FloodError> {
        let mut clock = self.take_clock()?;
        let run = steps(self, &mut clock);
        // After an error the clock's reads are dropped (waiting for their copies), and a
        // fresh clock is made when one is next needed. Steps queued after the last read
        // may have run: a run that failed is not continued.
        if run.is_ok() {
            self.progress().clock = Some(clock);
        }
        run
    }
}
