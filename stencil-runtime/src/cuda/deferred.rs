//! Reductions read later: a launch on a backend with deferred reductions leaves each value
//! on the device behind an event and returns at once; the caller reads the values in
//! launch order while later work runs.

use crate::cuda::driver::{cuda_error, Stream};
use crate::cuda::memory::DeviceBuffer;
use crate::{Error, Precision};
use cudarc::driver::{result, sys};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The values of one launch's reductions, not yet read.
pub(crate) struct PendingValues {
    /// Recorded on the stream after the values were computed.
    event: sys::CUevent,
    /// One element each, on the device.
    values: Vec<(DeviceBuffer, Precision)>,
}

// SAFETY: the event handle may be used from any thread with the context current.
unsafe impl Send for PendingValues {}

impl PendingValues {
    /// Marks `values` as complete once the work queued so far on `stream` is done.
    pub fn new(
        stream: &Arc<Stream>,
        values: Vec<(DeviceBuffer, Precision)>,
    ) -> Result<Self, Error> {
        stream.device.bind()?;
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        let event = result::event::create(flags).map_err(|e| cuda_error("creating an event", e))?;
        let pending = PendingValues { event, values };
        // SAFETY: the event was just created; the stream is alive.
        unsafe { result::event::record(pending.event, stream.raw) }
            .map_err(|e| cuda_error("recording an event", e))?;
        Ok(pending)
    }

    /// Waits for the values (not for later work on the stream) and reads them.
    fn read(&self) -> Result<Vec<f64>, Error> {
        // SAFETY: the event was recorded in `new`.
        unsafe { result::event::synchronize(self.event) }
            .map_err(|e| cuda_error("waiting for a reduction", e))?;
        self.values
            .iter()
            .map(|(buf, p)| {
                // A synchronous copy outside the stream: the stream's later work goes on.
                // SAFETY: each buffer holds one element of its precision, complete once
                // the event has fired.
                unsafe {
                    match p {
                        Precision::F32 => {
                            let mut v = [0f32];
                            result::memcpy_dtoh_sync(&mut v, buf.ptr).map(|()| v[0] as f64)
                        }
                        Precision::F64 => {
                            let mut v = [0f64];
                            result::memcpy_dtoh_sync(&mut v, buf.ptr).map(|()| v[0])
                        }
                    }
                }
                .map_err(|e| cuda_error("copying a reduction to the host", e))
            })
            .collect()
    }
}

impl Drop for PendingValues {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once.
        unsafe {
            let _ = result::event::destroy(self.event);
        }
    }
}

/// The launches whose reductions wait to be read, oldest first; shared by the clones of a
/// backend.
#[derive(Clone, Default)]
pub(crate) struct DeferredQueue(Arc<Mutex<VecDeque<PendingValues>>>);

impl DeferredQueue {
    /// Adds a launch's values at the back.
    pub fn push(&self, p: PendingValues) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push_back(p);
    }

    /// The oldest launch's values, waiting for them; `None` if none wait.
    pub fn pop(&self) -> Result<Option<Vec<f64>>, Error> {
        let oldest = self.0.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        oldest.map(|p| p.read()).transpose()
    }

    /// Forgets every waiting value.
    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}
