//! Reductions read later: a launch on a backend with deferred reductions queues, on its
//! stream, a copy of each value into page-locked host memory and an event after it, and
//! returns at once; the caller reads the values in launch order while later work runs.
//!
//! The copies are ordered on the stream like every other operation, so a value read after
//! its event has fired is the one the launch computed, whatever was queued after it; the
//! device buffers that held the values can be freed as soon as the copies are queued.
//! Slots (page-locked memory and an event) are costly to make, so a device keeps the free
//! ones for every stream's reuse; a slot goes back there only when no copy into it is
//! pending.

use crate::cuda::driver::Stream;
use crate::cuda::launch::elem_bytes;
use crate::cuda::memory::DeviceBuffer;
use crate::cuda::readback::Readback;
use crate::{Error, Precision};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Values one slot holds (one launch's reductions; a launch with more takes a larger slot).
const SLOT_VALUES: usize = 4;

/// Page-locked host memory for a launch's values (8 bytes a value: an f32 value sits in
/// the first 4 bytes of its cell), and the event that says they arrived.
pub(crate) struct Slot(Readback);

impl Slot {
    /// A slot of `capacity` values on the current context.
    fn new(capacity: usize) -> Result<Slot, Error> {
        Readback::new(capacity * 8).map(Slot)
    }

    /// Values the slot holds.
    fn capacity(&self) -> usize {
        self.0.capacity / 8
    }

    /// Waits for the copies into the slot (not for later work on the stream) and reads
    /// the values, of `precisions`.
    fn read(&self, precisions: &[Precision]) -> Result<Vec<f64>, Error> {
        self.0.wait()?;
        let values = precisions
            .iter()
            .enumerate()
            .map(|(i, p)| match p {
                Precision::F32 => self.0.read::<f32>(8 * i) as f64,
                Precision::F64 => self.0.read::<f64>(8 * i),
            })
            .collect();
        Ok(values)
    }
}

/// The values of one launch's reductions: on their way to the host, or known at once (a
/// launch over nothing gives its reductions' identities).
enum PendingValues {
    Copying {
        slot: Slot,
        precisions: Vec<Precision>,
    },
    Ready(Vec<f64>),
}

impl PendingValues {
    /// The slot the values are copied into, if any.
    fn slot(self) -> Option<Slot> {
        match self {
            PendingValues::Copying { slot, .. } => Some(slot),
            PendingValues::Ready(_) => None,
        }
    }
}

/// Launches whose values wait to be read, oldest first.
struct Queue {
    stream: Arc<Stream>,
    waiting: VecDeque<PendingValues>,
}

impl Queue {
    /// Gives every waiting launch's slot back to the device once its copies are done.
    fn forget(&mut self) {
        let slots: Vec<Slot> = self
            .waiting
            .drain(..)
            .filter_map(PendingValues::slot)
            .collect();
        if slots.is_empty() {
            return;
        }
        // Copies into the slots may still be queued: they must land before another stream
        // reuses a slot. Without a context there is nothing left to copy, and nothing to
        // reuse the slots with either.
        if self.stream.synchronize().is_ok() {
            free_slots(&self.stream).extend(slots);
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.forget();
    }
}

/// The device's free slots.
fn free_slots(stream: &Stream) -> std::sync::MutexGuard<'_, Vec<Slot>> {
    stream
        .device
        .reduction_slots
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The launches whose reductions wait to be read, shared by the clones of a backend.
#[derive(Clone)]
pub(crate) struct DeferredQueue(Arc<Mutex<Queue>>);

impl DeferredQueue {
    /// An empty queue for launches on `stream`.
    pub fn new(stream: Arc<Stream>) -> DeferredQueue {
        DeferredQueue(Arc::new(Mutex::new(Queue {
            stream,
            waiting: VecDeque::new(),
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues copies of `values` (one element each, on the device, computed by work already
    /// queued on the stream) to the host, and an event after them; the buffers may be
    /// dropped at once.
    pub fn push(&self, values: &[(DeviceBuffer, Precision)]) -> Result<(), Error> {
        let mut q = self.lock();
        q.stream.device.bind()?;
        let count = values.len();
        let reused = {
            let mut free = free_slots(&q.stream);
            let fits = free.iter().position(|s| s.capacity() >= count);
            fits.map(|i| free.swap_remove(i))
        };
        let slot = match reused {
            Some(slot) => slot,
            None => Slot::new(count.max(SLOT_VALUES))?,
        };
        let queued = (|| {
            for (i, (buf, p)) in values.iter().enumerate() {
                // SAFETY: the cell holds 8 bytes and is read only after the event has
                // fired (the slot is reused only after that); the source holds one element.
                unsafe { slot.0.queue(&q.stream, 8 * i, buf, elem_bytes(*p))? };
            }
            slot.0.record(&q.stream)
        })();
        if let Err(e) = queued {
            // Whatever copies were queued land before the stream's later work.
            if q.stream.synchronize().is_ok() {
                free_slots(&q.stream).push(slot);
            }
            return Err(e);
        }
        let precisions = values.iter().map(|(_, p)| *p).collect();
        q.waiting
            .push_back(PendingValues::Copying { slot, precisions });
        Ok(())
    }

    /// Queues values known at once, to be read in their turn.
    pub fn push_ready(&self, values: Vec<f64>) {
        self.lock().waiting.push_back(PendingValues::Ready(values));
    }

    /// The oldest launch's values, waiting for them; `None` if none wait.
    pub fn pop(&self) -> Result<Option<Vec<f64>>, Error> {
        let (oldest, stream) = {
            let mut q = self.lock();
            (q.waiting.pop_front(), q.stream.clone())
        };
        let Some(oldest) = oldest else {
            return Ok(None);
        };
        let (slot, precisions) = match oldest {
            PendingValues::Ready(values) => return Ok(Some(values)),
            PendingValues::Copying { slot, precisions } => (slot, precisions),
        };
        // Read without holding the lock: other clones may queue meanwhile.
        let values = slot.read(&precisions);
        if values.is_ok() {
            free_slots(&stream).push(slot);
        }
        values.map(Some)
    }

    /// Forgets every waiting value (waits for copies still queued into their slots).
    pub fn clear(&self) {
        self.lock().forget();
    }
}
