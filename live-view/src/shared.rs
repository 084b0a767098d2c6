//! The state the run and the server share: what the pages ask for (behind a mutex, with a
//! condition variable the paused run waits on) and what the run publishes (the latest
//! frame and status, each a [`Latest`] that keeps only the newest value: a page that falls
//! behind skips frames, the run never waits for it).

use crate::protocol::{Command, Status};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use tungstenite::Bytes;

/// What the pages have asked for.
#[derive(Clone, Debug)]
pub(crate) struct Controls {
    /// The run waits while this is set.
    pub paused: bool,
    /// The field to show.
    pub field: usize,
    /// The view's size in pixels.
    pub view: [usize; 2],
    /// A checkpoint was asked for and not yet written.
    pub checkpoint: bool,
    /// A frame is wanted now (a page connected, or the field or view changed).
    pub frame_now: bool,
    /// The next frame should carry its fixed layers (a page connected or the view changed).
    pub full: bool,
}

/// Shared between the run (through [`crate::LiveView`]) and the server's threads.
pub(crate) struct Shared {
    controls: Mutex<Controls>,
    /// Wakes a paused run when a page sends a command.
    pub woken: Condvar,
    /// The newest encoded frame.
    pub frames: Latest<Option<Bytes>>,
    /// The newest status, as its JSON message.
    pub status: Latest<String>,
    /// The hello message (the run's description as JSON).
    pub hello: String,
    /// How many pages are connected.
    pub viewers: Arc<AtomicUsize>,
    /// How many fields the description offers.
    pub fields: usize,
}

/// The view a frame fits until a page says its size.
pub(crate) const DEFAULT_VIEW: [usize; 2] = [800, 600];
/// The largest view a page may ask for, per side.
pub(crate) const LARGEST_VIEW: usize = 4096;

impl Shared {
    /// Shared state for a run of `fields` fields, greeting pages with `hello`.
    pub fn new(hello: String, fields: usize) -> Shared {
        Shared {
            controls: Mutex::new(Controls {
                paused: false,
                field: 0,
                view: DEFAULT_VIEW,
                checkpoint: false,
                frame_now: false,
                full: true,
            }),
            woken: Condvar::new(),
            frames: Latest::new(None),
            status: Latest::new(status_message(&Status::default())),
            hello,
            viewers: Arc::new(AtomicUsize::new(0)),
            fields,
        }
    }

    /// The controls, locked (a poisoned lock still holds usable controls).
    pub fn controls(&self) -> MutexGuard<'_, Controls> {
        self.controls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies a page's command (out-of-range values are ignored) and wakes the run.
    pub fn apply(&self, command: &Command) {
        let mut c = self.controls();
        if let Some(p) = command.pause {
            c.paused = p;
        }
        if let Some(f) = command.field {
            if f < self.fields && f != c.field {
                c.field = f;
                c.frame_now = true;
            }
        }
        if let Some([w, h]) = command.view {
            let v = [w.clamp(16, LARGEST_VIEW), h.clamp(16, LARGEST_VIEW)];
            if v != c.view {
                c.view = v;
                c.frame_now = true;
                c.full = true;
            }
        }
        if command.checkpoint == Some(true) {
            c.checkpoint = true;
        }
        drop(c);
        self.woken.notify_all();
    }

    /// A page connected (its place taken): it wants a full frame soon.
    pub fn connected(&self) {
        let mut c = self.controls();
        c.frame_now = true;
        c.full = true;
        drop(c);
        self.woken.notify_all();
    }

    /// How many pages are connected.
    pub fn viewers(&self) -> usize {
        self.viewers.load(Ordering::SeqCst)
    }
}

/// The status as the JSON text message pages receive.
pub(crate) fn status_message(status: &Status) -> String {
    serde_json::json!({ "kind": "status", "status": status }).to_string()
}

/// The newest value of something the run publishes, numbered: a reader remembers the
/// number it last took and gets only newer values, the newest, skipping those between.
pub(crate) struct Latest<T> {
    numbered: Mutex<(u64, T)>,
}

impl<T: Clone> Latest<T> {
    /// Holds `value`, numbered 0.
    pub fn new(value: T) -> Latest<T> {
        Latest {
            numbered: Mutex::new((0, value)),
        }
    }

    /// Replaces the value with a newer one; never waits for readers.
    pub fn publish(&self, value: T) {
        let mut n = self.numbered.lock().unwrap_or_else(|p| p.into_inner());
        *n = (n.0 + 1, value);
    }

    /// The value, if its number is not `seen` (which becomes its number). A reader that
    /// starts with [`UNSEEN`] gets the value held then.
    pub fn newer(&self, seen: &mut u64) -> Option<T> {
        let n = self.numbered.lock().unwrap_or_else(|p| p.into_inner());
        (n.0 != *seen).then(|| {
            *seen = n.0;
            n.1.clone()
        })
    }
}

/// What a reader of a [`Latest`] that has taken nothing yet remembers.
pub(crate) const UNSEEN: u64 = u64::MAX;
