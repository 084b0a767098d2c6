//! The time step decided where the state lives: the largest wave speed of a flux
//! evaluation is kept on the backend ([`KeptReductions`]), a one-point kernel
//! ([`kernels::tick`]) turns it into the step and the new time, and the stage updates read
//! the step as a `Value<T>`. The host learns each step's time one step late
//! ([`ValueReader`]), so on a device it queues the next step while the last one runs,
//! instead of waiting for every step's speed.
//!
//! The tick computes what the host computes in [`crate::ShallowWater::step`], in the same
//! f64 arithmetic, so a clocked run equals a host-stepped one bit for bit. A tick at a
//! time already within `slack` of the target takes a step of 0, which leaves the state
//! as it was (the host queues such a step only when it could not foresee that the step
//! before would land on the target); a speed that is not a finite number at least 0 makes
//! the time NaN, which the host reports as an instability.

use crate::model::CHECK_EVERY;
use crate::FloodError;
use stencil_runtime::{Backend, KeptReductions, Real, Value, ValueReader};

#[stencil_runtime::stencils]
pub mod kernels {
    /// One point: the step `dt = min(courant / speed, end - time)` (`end - time` where no
    /// water moves; 0 once `time` is within `slack` of `end`; 0 with the time made NaN
    /// where `speed` is not a finite number at least 0), the new time in f64 and in `T`.
    #[stencil(dims = 1)]
    pub fn tick<T: Real>(
        speed: Value<T>,
        time: InOut<f64>,
        dt: Out<T>,
        after: Out<T>,
        courant: f64,
        end: f64,
        slack: f64,
    ) {
        let s = speed as f64;
        let t = time;
        let limit = end - t;
        let finite = s >= 0.0 && s - s == 0.0;
        let step = if t >= end - slack || !finite {
            0.0
        } else if s > 0.0 {
            (courant / s).min(limit)
        } else {
            limit
        };
        time = if finite { t + step } else { 0.0 / 0.0 };
        dt = step as T;
        after = (t + step) as T;
    }
}

/// A run's clock on its backend: the time (f64), the step and the time after it (in the
/// kernels' `T`), the kept speeds, and the times on their way back to the host.
pub(crate) struct Clock<T: Real> {
    kept: KeptReductions,
    time: Value<f64>,
    /// The step the stage updates read.
    pub dt: Value<T>,
    /// The time after the step, as the extent's tracking reads it.
    pub after: Value<T>,
    reader: ValueReader,
}

impl<T: Real> Clock<T> {
    /// A clock at time `time` on `backend`.
    pub fn new(backend: &Backend, time: f64) -> Result<Clock<T>, FloodError> {
        Ok(Clock {
            kept: KeptReductions::new(),
            time: Value::new(backend, time)?,
            dt: Value::new(backend, T::zero())?,
            after: Value::new(backend, T::from_f64(time))?,
            reader: ValueReader::new(),
        })
    }

    /// `backend` leaving its reductions in this clock (the flux evaluation's speed).
    pub fn keeping(&self, backend: &Backend) -> Backend {
        backend.keeping_reductions(&self.kept)
    }

    /// Sets the clock to a step `dt` decided on the host, ending at `after` (a host step).
    pub fn set_host_step(&mut self, dt: f64, after: f64) -> Result<(), FloodError> {
        self.dt.set(T::from_f64(dt))?;
        self.after.set(T::from_f64(after))?;
        self.time.set(after)?;
        Ok(())
    }

    /// Sets the time (after a restore).
    pub fn set_time(&mut self, time: f64) -> Result<(), FloodError> {
        self.time.set(time)?;
        self.after.set(T::from_f64(time))?;
        Ok(())
    }

    /// Queues the tick after a flux evaluation on [`Clock::keeping`] (`returned`: the
    /// speed the launch returned, which the CPU returns at once), towards `end`, and the
    /// read-back of the new time.
    pub fn tick(
        &mut self,
        backend: &Backend,
        returned: T,
        courant: f64,
        end: f64,
        slack: f64,
    ) -> Result<(), FloodError> {
        let speed = self.kept.take(backend, returned)?;
        kernels::tick::launch(
            backend,
            &speed,
            self.time.field_mut(),
            self.dt.field_mut(),
            self.after.field_mut(),
            courant,
            end,
            slack,
        )?;
        self.reader.start(&self.time)?;
        Ok(())
    }

    /// The time after the oldest step whose time the host has not read, waiting for that
    /// step only; `None` if every step's time was read.
    pub fn finish(&mut self) -> Result<Option<f64>, FloodError> {
        Ok(self.reader.finish()?)
    }

    /// Steps whose times the host has not read.
    pub fn pending(&self) -> usize {
        self.reader.pending()
    }
}

/// What the host knows of a clocked run, and the loop that queues its steps.
pub(crate) struct Stepping {
    /// The time of the last step read back.
    pub time: f64,
    /// The steps taken (steps of 0 not counted).
    pub steps: u64,
    /// The length of the last step read back.
    last_dt: f64,
}

impl Stepping {
    /// At `time` after `steps` steps.
    pub fn new(time: f64, steps: u64) -> Stepping {
        Stepping {
            time,
            steps,
            last_dt: 0.0,
        }
    }

    /// Whether `target` is reached (within `slack`).
    pub fn reached(&self, target: f64, slack: f64) -> bool {
        self.time >= target - slack
    }

    /// Whether the step in flight might land on `target`, so that a step queued after it
    /// could be one of 0: the host then waits for it first. (Steps change slowly; a step
    /// half again as long as the last is allowed for.)
    pub fn might_land(&self, target: f64) -> bool {
        target - self.time <= 1.5 * self.last_dt
    }

    /// Takes in the time `t` read back after a step; `Some(steps)` when the step moved
    /// the time, `None` for a step of 0, the error `unstable` makes when the time is NaN.
    pub fn take(
        &mut self,
        t: f64,
        unstable: impl FnOnce() -> FloodError,
    ) -> Result<Option<u64>, FloodError> {
        if t.is_nan() {
            return Err(unstable());
        }
        if t <= self.time {
            return Ok(None);
        }
        self.last_dt = t - self.time;
        self.time = t;
        self.steps += 1;
        Ok(Some(self.steps))
    }
}

/// A simulation whose steps a [`Clock`] decides.
pub(crate) trait Clocked<T: Real> {
    /// Queues one step decided by `clock` towards `end` (the flux evaluation on
    /// [`Clock::keeping`], [`Clock::tick`], the stages, and whatever follows a step).
    fn queue_step(&mut self, clock: &mut Clock<T>, end: f64, slack: f64) -> Result<(), FloodError>;

    /// The time and the step count the host knows.
    fn known(&self) -> (f64, u64);

    /// Sets the time and the step count the host knows.
    fn set_known(&mut self, time: f64, steps: u64);

    /// The survey every [`CHECK_EVERY`] steps, an error if the state is not sound.
    fn check_state(&mut self) -> Result<(), FloodError>;

    /// The instability of the present state, located (as the host reports one).
    fn unstable(&self) -> FloodError;
}

/// Steps `model` towards `end` until its time is within `slack` of it or `budget` steps
/// are queued, each step decided by `clock`: every step is queued before the time of the
/// one before is read, except where that step might land on `end`.
pub(crate) fn run<T: Real>(
    model: &mut impl Clocked<T>,
    clock: &mut Clock<T>,
    end: f64,
    slack: f64,
    budget: u64,
) -> Result<(), FloodError> {
    let (time, steps) = model.known();
    clock.set_time(time)?;
    let mut known = Stepping::new(time, steps);
    let mut queued = 0;
    loop {
        if clock.pending() > 0 && known.might_land(end) {
            take_times(model, clock, &mut known, 0)?;
        }
        if known.reached(end, slack) || queued == budget {
            break;
        }
        model.queue_step(clock, end, slack)?;
        queued += 1;
        // The step before this one: the device runs this one meanwhile.
        take_times(model, clock, &mut known, 1)?;
    }
    take_times(model, clock, &mut known, 0)
}

/// Reads step times back until at most `leave` are unread, counting the steps and
/// checking the state every [`CHECK_EVERY`] steps.
fn take_times<T: Real>(
    model: &mut impl Clocked<T>,
    clock: &mut Clock<T>,
    known: &mut Stepping,
    leave: usize,
) -> Result<(), FloodError> {
    while clock.pending() > leave {
        let Some(t) = clock.finish()? else { break };
        let taken = known.take(t, || model.unstable())?;
        model.set_known(known.time, known.steps);
        if taken.is_some_and(|s| s.is_multiple_of(CHECK_EVERY)) {
            model.check_state()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Clock, Clocked};
    use crate::model::DenseStepping;
    use crate::{cases, Physics, Setup, ShallowWater, SparseShallowWater};
    use stencil_runtime::Backend;

    fn bits(state: [Vec<f64>; 3]) -> Vec<u64> {
        state.concat().iter().map(|x| x.to_bits()).collect()
    }

    /// A pond draining under friction and a radial dam break, part way through.
    fn setups() -> Vec<Setup> {
        let pond = cases::pond(40).expect("the pond");
        let physics = Physics {
            manning: 0.03,
            ..pond.setup.physics
        };
        let radial = cases::radial(48).expect("the dam break");
        vec![
            Setup {
                physics,
                ..pond.setup
            },
            radial.setup,
        ]
    }

    #[test]
    fn a_step_of_zero_leaves_the_state_as_it_was() {
        // A step queued after the one that landed on the target gets a step of 0: it
        // must change nothing, friction and dry cells included.
        let b = Backend::Cpu;
        for setup in setups() {
            let mut dense = ShallowWater::<f64>::new(&b, &setup).expect("dense");
            dense.advance_to(0.5).expect("stepping");
            let (before, time) = (bits(dense.state().expect("state")), dense.time());
            let mut clock = Clock::new(&b, time).expect("clock");
            let mut stepping = DenseStepping {
                flow: &mut dense,
                after_step: &mut |_, _| Ok(()),
            };
            stepping.queue_step(&mut clock, time, 0.0).expect("a step");
            assert_eq!(clock.finish().expect("time"), Some(time));
            assert!(bits(dense.state().expect("state")) == before, "dense");

            let mut sparse = SparseShallowWater::<f64>::new(&b, &setup).expect("sparse");
            sparse.advance_to(0.5).expect("stepping");
            let before = bits(sparse.state().expect("state"));
            let mut clock = Clock::new(&b, time).expect("clock");
            sparse.queue_step(&mut clock, time, 0.0).expect("a step");
            assert_eq!(clock.finish().expect("time"), Some(time));
            assert!(bits(sparse.state().expect("state")) == before, "sparse");
        }
    }
}
