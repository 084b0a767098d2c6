//! Timing device work with CUDA events.

use crate::cuda::driver::{cuda_error, Stream};
use crate::Error;
use cudarc::driver::{result, sys};
use std::sync::Arc;

/// Two events on a stream: [`Timer::start`] and [`Timer::stop`] bracket the work to time.
pub struct Timer {
    stream: Arc<Stream>,
    start: sys::CUevent,
    stop: sys::CUevent,
}

impl Timer {
    pub(crate) fn new(stream: Arc<Stream>) -> Result<Timer, Error> {
        stream.device.bind()?;
        let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
        let start = result::event::create(flags).map_err(|e| cuda_error("creating an event", e))?;
        let stop = result::event::create(flags).map_err(|e| cuda_error("creating an event", e))?;
        Ok(Timer {
            stream,
            start,
            stop,
        })
    }

    /// Marks the start: work queued on the stream after this call is timed.
    pub fn start(&mut self) -> Result<(), Error> {
        self.stream.device.bind()?;
        // SAFETY: the event and stream are alive.
        unsafe { result::event::record(self.start, self.stream.raw) }
            .map_err(|e| cuda_error("recording an event", e))
    }

    /// Marks the end, waits for it, and returns the seconds between start and end as the
    /// device measured them.
    pub fn stop(&mut self) -> Result<f64, Error> {
        self.stream.device.bind()?;
        // SAFETY: the events and the stream are alive.
        unsafe {
            result::event::record(self.stop, self.stream.raw)
                .map_err(|e| cuda_error("recording an event", e))?;
            result::event::synchronize(self.stop)
                .map_err(|e| cuda_error("waiting for the timed work", e))?;
            let ms = result::event::elapsed(self.start, self.stop)
                .map_err(|e| cuda_error("reading an event timer", e))?;
            Ok(ms as f64 * 1e-3)
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if self.stream.device.bind().is_ok() {
            // SAFETY: created in `new`, destroyed once.
            unsafe {
                let _ = result::event::destroy(self.start);
                let _ = result::event::destroy(self.stop);
            }
        }
    }
}
