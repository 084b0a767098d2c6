//! Launch-shape trials in a kernel's first real launches: instead of a timed search before
//! the first launch (which compiles and runs every variant while the program waits), each
//! of a kernel's first launches runs the next of a few proposed shapes
//! ([`LaunchShape::proposals`]) between two events, in two rounds (the second in the
//! reverse order, so that a device still raising its clocks in the first launches does
//! not favour the shapes tried last); once every launch has run and its events are
//! complete, the fastest shape becomes the tuned one. Every trial launch is a real launch
//! of the program, so trials cost no extra work and also serve kernels that update a field
//! in place. Trial launches are not programmatic dependents, so that their events bracket
//! them alone.

use crate::cuda::driver::cuda_error;
use crate::cuda::tune::LaunchShape;
use crate::Error;
use cudarc::driver::{result, sys};
use std::collections::HashMap;

/// Rounds of launches a trial times each candidate in.
pub(crate) const ROUNDS: usize = 2;

/// The trials under way on one device, by tuning-cache key.
#[derive(Default)]
pub(crate) struct Trials {
    pending: HashMap<String, Trial>,
    /// Counts the calls of [`Trials::next`]: what a [`TrialMark`] records.
    clock: u64,
}

/// A timed trial launch: the trial's key, the shape and the device's seconds.
pub(crate) type TimedLaunch = (String, LaunchShape, f64);

/// A trial ended by [`Trials::settle`]: its key, the fastest shape it timed and whether it
/// had run all its launches.
pub(crate) type Settled = (String, LaunchShape, bool);

/// A moment in a device's trials (see [`crate::Cuda::trial_mark`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TrialMark(u64);

/// The trial of one kernel, precision and size class.
struct Trial {
    /// The shapes to try, the model's first choice first.
    candidates: Vec<LaunchShape>,
    /// The launches earlier processes timed (read from the tuning cache), in the order
    /// [`Trial::scheduled`] gave them there: this trial goes on after them.
    prior: Vec<(LaunchShape, f64)>,
    /// The launches timed so far, in the order [`Trial::scheduled`] gave them.
    samples: Vec<Sample>,
    /// The shape to use where no candidate could launch.
    fallback: LaunchShape,
    /// The trial clock when a launch last asked for a shape.
    touched: u64,
}

impl Trial {
    /// A shape known to launch: the first timed one, else the fallback.
    fn safe(&self) -> LaunchShape {
        let earlier = self.prior.first().map(|&(s, _)| s);
        self.samples
            .first()
            .map(|s| s.shape)
            .or(earlier)
            .unwrap_or(self.fallback)
    }

    /// The shape of the trial's next launch: the candidates in order, then in reverse.
    fn scheduled(&self) -> Option<LaunchShape> {
        let (i, k) = (self.prior.len() + self.samples.len(), self.candidates.len());
        if i < k {
            Some(self.candidates[i])
        } else if i < ROUNDS * k {
            Some(self.candidates[ROUNDS * k - 1 - i])
        } else {
            None
        }
    }
}

/// One timed launch.
struct Sample {
    shape: LaunchShape,
    start: sys::CUevent,
    stop: sys::CUevent,
    /// Whether its time has been handed out by [`Trials::timed_unsaved`].
    saved: bool,
}

// SAFETY: event handles may be used from any thread with the context current; `Trials`
// lives behind the device's mutex.
unsafe impl Send for Sample {}

impl Sample {
    /// The device's time between the events, in seconds (both must be complete).
    fn seconds(&self) -> Result<f64, Error> {
        // SAFETY: both events were recorded and have completed.
        unsafe { result::event::elapsed(self.start, self.stop) }
            .map(|ms| ms as f64 * 1e-3)
            .map_err(|e| cuda_error("reading a launch trial's timer", e))
    }

    /// Whether the launch has finished (its stop event completed).
    fn finished(&self) -> Result<bool, Error> {
        // SAFETY: the event is alive and recorded.
        match unsafe { sys::cuEventQuery(self.stop) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            e => Err(cuda_error(
                "asking whether a timed launch finished",
                e.result().unwrap_err(),
            )),
        }
    }

    fn destroy(self) {
        // SAFETY: created by `Trials::start`, destroyed once; the caller has the context
        // current.
        unsafe {
            let _ = result::event::destroy(self.start);
            let _ = result::event::destroy(self.stop);
        }
    }
}

/// A launch to time: the events to record around it, handed back to
/// [`Trials::finish`] (or [`Trials::reject`]); dropped otherwise, its events are
/// destroyed.
pub(crate) struct Ticket {
    key: String,
    shape: LaunchShape,
    start: sys::CUevent,
    stop: sys::CUevent,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // SAFETY: events this ticket still owns (null once handed to a sample); the
        // launch path has the context current.
        unsafe {
            for e in [self.start, self.stop] {
                if !e.is_null() {
                    let _ = result::event::destroy(e);
                }
            }
        }
    }
}

impl Ticket {
    /// The timed sample, the events moving to it.
    fn into_sample(mut self) -> Sample {
        let start = std::mem::replace(&mut self.start, std::ptr::null_mut());
        let stop = std::mem::replace(&mut self.stop, std::ptr::null_mut());
        Sample {
            shape: self.shape,
            start,
            stop,
            saved: false,
        }
    }
}

impl Ticket {
    /// Records the start event on `stream`: call just before the launch.
    pub fn start(&self, stream: sys::CUstream) -> Result<(), Error> {
        // SAFETY: the event and the stream are alive.
        unsafe { result::event::record(self.start, stream) }
            .map_err(|e| cuda_error("recording a launch trial's event", e))
    }

    /// Records the stop event on `stream`: call just after the launch.
    pub fn stop(&self, stream: sys::CUstream) -> Result<(), Error> {
        // SAFETY: as in `start`.
        unsafe { result::event::record(self.stop, stream) }
            .map_err(|e| cuda_error("recording a launch trial's event", e))
    }
}

/// What a launch without a tuned shape does.
pub(crate) enum Next {
    /// The trial is decided: this shape won (store it as tuned), and whether it was timed
    /// (no candidate could launch: the fallback, untimed).
    Decided(LaunchShape, bool),
    /// Time this launch with this shape.
    Try(LaunchShape, Ticket),
    /// Every candidate has run, their times are not all in yet: launch with this shape.
    Wait(LaunchShape),
}

impl Trials {
    /// The next step of the trial under `key`, started if there is none with the
    /// candidates `proposals` gives (the model's first choice first) and the launches
    /// earlier processes timed (`prior`, from the tuning cache); `fallback` is the shape
    /// used if none of them can launch.
    pub fn next(
        &mut self,
        key: &str,
        proposals: impl FnOnce() -> Vec<LaunchShape>,
        prior: impl FnOnce() -> Vec<(LaunchShape, f64)>,
        fallback: LaunchShape,
    ) -> Result<Next, Error> {
        self.clock += 1;
        let trial = self.pending.entry(key.to_string()).or_insert_with(|| {
            let candidates = proposals();
            let mut prior = prior();
            prior.retain(|(s, _)| candidates.contains(s));
            prior.truncate(ROUNDS * candidates.len());
            Trial {
                candidates,
                prior,
                samples: Vec::new(),
                fallback,
                touched: 0,
            }
        });
        trial.touched = self.clock;
        if let Some(shape) = trial.scheduled() {
            let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
            let event =
                || result::event::create(flags).map_err(|e| cuda_error("creating an event", e));
            let start = event()?;
            let stop = match event() {
                Ok(e) => e,
                Err(e) => {
                    // SAFETY: created just above, destroyed once.
                    unsafe {
                        let _ = result::event::destroy(start);
                    }
                    return Err(e);
                }
            };
            return Ok(Next::Try(
                shape,
                Ticket {
                    key: key.to_string(),
                    shape,
                    start,
                    stop,
                },
            ));
        }
        let mut finished = true;
        for s in &trial.samples {
            finished &= s.finished()?;
        }
        if !finished {
            return Ok(Next::Wait(trial.safe()));
        }
        let timed = !trial.samples.is_empty() || !trial.prior.is_empty();
        self.decide(key).map(|shape| Next::Decided(shape, timed))
    }

    /// The times of the timed launches that have finished and were not handed out
    /// before, by key: for the tuning cache, so that a trial the process does not
    /// finish goes on in the next one.
    pub fn timed_unsaved(&mut self) -> Result<Vec<TimedLaunch>, Error> {
        let mut out = Vec::new();
        for (key, trial) in &mut self.pending {
            for s in trial.samples.iter_mut().filter(|s| !s.saved) {
                if s.finished()? {
                    s.saved = true;
                    out.push((key.clone(), s.shape, s.seconds()?));
                }
            }
        }
        Ok(out)
    }

    /// Files a timed launch that was queued.
    pub fn finish(&mut self, ticket: Ticket) {
        let key = ticket.key.clone();
        let sample = ticket.into_sample();
        match self.pending.get_mut(&key) {
            Some(t) => t.samples.push(sample),
            None => sample.destroy(),
        }
    }

    /// Drops a candidate that cannot launch (a block with more threads than the kernel's
    /// registers allow), with any sample of it: the next launch tries the next one.
    pub fn reject(&mut self, ticket: Ticket) {
        if let Some(t) = self.pending.get_mut(&ticket.key) {
            t.candidates.retain(|&c| c != ticket.shape);
            t.prior.retain(|&(s, _)| s != ticket.shape);
            let (dropped, kept) = std::mem::take(&mut t.samples)
                .into_iter()
                .partition(|s| s.shape == ticket.shape);
            t.samples = kept;
            for s in dropped {
                s.destroy();
            }
        }
    }

    /// Ends every trial that has timed at least one launch, waiting for those launches:
    /// the fastest shape so far of each, by key, and whether the trial had run all its
    /// launches; and the times of the unfinished trials' launches not handed out before
    /// (as [`Trials::timed_unsaved`] gives them), for the next process's trials. (Before a
    /// graph capture, which cannot wait for events, so that the graph records tuned
    /// shapes.)
    pub fn settle(&mut self) -> Result<(Vec<Settled>, Vec<TimedLaunch>), Error> {
        let keys: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, t)| !t.samples.is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        for key in &keys {
            for s in &self.pending[key].samples {
                // SAFETY: the event is alive and recorded.
                unsafe { result::event::synchronize(s.stop) }
                    .map_err(|e| cuda_error("waiting for a timed launch", e))?;
            }
        }
        let timed = self.timed_unsaved()?;
        let mut decided = Vec::new();
        for key in keys {
            let complete = self.pending[&key].scheduled().is_none();
            let shape = self.decide(&key)?;
            decided.push((key, shape, complete));
        }
        let unfinished: Vec<&String> = decided
            .iter()
            .filter(|(_, _, complete)| !complete)
            .map(|(k, _, _)| k)
            .collect();
        let timed = timed
            .into_iter()
            .filter(|(k, _, _)| unfinished.contains(&k))
            .collect();
        Ok((decided, timed))
    }

    /// Whether no trial is under way.
    pub fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }

    /// The present moment of the trials.
    pub fn mark(&self) -> TrialMark {
        TrialMark(self.clock)
    }

    /// Whether a trial that a launch has asked for a shape since `mark` still has
    /// launches to time.
    pub fn untried_since(&self, mark: TrialMark) -> bool {
        self.pending
            .values()
            .any(|t| t.touched > mark.0 && t.scheduled().is_some())
    }

    /// The fastest of the trial's finished samples; the trial ends.
    fn decide(&mut self, key: &str) -> Result<LaunchShape, Error> {
        let trial = self
            .pending
            .remove(key)
            .expect("a trial is decided only while pending");
        let mut best: Option<(f64, LaunchShape)> = None;
        for &(shape, t) in &trial.prior {
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, shape));
            }
        }
        let mut failure = None;
        for s in &trial.samples {
            match s.seconds() {
                Ok(t) if best.is_none_or(|(b, _)| t < b) => best = Some((t, s.shape)),
                Ok(_) => {}
                Err(e) => failure = Some(e),
            }
        }
        for s in trial.samples {
            s.destroy();
        }
        match (best, failure) {
            (_, Some(e)) => Err(e),
            (Some((_, shape)), None) => Ok(shape),
            (None, None) => Ok(trial.fallback),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(x: u32) -> LaunchShape {
        LaunchShape {
            block: [x, 1, 1],
            points: 1,
            vector: 1,
        }
    }

    #[test]
    fn candidates_run_in_order_then_in_reverse() {
        let mut t = Trial {
            candidates: vec![shape(32), shape(64), shape(128)],
            prior: Vec::new(),
            samples: Vec::new(),
            fallback: shape(256),
            touched: 0,
        };
        let mut order = Vec::new();
        while let Some(s) = t.scheduled() {
            order.push(s.block[0]);
            // No event is created or destroyed here: a sample only needs its shape.
            t.samples.push(Sample {
                shape: s,
                start: std::ptr::null_mut(),
                stop: std::ptr::null_mut(),
                saved: false,
            });
        }
        assert_eq!(order, [32, 64, 128, 128, 64, 32]);
        assert_eq!(
            t.safe(),
            shape(32),
            "the first timed shape is known to launch"
        );
        let untimed = Trial {
            candidates: Vec::new(),
            prior: Vec::new(),
            samples: Vec::new(),
            fallback: shape(256),
            touched: 0,
        };
        assert_eq!(untimed.scheduled(), None);
        assert_eq!(untimed.safe(), shape(256));
    }

    #[test]
    fn a_trial_goes_on_after_the_launches_earlier_processes_timed() {
        let mut t = Trial {
            candidates: vec![shape(32), shape(64), shape(128)],
            prior: vec![(shape(32), 3e-4), (shape(64), 1e-4), (shape(128), 2e-4)],
            samples: Vec::new(),
            fallback: shape(256),
            touched: 0,
        };
        assert_eq!(
            t.scheduled(),
            Some(shape(128)),
            "the second round, reversed"
        );
        assert_eq!(t.safe(), shape(32), "a shape an earlier process launched");
        t.prior
            .extend([(shape(128), 2e-4), (shape(64), 1e-4), (shape(32), 3e-4)]);
        assert_eq!(
            t.scheduled(),
            None,
            "every launch timed: the trial is decided"
        );
        let mut trials = Trials::default();
        trials.pending.insert("k".into(), t);
        assert_eq!(trials.decide("k").ok(), Some(shape(64)));
    }
}
