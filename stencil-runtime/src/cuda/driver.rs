//! The CUDA driver, loaded at run time: devices, their primary contexts, streams, and the
//! translation of driver errors into typed [`Error`]s.

use crate::cuda::module::ModuleCache;
use crate::cuda::trial::Trials;
use crate::cuda::tune::TuneCache;
use crate::Error;
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

/// The driver's description of a failure, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS (an illegal
/// memory access was encountered)`.
pub(crate) fn describe(e: DriverError) -> String {
    let name = e
        .error_name()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// A driver failure while doing `op`.
pub(crate) fn cuda_error(op: impl Into<String>, e: DriverError) -> Error {
    Error::Cuda {
        op: op.into(),
        cause: describe(e),
    }
}

/// Whether the driver library can be loaded (without panicking when it cannot).
fn driver_present() -> bool {
    // SAFETY: probing for the library has no preconditions; cudarc panics inside when the
    // library is missing on some systems, which the unwind guard turns into `false`.
    std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// One GPU: its primary context and what is cached per device (loaded modules, tuned
/// launch shapes). Shared by every backend value that uses the device.
pub(crate) struct Device {
    /// The driver's ordinal.
    pub ordinal: usize,
    /// The device's name, e.g. `NVIDIA H200`.
    pub name: String,
    /// How many threads the device holds at once (multiprocessors times threads per
    /// multiprocessor): a launch with fewer points than this cannot fill it.
    pub resident_threads: usize,
    /// Whether the device has programmatic dependent launch (compute capability 9.0 and
    /// later): a kernel may start launching while the one before it on the stream runs.
    pub dependent_launch: bool,
    /// The architecture: compute capability times ten (`90` for an H100 or H200), which
    /// picks the code assembled ahead of time a kernel may carry ([`crate::cuda::Sass`]).
    pub arch: u32,
    ctx: sys::CUcontext,
    /// PTX modules loaded on this device.
    pub modules: Mutex<ModuleCache>,
    /// Launch shapes found by tuning (and read from the disk cache).
    pub tuned: Mutex<TuneCache>,
    /// Launch-shape trials under way.
    pub trials: Mutex<Trials>,
    default_stream: OnceLock<Arc<Stream>>,
    /// Page-locked slots for deferred reductions' values, free for any stream's reuse
    /// (kept for the life of the process, like the context).
    pub reduction_slots: Mutex<Vec<crate::cuda::deferred::Slot>>,
}

// SAFETY: a CUDA context may be used from any thread once made current there; `bind`
// does that before every driver call. The caches are behind mutexes.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CUDA device {} ({})", self.ordinal, self.name)
    }
}

static DEVICES: OnceLock<Mutex<HashMap<usize, Arc<Device>>>> = OnceLock::new();

/// Device `ordinal`, set up on first use (driver initialised, primary context retained).
pub(crate) fn device(ordinal: usize) -> Result<Arc<Device>, Error> {
    let registry = DEVICES.get_or_init(|| Mutex::new(HashMap::new()));
    let mut devices = registry.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = devices.get(&ordinal) {
        return Ok(d.clone());
    }
    if !driver_present() {
        return Err(Error::NoDriver(
            "the CUDA driver library (libcuda.so) was not found".into(),
        ));
    }
    result::init().map_err(|e| Error::NoDriver(format!("cuInit failed: {}", describe(e))))?;
    let count = result::device::get_count().map_err(|e| cuda_error("counting devices", e))?;
    if ordinal >= count.max(0) as usize {
        return Err(Error::NoDevice {
            ordinal,
            count: count.max(0) as usize,
        });
    }
    let dev =
        result::device::get(ordinal as i32).map_err(|e| cuda_error("opening the device", e))?;
    let name = result::device::get_name(dev).map_err(|e| cuda_error("reading its name", e))?;
    let attribute = |a| {
        // SAFETY: `dev` came from `result::device::get`.
        unsafe { result::device::get_attribute(dev, a) }
            .map_err(|e| cuda_error("reading its properties", e))
            .map(|v| v.max(1) as usize)
    };
    let resident_threads =
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?
            * attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )?;
    let major = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let dependent_launch = major >= 9;
    // SAFETY: as above (the minor version may be 0, which `attribute` would raise to 1).
    let minor = unsafe {
        result::device::get_attribute(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        )
    }
    .map_err(|e| cuda_error("reading its properties", e))?;
    let arch = (major * 10 + minor.clamp(0, 9) as usize) as u32;
    // SAFETY: `dev` is a valid device handle; the primary context is retained for the
    // rest of the process.
    let ctx = unsafe { result::primary_ctx::retain(dev) }
        .map_err(|e| cuda_error("creating the context", e))?;
    keep_freed_memory(dev)?;
    let d = Arc::new(Device {
        ordinal,
        name,
        resident_threads,
        dependent_launch,
        arch,
        ctx,
        modules: Mutex::new(ModuleCache::default()),
        tuned: Mutex::new(TuneCache::default()),
        trials: Mutex::new(Trials::default()),
        default_stream: OnceLock::new(),
        reduction_slots: Mutex::new(Vec::new()),
    });
    devices.insert(ordinal, d.clone());
    warm_up_jit(d.clone());
    Ok(d)
}

/// A module with one empty entry, for [`warm_up_jit`].
const EMPTY_MODULE: &str = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry stencil_warm_up()\n{\n\tret;\n}\n\0";

/// Loads, in a thread of its own, an empty PTX module on `device` and then the kernels that
/// finish every reduction (`partials.rs`): the driver loads and sets up its PTX compiler on
/// the first module a process loads (about 0.1 s on an H100), and the first reduction
/// needs its finishing pass compiled; both then overlap what the program does before its
/// first launch (allocating and filling its fields) instead of adding to it. Best effort:
/// a failure here only leaves that cost to the first launch.
fn warm_up_jit(device: Arc<Device>) {
    let spawned = std::thread::Builder::new().spawn(move || {
        if device.bind().is_err() {
            return;
        }
        if crate::cuda::launch::final_passes_have_sass(&device) {
            // Built with SASS: no compiler to set up, and a compile here would hold the
            // driver's module lock against the program's first loads.
            crate::cuda::launch::load_final_passes(&device);
            return;
        }
        let mut module = std::ptr::null_mut();
        // SAFETY: a NUL-terminated PTX image; the module is unloaded at once.
        unsafe {
            if sys::cuModuleLoadData(
                &mut module,
                EMPTY_MODULE.as_ptr() as *const std::ffi::c_void,
            ) == sys::CUresult::CUDA_SUCCESS
            {
                let _ = sys::cuModuleUnload(module);
            }
        }
        crate::cuda::launch::load_final_passes(&device);
    });
    // A thread that cannot start leaves the work to the first launches.
    drop(spawned);
}

/// Lets the device's memory pool (every field and buffer comes from it, stream-ordered)
/// keep freed memory up to a quarter of the device's memory instead of returning it to
/// the system at every wait: a solver that allocates its grids for each solve then
/// reuses them at no cost. (The pool's default keeps nothing.) Needs the primary
/// context current.
fn keep_freed_memory(dev: sys::CUdevice) -> Result<(), Error> {
    // SAFETY: `dev` is a valid device handle; the pool handle comes from the driver and
    // the attribute is a 64-bit value, as the driver expects.
    unsafe {
        let total = result::device::total_mem(dev)
            .map_err(|e| cuda_error("reading the device's memory size", e))?;
        let mut pool = std::mem::MaybeUninit::uninit();
        sys::cuDeviceGetDefaultMemPool(pool.as_mut_ptr(), dev)
            .result()
            .map_err(|e| cuda_error("finding the device's memory pool", e))?;
        let mut keep = (total / 4) as u64;
        sys::cuMemPoolSetAttribute(
            pool.assume_init(),
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut keep as *mut u64 as *mut std::ffi::c_void,
        )
        .result()
        .map_err(|e| cuda_error("setting the memory pool's release threshold", e))
    }
}

impl Device {
    /// Makes this device's context current on the calling thread.
    pub fn bind(&self) -> Result<(), Error> {
        // SAFETY: the context was retained in `device` and is never released.
        unsafe { result::ctx::set_current(self.ctx) }
            .map_err(|e| cuda_error("making the context current", e))
    }

    /// Runs `free`, which destroys driver objects of this device (in a `Drop`), with the
    /// device's context current; skips it where the context cannot be made current, as a
    /// drop cannot report the error.
    pub(crate) fn release(&self, free: impl FnOnce()) {
        if self.bind().is_ok() {
            free();
        }
    }

    /// The stream every backend of this device uses unless given another.
    pub fn default_stream(self: &Arc<Self>) -> Result<Arc<Stream>, Error> {
        if let Some(s) = self.default_stream.get() {
            return Ok(s.clone());
        }
        let s = Stream::new(self.clone())?;
        Ok(self.default_stream.get_or_init(|| s).clone())
    }

    /// Waits for all work on the device.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.bind()?;
        result::ctx::synchronize().map_err(|e| cuda_error("waiting for the device", e))
    }
}

/// A CUDA stream: work on it runs in order, asynchronously to the host.
pub(crate) struct Stream {
    /// The device it belongs to.
    pub device: Arc<Device>,
    /// The driver's handle.
    pub raw: sys::CUstream,
    /// Whether launches are being recorded into a graph (see [`crate::cuda::Graph`]).
    pub capturing: AtomicBool,
}

// SAFETY: stream handles may be used from any thread of the process.
unsafe impl Send for Stream {}
// SAFETY: as above.
unsafe impl Sync for Stream {}

impl Stream {
    /// A new stream on `device` that does not synchronise with the legacy default stream.
    pub fn new(device: Arc<Device>) -> Result<Arc<Stream>, Error> {
        device.bind()?;
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(|e| cuda_error("creating a stream", e))?;
        Ok(Stream::owning(device, raw))
    }

    /// The stream `raw` of `device`, destroyed when dropped.
    fn owning(device: Arc<Device>, raw: sys::CUstream) -> Arc<Stream> {
        Arc::new(Stream {
            device,
            raw,
            capturing: AtomicBool::new(false),
        })
    }

    /// A new stream on `device` as [`Stream::new`] makes, of the device's highest
    /// priority: when thread blocks of several streams wait for a multiprocessor, this
    /// stream's go first (for short work, such as halo messages, that should not queue
    /// behind a large kernel's blocks).
    pub fn new_urgent(device: Arc<Device>) -> Result<Arc<Stream>, Error> {
        device.bind()?;
        let (mut least, mut greatest) = (0, 0);
        let mut raw = std::ptr::null_mut();
        // SAFETY: the context is current; both calls write only through the pointers
        // given, and the stream is destroyed in `drop`.
        unsafe {
            sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest)
                .result()
                .map_err(|e| cuda_error("reading the stream priorities", e))?;
            let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
            sys::cuStreamCreateWithPriority(&mut raw, flags, greatest)
                .result()
                .map_err(|e| cuda_error("creating a stream", e))?;
        }
        Ok(Stream::owning(device, raw))
    }

    /// Waits until all work on the stream is done; a kernel's failure surfaces here.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.device.bind()?;
        // SAFETY: the stream is alive (we own it).
        unsafe { result::stream::synchronize(self.raw) }
            .map_err(|e| cuda_error("waiting for the stream", e))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once; pending work still completes.
        self.device.release(|| unsafe {
            let _ = result::stream::destroy(self.raw);
        });
    }
}
