//! Copies from the device into page-locked host memory that the host reads later: the
//! copy is queued on a stream with an event after it, and only a read of the values waits,
//! for that event alone (not for work queued after the copy).

use crate::cuda::driver::{cuda_error, Stream};
use crate::cuda::memory::DeviceBuffer;
use crate::Error;
use cudarc::driver::{result, sys};

/// Page-locked host memory and the event that says the copies into it have landed.
#[derive(Debug)]
pub(crate) struct Readback {
    host: *mut u8,
    /// Bytes the host memory holds.
    pub capacity: usize,
    event: sys::CUevent,
}

// SAFETY: a readback's memory and event belong to its holder (a queue, a reader, a free
// list behind a mutex) and are used with the context bound.
unsafe impl Send for Readback {}

impl Readback {
    /// `capacity` bytes of page-locked memory and an event, on the current context.
    pub fn new(capacity: usize) -> Result<Readback, Error> {
        // SAFETY: a plain page-locked allocation, freed on drop.
        let host = unsafe { result::malloc_host(capacity.max(1), 0) }
            .map_err(|e| cuda_error("allocating page-locked memory for a read-back", e))?
            as *mut u8;
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
        Ok(Readback {
            host,
            capacity,
            event,
        })
    }

    /// Queues a copy of `bytes` bytes from the start of `src` to byte `at` of the host
    /// memory, on `stream`.
    ///
    /// # Safety
    /// No read of the host memory may be under way, and the memory must not be reused
    /// for another copy before [`Readback::wait`] (or a synchronisation of the stream).
    pub unsafe fn queue(
        &self,
        stream: &Stream,
        at: usize,
        src: &DeviceBuffer,
        bytes: usize,
    ) -> Result<(), Error> {
        assert!(
            at + bytes <= self.capacity && bytes <= src.bytes,
            "read-back fits"
        );
        // SAFETY: both ranges lie inside live allocations (checked above); the caller keeps
        // the host memory for the copy.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(self.host.add(at) as *mut _, src.ptr, bytes, stream.raw)
                .result()
        }
        .map_err(|e| cuda_error("copying to the host", e))
    }

    /// Records the event after the copies queued so far on `stream`.
    pub fn record(&self, stream: &Stream) -> Result<(), Error> {
        // SAFETY: the event and the stream are alive.
        unsafe { result::event::record(self.event, stream.raw) }
            .map_err(|e| cuda_error("recording an event", e))
    }

    /// Waits for the copies queued before the last [`Readback::record`].
    pub fn wait(&self) -> Result<(), Error> {
        // SAFETY: the event is alive.
        unsafe { result::event::synchronize(self.event) }
            .map_err(|e| cuda_error("waiting for a copy to the host", e))
    }

    /// The value of type `T` at byte `at`, after [`Readback::wait`] (a call into the
    /// driver, so the compiler cannot assume the memory unchanged since the copy).
    pub fn read<T: Copy>(&self, at: usize) -> T {
        assert!(at + std::mem::size_of::<T>() <= self.capacity, "read fits");
        // SAFETY: inside the allocation (checked); `at` may be any byte, so unaligned.
        unsafe { std::ptr::read_unaligned(self.host.add(at) as *const T) }
    }

    /// The first `len` values of type `T`, after [`Readback::wait`].
    pub fn read_slice<T: Copy>(&self, len: usize) -> Vec<T> {
        let size = std::mem::size_of::<T>();
        (0..len).map(|i| self.read(i * size)).collect()
    }
}

impl Drop for Readback {
    fn drop(&mut self) {
        // SAFETY: owned here; without a context there is nothing left to free.
        unsafe {
            let _ = result::event::destroy(self.event);
            let _ = result::free_host(self.host as *mut _);
        }
    }
}
