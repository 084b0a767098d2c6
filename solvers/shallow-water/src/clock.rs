//! The time step decided where the state lives: the largest wave speed of a flux
//! evaluation is kept on the backend ([`KeptReductions`]), a one-point kernel
//! ([`kernels::tick`]) turns it into the step and the new time, and the stage updates read
//! the step as a `Value<T>`. The host reads the time and the step count back once per
//! window of steps, one window late ([`ValueReader`]), so on a device it queues steps
//! while earlier ones run, instead of waiting for every step's speed. (A sparse run still
//! waits, every second step, for the block flags it chooses its layout from, so it runs
//! at most about a step ahead of the device.)
//!
//! The tick computes what the host computes in [`crate::ShallowWater::step`], in the same
//! f64 arithmetic, so a clocked run equals a host-stepped one bit for bit. A tick at a
//! time already within `slack` of the target takes a step of 0, which leaves the state
//! as it was (`kp07::advance`) and is not counted: the host sizes its windows from the
//! last step's length so that such steps are rare, and needs no guess to be right. A
//! speed that is not a finite number at least 0 makes the time NaN, which the host
//! reports as an instability.

use crate::model::CHECK_EVERY;
use crate::FloodError;
use stencil_runtime::cuda::{Graph, TrialMark};
use stencil_runtime::{Backend, Error, KeptReductions, Real, Value, ValueReader};

#[stencil_runtime::stencils]
pub mod kernels {
    /// One point: the step `dt = min(courant / speed, end - time)` (`end - time` where no
    /// water moves, or no cell is computed: a speed of minus infinity; 0 once `time` is within `slack` of `end`; 0 with the time made NaN
    /// where `speed` is not a finite number at least 0), the new time in f64 and in `T`,
    /// and the count of steps that moved the time.
    #[stencil(dims = 1)]
    pub fn tick<T: Real>(
        speed: Value<T>,
        time: InOut<f64>,
        count: InOut<f64>,
        dt: Out<T>,
        after: Out<T>,
        courant: f64,
        end: Value<f64>,
        slack: Value<f64>,
    ) {
        // A speed below zero is minus infinity, the largest over no cells (a sparse run
        // with no block present): no wave anywhere. A NaN stays NaN (a `max` would drop
        // it on the devices).
        let given = speed as f64;
        let s = if given < 0.0 { 0.0 } else { given };
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
        count = if step > 0.0 { count + 1.0 } else { count };
        dt = step as T;
        after = (t + step) as T;
    }

    /// One point: the larger of two wave speeds, or infinity where either is NaN or
    /// infinity (an instability), which stays the largest when the speeds of several ranks
    /// are combined and which [`tick`] turns into a NaN time. Minus infinity is the speed
    /// of a launch over no blocks (the identity of a maximum), not an instability.
    #[stencil(dims = 1)]
    pub fn larger<T: Real>(a: Value<T>, b: Value<T>, out: Out<T>) {
        let sound = (a - a == 0.0 || a < 0.0) && (b - b == 0.0 || b < 0.0);
        out = if sound { a.max(b) } else { 1.0 / 0.0 };
    }
}

/// The step the host takes from the largest `speed` (a finite number at least 0): the
/// CFL step `courant / speed`, shortened to `limit`, or `limit` where no water moves, as
/// [`kernels::tick`] computes it on the backend. A step that is not a finite number above
/// 0 (no water moving and no finite limit) is a [`FloodError::Config`].
pub(crate) fn host_step(courant: f64, speed: f64, limit: f64) -> Result<f64, FloodError> {
    let dt = if speed > 0.0 {
        (courant / speed).min(limit)
    } else {
        limit
    };
    if !(dt.is_finite() && dt > 0.0) {
        return Err(FloodError::Config {
            name: "time step limit".into(),
            value: limit.to_string(),
            expected: "a finite positive limit when no water moves".into(),
        });
    }
    Ok(dt)
}

/// A run's clock on its backend: the time (f64), the step and the time after it (in the
/// kernels' `T`), the kept speeds, and the times on their way back to the host.
pub(crate) struct Clock<T: Real> {
    kept: KeptReductions,
    time: Value<f64>,
    /// Steps that moved the time (an exact count in f64).
    count: Value<f64>,
    /// The step the stage updates read.
    pub dt: Value<T>,
    /// The time after the step, as the extent's tracking reads it.
    pub after: Value<T>,
    /// The largest of several launches' speeds ([`Clock::combine_kept`]).
    combined: Value<T>,
    /// Where [`Clock::combine_kept`] combines a third speed and more, by turns with
    /// `combined`.
    spare: Value<T>,
    /// The time the steps land on, and how near counts as reached.
    end: Value<f64>,
    slack: Value<f64>,
    reader: ValueReader,
    /// The step recorded on a device, for its layout.
    recorded: Option<Recorded>,
    /// The mean step length the last loop saw (0: none yet), which sizes the next
    /// loop's first window.
    last_dt: f64,
}

impl<T: Real> Clock<T> {
    /// A clock at time `time` on `backend`.
    pub fn new(backend: &Backend, time: f64) -> Result<Clock<T>, FloodError> {
        Ok(Clock {
            kept: KeptReductions::new(),
            time: Value::new(backend, time)?,
            count: Value::new(backend, 0.0)?,
            dt: Value::new(backend, T::zero())?,
            after: Value::new(backend, T::from_f64(time))?,
            combined: Value::new(backend, T::zero())?,
            spare: Value::new(backend, T::zero())?,
            end: Value::new(backend, f64::INFINITY)?,
            slack: Value::new(backend, 0.0)?,
            reader: ValueReader::new(),
            recorded: None,
            last_dt: 0.0,
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

    /// Sets the time and the step count, and the time steps land on within `slack` (at
    /// the start of a clocked loop).
    pub fn set(&mut self, time: f64, steps: u64, end: f64, slack: f64) -> Result<(), FloodError> {
        self.time.set(time)?;
        self.count.set(steps as f64)?;
        self.after.set(T::from_f64(time))?;
        self.end.set(end)?;
        self.slack.set(slack)?;
        Ok(())
    }

    /// Queues the tick after a flux evaluation on [`Clock::keeping`] (`returned`: the
    /// speed the launch returned, which the CPU returns at once), towards the end set by
    /// [`Clock::set`].
    pub fn tick(&mut self, backend: &Backend, returned: T, courant: f64) -> Result<(), FloodError> {
        let speed = self.kept.take(backend, returned)?;
        self.queue_tick(backend, Some(speed), courant)
    }

    /// Combines the `launches` oldest speeds launches on [`Clock::keeping`] left (say, of
    /// parts of a grid; `returned` where the launches returned theirs, on the CPU) into
    /// the clock's combined speed, the largest of them ([`kernels::larger`], one launch
    /// per speed after the first, at least one), and returns it, for the caller to
    /// combine further (over ranks) before [`Clock::tick_combined`].
    pub fn combine_kept(
        &mut self,
        backend: &Backend,
        returned: T,
        launches: usize,
    ) -> Result<&mut Value<T>, FloodError> {
        let first = self.kept.take(backend, returned)?;
        let second = match launches {
            0 | 1 => None,
            _ => Some(self.kept.take(backend, returned)?),
        };
        let b = second.as_ref().unwrap_or(&first);
        kernels::larger::launch(backend, &first, b, self.combined.field_mut())?;
        for _ in 2..launches {
            let next = self.kept.take(backend, returned)?;
            kernels::larger::launch(backend, &self.combined, &next, self.spare.field_mut())?;
            std::mem::swap(&mut self.combined, &mut self.spare);
        }
        Ok(&mut self.combined)
    }

    /// Queues the tick from the combined speed ([`Clock::combine_kept`]).
    pub fn tick_combined(&mut self, backend: &Backend, courant: f64) -> Result<(), FloodError> {
        self.queue_tick(backend, None, courant)
    }

    /// Queues [`kernels::tick`] from `speed`, or from the combined speed.
    fn queue_tick(
        &mut self,
        backend: &Backend,
        speed: Option<Value<T>>,
        courant: f64,
    ) -> Result<(), FloodError> {
        let speed = speed.as_ref().unwrap_or(&self.combined);
        kernels::tick::launch(
            backend,
            speed,
            self.time.field_mut(),
            self.count.field_mut(),
            self.dt.field_mut(),
            self.after.field_mut(),
            courant,
            &self.end,
            &self.slack,
        )?;
        Ok(())
    }

    /// Starts reading the time and the step count as they will be after the steps
    /// queued so far.
    pub fn start_read(&mut self) -> Result<(), FloodError> {
        self.reader.start(&self.time)?;
        self.reader.start(&self.count)?;
        Ok(())
    }

    /// The oldest started read, `(time, steps)`, waiting for it only; `None` if none is
    /// pending.
    pub fn finish_read(&mut self) -> Result<Option<(f64, u64)>, FloodError> {
        let Some(time) = self.reader.finish()? else {
            return Ok(None);
        };
        let count = self.reader.finish()?.unwrap_or(f64::NAN);
        Ok(Some((time, count as u64)))
    }

    /// Reads started and not finished.
    pub fn reads_pending(&self) -> usize {
        self.reader.pending() / 2
    }
}

/// Steps queued between two read-backs of the time at most.
const WINDOW: u64 = 16;

/// What the host knows of a clocked run.
pub(crate) struct Stepping {
    /// The time of the last read-back.
    pub time: f64,
    /// The steps counted by then.
    pub steps: u64,
    /// The mean length of the steps between the last two read-backs (0: not known).
    last_dt: f64,
    /// Steps queued after the last read-back's.
    in_flight: u64,
}

impl Stepping {
    /// At `time` after `steps` steps, the last steps `last_dt` long (0: not known).
    pub fn new(time: f64, steps: u64, last_dt: f64) -> Stepping {
        Stepping {
            time,
            steps,
            last_dt,
            in_flight: 0,
        }
    }

    /// Whether `end` is reached (within `slack`).
    pub fn reached(&self, end: f64, slack: f64) -> bool {
        self.time >= end - slack
    }

    /// How many steps may be queued now without one of them likely being a step of 0:
    /// those that, at the last steps' length and half again, still end before `end`,
    /// counting those in flight; at most [`WINDOW`].
    pub fn window(&self, end: f64) -> u64 {
        if self.last_dt <= 0.0 {
            return u64::from(self.in_flight == 0);
        }
        let fit = ((end - self.time) / (1.5 * self.last_dt)).floor();
        (fit.max(0.0) as u64)
            .saturating_sub(self.in_flight)
            .min(WINDOW)
    }

    /// Takes in a read-back `(t, count)` made after `queued` more steps were queued;
    /// the error `unstable` makes when the time is NaN.
    pub fn take(
        &mut self,
        (t, count): (f64, u64),
        queued: u64,
        unstable: impl FnOnce() -> FloodError,
    ) -> Result<(), FloodError> {
        if t.is_nan() {
            return Err(unstable());
        }
        if count > self.steps {
            self.last_dt = (t - self.time) / (count - self.steps) as f64;
        }
        (self.time, self.steps) = (t, count);
        self.in_flight -= queued;
        Ok(())
    }
}

/// A simulation whose steps a [`Clock`] decides.
pub(crate) trait Clocked<T: Real> {
    /// The backend the steps run on.
    fn backend(&self) -> &Backend;

    /// The host's work before a step (a sparse run's layout); returns the layout the
    /// step's launches are made for (a step recorded for a layout replays while it
    /// holds), or `None` where the step cannot be replayed (the Euler step swaps the
    /// state's fields on the host).
    fn before_step(&mut self) -> Result<Option<u64>, FloodError>;

    /// Whether a step recorded in one call of [`run`] may be replayed in the next (false
    /// where what runs after each step may differ from call to call).
    fn recordings_outlive_calls(&self) -> bool;

    /// Queues one step's launches, decided by `clock` (the flux evaluation on
    /// [`Clock::keeping`], [`Clock::tick`], the stages, the extent's tracking): work with
    /// no host decision in it, which a device records once and replays.
    fn queue_step(&mut self, clock: &mut Clock<T>) -> Result<(), FloodError>;

    /// The host's work after a step's launches are queued.
    fn after_step(&mut self) -> Result<(), FloodError> {
        Ok(())
    }

    /// The time and the step count the host knows.
    fn known(&self) -> (f64, u64);

    /// Sets the time and the step count the host knows.
    fn set_known(&mut self, time: f64, steps: u64);

    /// The survey every [`CHECK_EVERY`] steps, an error if the state is not sound.
    fn check_state(&mut self) -> Result<(), FloodError>;

    /// The instability of the present state, located (as the host reports one).
    fn unstable(&self) -> FloodError;
}

/// A step's launches recorded for one layout as a CUDA graph (after the step ran once
/// unrecorded for it, so that its launch shapes are tuned).
struct Recorded {
    layout: u64,
    graph: Option<Graph>,
    /// Steps of this layout run launch by launch, and the launch-shape trials' moment
    /// before the last of them.
    eager: usize,
    mark: TrialMark,
}

/// Queues one step of `model`: on a device, the graph recorded for its layout.
fn queue_one<T: Real>(model: &mut impl Clocked<T>, clock: &mut Clock<T>) -> Result<(), FloodError> {
    let layout = model.before_step()?;
    let (Backend::Cuda(cuda), Some(layout)) = (model.backend().clone(), layout) else {
        model.queue_step(clock)?;
        return model.after_step();
    };
    let mut recorded = clock.recorded.take();
    match &mut recorded {
        Some(Recorded {
            layout: l,
            graph: Some(graph),
            ..
        }) if *l == layout => graph.launch()?,
        Some(r) if r.layout == layout && cuda.ready_to_record(r.mark, r.eager) => {
            // The second step of this layout (or a later one, once the launch-shape
            // trials have run): record it, then run the recording.
            let mut failure = None;
            let graph = cuda.capture(|| {
                model.queue_step(clock).map_err(|e| {
                    let cause = e.to_string();
                    failure = Some(e);
                    Error::Launch {
                        kernel: "a recorded shallow-water step".into(),
                        cause,
                    }
                })
            });
            let graph = match (graph, failure) {
                (Ok(g), _) => g,
                (Err(_), Some(e)) => return Err(e),
                (Err(e), None) => return Err(e.into()),
            };
            graph.launch()?;
            r.graph = Some(graph);
        }
        Some(r) if r.layout == layout => {
            r.eager += 1;
            r.mark = cuda.trial_mark();
            model.queue_step(clock)?;
        }
        _ => {
            recorded = Some(Recorded {
                layout,
                graph: None,
                eager: 1,
                mark: cuda.trial_mark(),
            });
            model.queue_step(clock)?;
        }
    }
    clock.recorded = recorded;
    model.after_step()
}

/// Steps `model` towards `end` until its time is within `slack` of it or `budget` steps
/// are queued, each step decided by `clock`. Steps are queued in windows (see
/// [`Stepping::window`]); after each window the host starts reading the time back and
/// takes in the read of the window before, so the device is never left waiting; where
/// no step fits before `end`, it waits for every read and then queues one step. On a
/// device each step is one graph launch (plus a sparse run's layout work).
pub(crate) fn run<T: Real>(
    model: &mut impl Clocked<T>,
    clock: &mut Clock<T>,
    end: f64,
    slack: f64,
    budget: u64,
) -> Result<(), FloodError> {
    if !end.is_finite() {
        return Err(FloodError::Config {
            name: "target time".into(),
            value: end.to_string(),
            expected: "a finite time to step towards".into(),
        });
    }
    let (time, steps) = model.known();
    clock.set(time, steps, end, slack)?;
    if !model.recordings_outlive_calls() {
        clock.recorded = None;
    }
    let mut known = Stepping::new(time, steps, clock.last_dt);
    // Steps queued before each pending read.
    let mut windows = std::collections::VecDeque::new();
    let mut queued = 0;
    loop {
        let mut window = known.window(end);
        if window == 0 {
            take_reads(model, clock, &mut known, &mut windows, 0)?;
            window = 1;
        }
        if known.reached(end, slack) || queued == budget {
            break;
        }
        let window = window.min(budget - queued);
        for _ in 0..window {
            queue_one(model, clock)?;
        }
        queued += window;
        known.in_flight += window;
        clock.start_read()?;
        windows.push_back(window);
        take_reads(model, clock, &mut known, &mut windows, 1)?;
    }
    take_reads(model, clock, &mut known, &mut windows, 0)?;
    clock.last_dt = known.last_dt;
    Ok(())
}

/// Takes in read-backs until at most `leave` are pending, checking the state each time
/// the step count passes a multiple of [`CHECK_EVERY`].
fn take_reads<T: Real>(
    model: &mut impl Clocked<T>,
    clock: &mut Clock<T>,
    known: &mut Stepping,
    windows: &mut std::collections::VecDeque<u64>,
    leave: usize,
) -> Result<(), FloodError> {
    while clock.reads_pending() > leave {
        let Some(read) = clock.finish_read()? else {
            break;
        };
        let queued = windows.pop_front().unwrap_or(0);
        let before = known.steps;
        known.take(read, queued, || model.unstable())?;
        model.set_known(known.time, known.steps);
        if known.steps / CHECK_EVERY > before / CHECK_EVERY {
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
    use stencil_runtime::{Backend, Value};

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

    /// Two parts' speeds combine to the larger; a part over no blocks (minus infinity)
    /// gives way; NaN or infinity (an instability) gives infinity, the largest over ranks.
    #[test]
    fn the_larger_speed_keeps_an_instability_and_passes_over_an_empty_part() {
        let cpu = Backend::Cpu;
        let larger = |a: f64, b: f64| {
            let (a, b) = (Value::new(&cpu, a).unwrap(), Value::new(&cpu, b).unwrap());
            let mut out = Value::new(&cpu, 0.0).unwrap();
            super::kernels::larger::launch(&cpu, &a, &b, out.field_mut()).unwrap();
            out.get().unwrap()
        };
        assert_eq!(larger(1.5, 2.5), 2.5);
        assert_eq!(larger(3.0, 0.0), 3.0);
        assert_eq!(larger(f64::NEG_INFINITY, 2.0), 2.0);
        assert_eq!(larger(1.0, f64::NEG_INFINITY), 1.0);
        assert_eq!(
            larger(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(larger(f64::NAN, 1.0), f64::INFINITY);
        assert_eq!(larger(1.0, f64::NAN), f64::INFINITY);
        assert_eq!(larger(f64::INFINITY, 1.0), f64::INFINITY);
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
            clock.set(time, 0, time, 0.0).expect("the target");
            let mut stepping = DenseStepping {
                flow: &mut dense,
                after_step: &mut |_, _| Ok(()),
                same_after: None,
            };
            stepping.queue_step(&mut clock).expect("a step");
            clock.start_read().expect("a read");
            assert_eq!(clock.finish_read().expect("time"), Some((time, 0)));
            assert!(bits(dense.state().expect("state")) == before, "dense");

            let mut sparse = SparseShallowWater::<f64>::new(&b, &setup).expect("sparse");
            sparse.advance_to(0.5).expect("stepping");
            let before = bits(sparse.state().expect("state"));
            let mut clock = Clock::new(&b, time).expect("clock");
            clock.set(time, 0, time, 0.0).expect("the target");
            sparse.queue_step(&mut clock).expect("a step");
            clock.start_read().expect("a read");
            assert_eq!(clock.finish_read().expect("time"), Some((time, 0)));
            assert!(bits(sparse.state().expect("state")) == before, "sparse");
        }
    }
}
