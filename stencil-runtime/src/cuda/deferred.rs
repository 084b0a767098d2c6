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

use crate::cuda::driver::{cuda_error, Stream};
use crate::cuda::launch::elem_bytes;
use crate::cuda::memory::DeviceBuffer;
use crate::{Error, Precision};
use cudarc::driver::{result, sys};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Values one slot holds (one launch's reductions; a launch with more takes a larger slot).
const SLOT_VALUES: usize = 4;

/// Page-locked host memory for a launch's values, and the event that says they arrived.
pub(crate) struct Slot {
    /// `capacity` 8-byte cells (an f32 value sits in the first 4 bytes of its cell).
    host: *mut u64,
    capacity: usize,
    event: sys::CUevent,
}

// SAFETY: a slot's memory and event belong to whoever holds the slot (a queue, or the
// device's free list, both behind mutexes) and are used with the context bound.
unsafe impl Send for Slot {}

impl Slot {
    /// A slot of `capacity` values on the current context.
    fn new(capacity: usize) -> Result<Slot, Error> {
        // SAFETY: a plain page-locked allocation, kept for the life of the process.
        let host = unsafe { result::malloc_host(capacity * 8, 0) }
            .map_err(|e| cuda_error("allocating page-locked memory for reductions", e))?
            as *mut u64;
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        let event = match result::event::create(flags) {
            Ok(event) => event,
            Err(e) => {
                // SAFETY: allocated just above, not shared.
                unsafe {
                    let _ = result::free_host(host as *mut _);
                }
                return Err(cuda_error("creating an event", e));
            }
        };
        Ok(Slot {
            host,
            capacity,
            event,
        })
    }

    /// Waits for the copies into the slot (not for later work on the stream) and reads
    /// the values, of `precisions`.
    fn read(&self, precisions: &[Precision]) -> Result<Vec<f64>, Error> {
        // SAFETY: the event was recorded after the copies into the slot.
        unsafe { result::event::synchronize(self.event) }
            .map_err(|e| cuda_error("waiting for a reduction", e))?;
        let values = precisions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                // SAFETY: cell `i` exists (capacity checked when queued) and its copy has
                // completed; the device wrote it, so read it as volatile.
                unsafe {
                    let cell = self.host.add(i);
                    match p {
                        Precision::F32 => std::ptr::read_volatile(cell as *const f32) as f64,
                        Precision::F64 => std::ptr::read_volatile(cell as *const f64),
                    }
                }
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
            let fits = free.iter().position(|s| s.capacity >= count);
            fits.map(|i| free.swap_remove(i))
        };
        let slot = match reused {
            Some(slot) => slot,
            None => Slot::new(count.max(SLOT_VALUES))?,
        };
        let raw = q.stream.raw;
        let queued = (|| {
            for (i, (buf, p)) in values.iter().enumerate() {
                let bytes = elem_bytes(*p);
                // SAFETY: the cell holds 8 bytes and lives until the event has fired (the
                // slot is reused or freed only after that); the source holds one element.
                unsafe {
                    sys::cuMemcpyDtoHAsync_v2(slot.host.add(i) as *mut _, buf.ptr, bytes, raw)
                        .result()
                }
                .map_err(|e| cuda_error("copying a reduction to the host", e))?;
            }
            // SAFETY: the event and the stream are alive.
            unsafe { result::event::record(slot.event, raw) }
                .map_err(|e| cuda_error("recording an event", e))
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
