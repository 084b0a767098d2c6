//! [`LiveView`]: the run's side of the live view. A run calls [`LiveView::tick`] once per
//! step (or per check); it returns at once unless the run is paused, and now and then asks
//! the run for a frame.

use crate::protocol::{Description, Frame, Status};
use crate::server::Server;
use crate::shared::{status_message, Shared};
use crate::Error;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The shortest time between two frames (the default refresh: 10 frames a second).
const FRAME_INTERVAL: Duration = Duration::from_millis(100);
/// The largest share of the run's wall time that making frames may take: when frames
/// take `c` (averaged over the last few), the next follows no sooner than
/// `c / FRAME_BUDGET` later, and no later than [`MAX_FRAME_WAIT`].
const FRAME_BUDGET: f64 = 0.03;
/// The longest wait between frames of a running simulation, however costly frames are:
/// one slow frame (a loaded machine, a page fault) must not freeze the view for a minute.
const MAX_FRAME_WAIT: Duration = Duration::from_secs(2);
/// How often the status is sent while nothing else is.
const STATUS_INTERVAL: Duration = Duration::from_millis(250);

/// Where the run is, as the run tells it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// Simulated time (or the sweep, for runs without time).
    pub time: f64,
    /// Steps taken.
    pub step: u64,
    /// How far the run has come, from 0 to 1.
    pub fraction: f64,
}

/// What the run should draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRequest {
    /// The field (an index into the description's fields).
    pub field: usize,
    /// The largest frame that fits the page's view: columns and rows.
    pub view: [usize; 2],
    /// Whether to include the fixed layers (relief, lines) that pages keep between frames.
    pub full: bool,
}

/// A live view being served; dropping it stops the server.
pub struct LiveView {
    shared: Arc<Shared>,
    server: Server,
    status: Status,
    last_frame: Option<Instant>,
    frame_cost: Duration,
    last_status: Instant,
    last_checkpoint: Option<Instant>,
    rate: Rate,
    interrupt: Option<Arc<AtomicBool>>,
}

/// Checkpoint requests closer than this to the last checkpoint are dropped.
const CHECKPOINT_SPACING: Duration = Duration::from_secs(2);

impl LiveView {
    /// Serves the live view of a run described by `description` at `address` (port 0
    /// picks a free one). Fails if the address cannot be bound.
    pub fn serve(address: SocketAddr, description: &Description) -> Result<LiveView, Error> {
        if description.fields.is_empty() {
            return Err(Error::Frame("a live view needs at least one field".into()));
        }
        let mut hello = serde_json::to_value(description)
            .map_err(|e| Error::Frame(format!("the description: {e}")))?;
        hello["kind"] = "hello".into();
        let shared = Arc::new(Shared::new(hello.to_string(), description.fields.len()));
        let server = Server::start(address, shared.clone())?;
        Ok(LiveView {
            shared,
            server,
            status: Status::default(),
            last_frame: None,
            frame_cost: Duration::ZERO,
            last_status: Instant::now(),
            last_checkpoint: None,
            rate: Rate::new(),
            interrupt: None,
        })
    }

    /// Ends a pause when `flag` is set (by a Ctrl-C handler), so that an interrupted run
    /// can stop even while a page holds it.
    pub fn interrupted_by(mut self, flag: Arc<AtomicBool>) -> LiveView {
        self.interrupt = Some(flag);
        self
    }

    /// The address being served (with the port chosen, if it was 0).
    pub fn address(&self) -> SocketAddr {
        self.server.address()
    }

    /// How many pages are connected now.
    pub fn viewers(&self) -> usize {
        self.shared.viewers()
    }

    /// Called by the run once per step: updates the status, makes a frame with `draw`
    /// when one is due (a page is connected, the last frame is old enough, and making
    /// frames stays within a few percent of the run's time), writes a checkpoint with
    /// `checkpoint` when a page asks (it returns what to tell the page), and waits while a
    /// page has paused the run: drawing when a page changes field or view, writing
    /// checkpoints, until a page resumes or the interrupt flag is set.
    pub fn tick<E: From<Error>>(
        &mut self,
        progress: Progress,
        mut draw: impl FnMut(&FrameRequest) -> Result<Frame, E>,
        mut checkpoint: impl FnMut() -> Result<String, E>,
    ) -> Result<(), E> {
        self.status.time = finite(progress.time);
        self.status.step = progress.step;
        self.status.progress = finite(progress.fraction).clamp(0.0, 1.0);
        self.status.steps_per_second = self.rate.update(progress.step);
        loop {
            let (request, paused, asked) = {
                let mut c = self.shared.controls();
                let asked = std::mem::take(&mut c.checkpoint);
                // Running, frames come at their pace whatever the pages ask; paused, when
                // a page asks.
                let due = self.shared.viewers() > 0
                    && if c.paused {
                        c.frame_now
                    } else {
                        self.frame_is_due()
                    };
                let request = due.then(|| {
                    let r = FrameRequest {
                        field: c.field,
                        view: c.view,
                        full: c.full,
                    };
                    c.frame_now = false;
                    c.full = false;
                    r
                });
                (request, c.paused, asked)
            };
            let interrupted = self
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(Ordering::SeqCst));
            self.status.paused = paused && !interrupted;
            if let Some(request) = request {
                let started = Instant::now();
                let frame = draw(&request)?;
                // The first frame pays for allocations, first launches and their tuning:
                // it does not set the pace.
                // The cost is averaged over the last few frames, so that one outlier
                // does not set the pace alone.
                self.frame_cost = match self.last_frame {
                    None => Duration::ZERO,
                    Some(_) if self.frame_cost.is_zero() => started.elapsed(),
                    Some(_) => self.frame_cost.mul_f64(0.75) + started.elapsed().mul_f64(0.25),
                };
                self.last_frame = Some(Instant::now());
                self.publish_frame(&frame)?;
            } else if self.last_status.elapsed() >= STATUS_INTERVAL {
                self.publish_status();
            }
            let spaced = match self.last_checkpoint {
                None => true,
                Some(t) => t.elapsed() >= CHECKPOINT_SPACING,
            };
            if asked && spaced {
                let text = checkpoint()?;
                self.last_checkpoint = Some(Instant::now());
                self.notice(text);
            }
            if !paused || interrupted {
                return Ok(());
            }
            self.publish_status();
            let c = self.shared.controls();
            let _ = self
                .shared
                .woken
                .wait_timeout(c, STATUS_INTERVAL)
                .map_err(|_| Error::Frame("the live view's controls were poisoned".into()))?;
            self.rate.pause();
        }
    }

    /// Shows `text` on the pages (say, where a checkpoint was written).
    pub fn notice(&mut self, text: impl Into<String>) {
        self.status.notice = text.into();
        self.publish_status();
    }

    /// Marks the run finished, with a last frame (when pages are connected) drawn by
    /// `draw`.
    pub fn finish<E: From<Error>>(
        &mut self,
        progress: Progress,
        draw: impl FnOnce(&FrameRequest) -> Result<Frame, E>,
    ) -> Result<(), E> {
        self.status.time = finite(progress.time);
        self.status.step = progress.step;
        self.status.progress = finite(progress.fraction).clamp(0.0, 1.0);
        self.status.paused = false;
        self.status.finished = true;
        if self.shared.viewers() > 0 {
            let request = {
                let c = self.shared.controls();
                FrameRequest {
                    field: c.field,
                    view: c.view,
                    full: true,
                }
            };
            let frame = draw(&request)?;
            self.publish_frame(&frame)?;
        }
        self.publish_status();
        Ok(())
    }

    fn frame_is_due(&self) -> bool {
        match self.last_frame {
            None => true,
            Some(t) => {
                let wait = FRAME_INTERVAL
                    .max(self.frame_cost.div_f64(FRAME_BUDGET))
                    .min(MAX_FRAME_WAIT);
                t.elapsed() >= wait
            }
        }
    }

    fn publish_frame(&mut self, frame: &Frame) -> Result<(), Error> {
        self.status.seq += 1;
        let bytes = frame.encode(&self.status)?;
        self.shared.frames.publish(Some(bytes.into()));
        self.last_status = Instant::now();
        Ok(())
    }

    fn publish_status(&mut self) {
        self.status.seq += 1;
        self.shared.status.publish(status_message(&self.status));
        self.last_status = Instant::now();
    }
}

/// `x`, or 0 where it is not finite (JSON has no NaN).
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Steps per second over the last second or so of running (time spent paused excluded).
struct Rate {
    since: Instant,
    first_step: u64,
    last: f64,
}

impl Rate {
    fn new() -> Rate {
        Rate {
            since: Instant::now(),
            first_step: 0,
            last: 0.0,
        }
    }

    fn update(&mut self, step: u64) -> f64 {
        if self.first_step == u64::MAX {
            self.first_step = step;
            self.since = Instant::now();
        }
        let elapsed = self.since.elapsed().as_secs_f64();
        if elapsed >= 1.0 {
            self.last = step.saturating_sub(self.first_step) as f64 / elapsed;
            self.since = Instant::now();
            self.first_step = step;
        }
        self.last
    }

    /// Starts a new window after a pause.
    fn pause(&mut self) {
        self.first_step = u64::MAX;
        self.last = 0.0;
    }
}
