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
        // SAFETY: created in `new`, destroyed once.
        self.stream.device.release(|| unsafe {
            let _ = result::event::destroy(self.start);
            let _ = result::event::destroy(self.stop);
        });
    }
}

impl crate::cuda::Cuda {
    /// The device's copy bandwidth in bytes per second (read plus written): the median of
    /// 7 device-to-device copies of `bytes` bytes, timed with events after one untimed
    /// copy. The yardstick benchmarks report effective bandwidth against (use at least a
    /// few hundred MB, beyond the caches).
    pub fn copy_bandwidth(&self, bytes: usize) -> Result<f64, Error> {
        use crate::cuda::DeviceBuffer;
        let stream = self.stream();
        let src = DeviceBuffer::zeroed(stream, bytes, "the copy-bandwidth source")?;
        let dst = DeviceBuffer::new(stream, bytes, "the copy-bandwidth destination")?;
        let mut times = Vec::new();
        for _ in 0..8 {
            let mut t = self.timer()?;
            t.start()?;
            // SAFETY: both buffers hold `bytes` bytes; the copy is ordered on the stream.
            unsafe { result::memcpy_dtod_async(dst.ptr, src.ptr, bytes, stream.raw) }
                .map_err(|e| cuda_error("copying within the device", e))?;
            times.push(t.stop()?);
        }
        times.remove(0);
        times.sort_by(f64::total_cmp);
        Ok(2.0 * bytes as f64 / times[times.len() / 2])
    }
}
