//! Device memory: stream-ordered allocations freed when dropped.

use crate::cuda::driver::{cuda_error, describe, Stream};
use crate::Error;
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;
use std::sync::Arc;

/// Bytes of device memory, allocated from the device's memory pool in the order of a
/// stream and returned to it (in that order) on drop.
pub(crate) struct DeviceBuffer {
    /// The device address.
    pub ptr: sys::CUdeviceptr,
    /// Its size in bytes.
    pub bytes: usize,
    /// The stream it was allocated on (and is freed on).
    pub stream: Arc<Stream>,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceBuffer({} bytes on {:?})",
            self.bytes, self.stream.device
        )
    }
}

/// Maps an allocation failure to [`Error::OutOfMemory`] when that is what it was.
fn alloc_error(what: &str, bytes: usize, e: DriverError) -> Error {
    if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory {
            bytes,
            what: what.to_string(),
        }
    } else {
        Error::Cuda {
            op: format!("allocating {bytes} bytes for {what}"),
            cause: describe(e),
        }
    }
}

impl DeviceBuffer {
    /// `bytes` uninitialised bytes for `what` (named in errors).
    pub fn new(stream: &Arc<Stream>, bytes: usize, what: &str) -> Result<DeviceBuffer, Error> {
        stream.device.bind()?;
        // SAFETY: a plain allocation on a live stream.
        let ptr = unsafe { result::malloc_async(stream.raw, bytes.max(1)) }
            .map_err(|e| alloc_error(what, bytes, e))?;
        Ok(DeviceBuffer {
            ptr,
            bytes,
            stream: stream.clone(),
        })
    }

    /// `bytes` zero bytes.
    pub fn zeroed(stream: &Arc<Stream>, bytes: usize, what: &str) -> Result<DeviceBuffer, Error> {
        let b = DeviceBuffer::new(stream, bytes, what)?;
        // SAFETY: the buffer holds `bytes` bytes; the memset is ordered on its stream.
        unsafe { result::memset_d8_async(b.ptr, 0, bytes, stream.raw) }
            .map_err(|e| cuda_error(format!("zeroing {what}"), e))?;
        Ok(b)
    }

    /// A buffer holding a copy of `src`, queued on the stream. `src` may go as soon as
    /// this returns: a copy from pageable host memory returns once the driver has staged
    /// the bytes (CUDA's "API synchronization behavior"), so no wait for the device is
    /// needed, and work queued before it goes on running.
    pub fn from_slice<T: Copy>(
        stream: &Arc<Stream>,
        src: &[T],
        what: &str,
    ) -> Result<DeviceBuffer, Error> {
        let b = DeviceBuffer::new(stream, std::mem::size_of_val(src), what)?;
        // SAFETY: the buffer holds `src`'s bytes; `src` is pageable Rust memory, staged by
        // the driver before the call returns.
        unsafe { result::memcpy_htod_async(b.ptr, src, stream.raw) }
            .map_err(|e| cuda_error(format!("copying {what} to the device"), e))?;
        Ok(b)
    }

    /// Queues the zeroing of `bytes` bytes from byte `at` (on this buffer's stream).
    pub fn zero_range(&self, at: usize, bytes: usize) -> Result<(), Error> {
        assert!(at + bytes <= self.bytes, "zeroing fits");
        self.stream.device.bind()?;
        // SAFETY: the range lies inside the live allocation (checked above).
        unsafe { result::memset_d8_async(self.ptr + at as u64, 0, bytes, self.stream.raw) }
            .map_err(|e| cuda_error("zeroing device memory", e))
    }

    /// Queues a copy of `bytes` bytes from byte `from` of `src` to byte `to` of this
    /// buffer (on this buffer's stream).
    pub fn copy_range(
        &self,
        to: usize,
        src: &DeviceBuffer,
        from: usize,
        bytes: usize,
    ) -> Result<(), Error> {
        assert!(
            to + bytes <= self.bytes && from + bytes <= src.bytes,
            "copy fits"
        );
        self.stream.device.bind()?;
        // SAFETY: both ranges lie inside live allocations (checked above).
        unsafe {
            result::memcpy_dtod_async(
                self.ptr + to as u64,
                src.ptr + from as u64,
                bytes,
                self.stream.raw,
            )
        }
        .map_err(|e| cuda_error("copying within the device", e))
    }

    /// Queues a copy of `src` to element `at` onwards (on this buffer's stream; `src` is
    /// pageable memory, staged by the driver before the call returns).
    pub fn upload_at<T: Copy>(&self, at: usize, src: &[T]) -> Result<(), Error> {
        let size = std::mem::size_of::<T>();
        assert!((at + src.len()) * size <= self.bytes, "upload fits");
        self.stream.device.bind()?;
        // SAFETY: the destination holds the range (checked); the driver stages `src`.
        unsafe { result::memcpy_htod_async(self.ptr + (at * size) as u64, src, self.stream.raw) }
            .map_err(|e| cuda_error("copying to the device", e))
    }

    /// Copies `dst.len()` elements starting at element `from` into `dst` after the
    /// stream's pending work.
    pub fn download_from<T: Copy>(&self, from: usize, dst: &mut [T]) -> Result<(), Error> {
        let size = std::mem::size_of::<T>();
        assert!((from + dst.len()) * size <= self.bytes, "download fits");
        self.stream.device.bind()?;
        // SAFETY: the source holds the range (checked); we wait before returning.
        unsafe { result::memcpy_dtoh_async(dst, self.ptr + (from * size) as u64, self.stream.raw) }
            .map_err(|e| cuda_error("copying to the host", e))?;
        self.stream.synchronize()
    }

    /// Elements `at` (of `T`) of this buffer, after the stream's pending work: copied
    /// within the device into one scratch buffer, then to the host in one copy (one wait,
    /// where reading them one by one waits once per element).
    pub fn gather<T: Copy + Default>(&self, at: &[usize]) -> Result<Vec<T>, Error> {
        let size = std::mem::size_of::<T>();
        let mut values = vec![T::default(); at.len()];
        if at.is_empty() {
            return Ok(values);
        }
        let scratch = DeviceBuffer::new(&self.stream, at.len() * size, "gathered elements")?;
        for (k, &e) in at.iter().enumerate() {
            scratch.copy_range(k * size, self, e * size, size)?;
        }
        scratch.download(&mut values)?;
        Ok(values)
    }

    /// Copies the start of the buffer into `dst` after the stream's pending work.
    pub fn download<T: Copy>(&self, dst: &mut [T]) -> Result<(), Error> {
        assert!(std::mem::size_of_val(dst) <= self.bytes, "download fits");
        self.stream.device.bind()?;
        // SAFETY: the source holds at least `dst`'s bytes; we wait before returning.
        unsafe { result::memcpy_dtoh_async(dst, self.ptr, self.stream.raw) }
            .map_err(|e| cuda_error("copying to the host", e))?;
        self.stream.synchronize()
    }
}

impl DeviceBuffer {
    /// This buffer, freed in the order of `stream` (of the same device) instead of the
    /// stream it was allocated on: for a buffer a launch on one stream wrote and another
    /// stream reads after waiting for it, so that it is freed only after that read.
    pub(crate) fn ordered_on(mut self, stream: &Arc<Stream>) -> DeviceBuffer {
        self.stream = stream.clone();
        self
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` on this stream, freed once, after the work queued on
        // the stream that may still use it.
        self.stream.device.release(|| unsafe {
            let _ = result::free_async(self.ptr, self.stream.raw);
        });
    }
}

/// A strided copy of `rows` rows of `row_bytes` bytes each, between host and device memory
/// or within the device, queued on `stream`.
pub(crate) struct RowCopy {
    /// Bytes per row.
    pub row_bytes: usize,
    /// Number of rows.
    pub rows: usize,
    /// Source: where its first row starts, and its row pitch in bytes.
    pub src: (Place, usize),
    /// Destination: where its first row starts, and its row pitch in bytes.
    pub dst: (Place, usize),
}

/// One end of a [`RowCopy`].
#[derive(Clone, Copy)]
pub(crate) enum Place {
    /// Host memory.
    Host(*const u8),
    /// Device memory.
    Device(sys::CUdeviceptr),
}

impl RowCopy {
    /// Queues the copy on `stream` and waits for it.
    ///
    /// # Safety
    /// Both ends must cover `rows` rows of `row_bytes` at their pitches; a host
    /// destination must be writable.
    pub unsafe fn run(&self, stream: &Stream) -> Result<(), Error> {
        self.queue(stream)?;
        stream.synchronize()
    }

    /// Queues the copy on `stream` without waiting for it.
    ///
    /// # Safety
    /// As [`RowCopy::run`]; besides, host memory at either end must stay valid until the
    /// stream has done the copy.
    pub unsafe fn queue(&self, stream: &Stream) -> Result<(), Error> {
        stream.device.bind()?;
        let end = |place: Place| match place {
            Place::Host(p) => (sys::CUmemorytype::CU_MEMORYTYPE_HOST, p, 0),
            Place::Device(d) => (sys::CUmemorytype::CU_MEMORYTYPE_DEVICE, std::ptr::null(), d),
        };
        let (src_type, src_host, src_dev) = end(self.src.0);
        let (dst_type, dst_host, dst_dev) = end(self.dst.0);
        let c = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: src_type,
            srcHost: src_host as *const std::ffi::c_void,
            srcDevice: src_dev,
            srcArray: std::ptr::null_mut(),
            srcPitch: self.src.1,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: dst_type,
            dstHost: dst_host as *mut std::ffi::c_void,
            dstDevice: dst_dev,
            dstArray: std::ptr::null_mut(),
            dstPitch: self.dst.1,
            WidthInBytes: self.row_bytes,
            Height: self.rows,
        };
        sys::cuMemcpy2DAsync_v2(&c, stream.raw)
            .result()
            .map_err(|e| cuda_error("copying a field", e))
    }
}

/// A copy of a box of `width` x `rows` x `planes` elements between two places of one
/// device buffer with the same pitches (e.g. a field's interior into its halo), queued
/// on `stream` without waiting.
pub(crate) struct BoxCopy {
    /// Bytes per row of the box.
    pub width_bytes: usize,
    /// Rows per plane of the box.
    pub rows: usize,
    /// Planes of the box.
    pub planes: usize,
    /// The box's first byte in the source.
    pub src: sys::CUdeviceptr,
    /// The box's first byte in the destination.
    pub dst: sys::CUdeviceptr,
    /// The buffer's row pitch in bytes.
    pub pitch: usize,
    /// The buffer's rows per plane.
    pub plane_rows: usize,
}

impl BoxCopy {
    /// Queues the copy on `stream`.
    ///
    /// # Safety
    /// Both boxes must lie inside live device memory at the given pitches.
    pub unsafe fn queue(&self, stream: &Stream) -> Result<(), Error> {
        stream.device.bind()?;
        let device = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
        let c = sys::CUDA_MEMCPY3D {
            srcXInBytes: 0,
            srcY: 0,
            srcZ: 0,
            srcLOD: 0,
            srcMemoryType: device,
            srcHost: std::ptr::null(),
            srcDevice: self.src,
            srcArray: std::ptr::null_mut(),
            reserved0: std::ptr::null_mut(),
            srcPitch: self.pitch,
            srcHeight: self.plane_rows,
            dstXInBytes: 0,
            dstY: 0,
            dstZ: 0,
            dstLOD: 0,
            dstMemoryType: device,
            dstHost: std::ptr::null_mut(),
            dstDevice: self.dst,
            dstArray: std::ptr::null_mut(),
            reserved1: std::ptr::null_mut(),
            dstPitch: self.pitch,
            dstHeight: self.plane_rows,
            WidthInBytes: self.width_bytes,
            Height: self.rows,
            Depth: self.planes,
        };
        sys::cuMemcpy3DAsync_v2(&c, stream.raw)
            .result()
            .map_err(|e| cuda_error("copying a field's periodic images into its halo", e))
    }
}
