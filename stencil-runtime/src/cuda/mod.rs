//! The CUDA backend: kernels' embedded PTX loaded through the driver API (cudarc, the
//! driver library opened at run time, so no CUDA toolkit is needed to build or run), fields
//! in device memory, launches on streams, reductions finished on the device, launch shapes
//! tuned per kernel and device and cached on disk, and timing with device events.
//!
//! A [`Cuda`] value is a device plus a stream. Cloning it shares both; [`Cuda::new_stream`]
//! gives a second stream on the same device for work that may overlap. Launches are
//! asynchronous: a launch returns once queued, except when the kernel has reductions (their
//! values are copied back, which waits). Copies between host and device wait for the
//! stream's earlier work. Errors of a kernel that fails while running surface at the next
//! wait; set `STENCIL_CUDA_SYNC=1` (or [`Cuda::with_checked_launches`]) to wait after every
//! launch and have each error name its kernel.

mod deferred;
mod driver;
mod graph;
mod launch;
pub(crate) mod memory;
mod module;
mod nccl;
mod partials;
pub(crate) mod readback;
pub(crate) mod texture;
mod timer;
mod trial;
mod tune;

pub use graph::Graph;
pub use launch::{
    block_flags_code, halo_exchange_code, halo_weighted_code, pack_points_code, CudaLaunch,
    KernelCode, Ptx, Reduce, Sass, Staging, Tiles, DEFAULT_SHARED_BYTES,
};
pub(crate) use launch::{
    queue_block_flags, queue_halo_exchange, queue_points, HaloLaunch, PointLaunch, HALO_FIELDS,
};
pub use module::{LOG_LOADS_ENV, MAX_REGISTERS_ENV, PTX_ONLY_ENV};
pub use nccl::{Nccl, NcclId};
pub use stencil_ptx::{for_dependent_launch, only_entry, GRID_DEPENDENCY_POINT};
pub use timer::Timer;
pub use trial::TrialMark;
pub use tune::{LaunchShape, Tuning, TUNE_CACHE_ENV, TUNE_ENV};

pub(crate) use memory::{BoxCopy, DeviceBuffer, Place, RowCopy};

use crate::Error;
pub(crate) use driver::Stream;
use std::sync::Arc;

/// Environment variable: `1` makes every launch wait for its kernel and report its errors.
pub const SYNC_ENV: &str = "STENCIL_CUDA_SYNC";

/// Environment variable: `off` launches every kernel only after the one before it has
/// finished, also on devices with programmatic dependent launch.
pub const DEPENDENT_LAUNCH_ENV: &str = "STENCIL_DEPENDENT_LAUNCH";

/// A CUDA device and a stream on it: where [`crate::Backend::Cuda`] runs kernels.
#[derive(Clone)]
pub struct Cuda {
    stream: Arc<Stream>,
    tuning: Tuning,
    checked: bool,
    /// Whether reductions' values are left unread (see [`Cuda::with_unread_reductions`]).
    unread_reductions: bool,
    /// Whether kernels launch as programmatic dependents (see
    /// [`Cuda::with_dependent_launches`]).
    dependent_launches: bool,
    /// Where launches leave their reductions' values to be read later (see
    /// [`Cuda::with_deferred_reductions`]); `None`: they are read at once.
    deferred: Option<deferred::DeferredQueue>,
    /// Where launches leave their reductions on the device (see
    /// [`Cuda::with_kept_reductions`]).
    kept: Option<crate::KeptReductions>,
}

impl std::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Cuda {{ device: {}, name: {:?}, tuning: {:?} }}",
            self.ordinal(),
            self.device_name(),
            self.tuning
        )
    }
}

impl PartialEq for Cuda {
    /// Two values are equal when they use the same stream.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.stream, &other.stream)
    }
}

impl Cuda {
    /// Device `ordinal` (0 is the first GPU) on its default stream. Fails with
    /// [`Error::NoDriver`] or [`Error::NoDevice`] when there is none.
    ///
    /// Tuning follows `STENCIL_TUNE` ([`Tuning::from_env`]); checked launches follow
    /// `STENCIL_CUDA_SYNC`.
    pub fn new(ordinal: usize) -> Result<Cuda, Error> {
        let device = driver::device(ordinal)?;
        Ok(Cuda {
            stream: device.default_stream()?,
            tuning: Tuning::from_env()?,
            checked: std::env::var(SYNC_ENV).is_ok_and(|v| v == "1"),
            unread_reductions: false,
            dependent_launches: std::env::var(DEPENDENT_LAUNCH_ENV).map_or(true, |v| v != "off"),
            deferred: None,
            kept: None,
        })
    }

    /// The same device on a new stream: work queued there may run concurrently with work on
    /// `self`'s stream. Order them with [`Cuda::synchronize`].
    pub fn new_stream(&self) -> Result<Cuda, Error> {
        Ok(Cuda {
            stream: Stream::new(self.stream.device.clone())?,
            ..self.clone()
        })
    }

    /// [`Cuda::new_stream`], of the device's highest priority: its thread blocks go before
    /// those of other streams waiting for a multiprocessor (for halo messages that should
    /// travel while a large kernel runs).
    pub fn new_urgent_stream(&self) -> Result<Cuda, Error> {
        Ok(Cuda {
            stream: Stream::new_urgent(self.stream.device.clone())?,
            ..self.clone()
        })
    }

    /// This backend's settings (tuning, checks, kept or unread reductions) on `other`'s
    /// stream (a stream of the same device): work launched through it queues behind
    /// `other`'s. Deferred reductions ([`Cuda::with_deferred_reductions`]) are read at
    /// once instead: their queue copies on its own stream. Not for work recorded into a
    /// graph: a capture sees only the stream it was begun on.
    pub fn on_stream_of(&self, other: &Cuda) -> Cuda {
        debug_assert_eq!(
            self.ordinal(),
            other.ordinal(),
            "a backend on the stream of another device"
        );
        Cuda {
            stream: other.stream.clone(),
            deferred: None,
            ..self.clone()
        }
    }

    /// Makes the work queued on this backend's stream from now on wait for the work
    /// queued so far on `other`'s (a stream of the same device, [`Cuda::new_stream`]),
    /// without a wait on the host. Nothing to do where both are one stream.
    pub fn wait_for(&self, other: &Cuda) -> Result<(), Error> {
        if Arc::ptr_eq(&self.stream, &other.stream) {
            return Ok(());
        }
        use cudarc::driver::{result, sys};
        self.bind()?;
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(|e| driver::cuda_error("creating an event", e))?;
        // SAFETY: the event and both streams are alive; the driver frees the event once
        // the wait no longer needs it.
        let queued = unsafe {
            result::event::record(event, other.stream.raw).and_then(|()| {
                result::stream::wait_event(
                    self.stream.raw,
                    event,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
            })
        };
        // SAFETY: created above; destroying a recorded event is deferred by the driver.
        unsafe {
            let _ = result::event::destroy(event);
        }
        queued.map_err(|e| driver::cuda_error("ordering two streams", e))
    }

    /// This backend with a different launch-shape policy.
    pub fn with_tuning(mut self, tuning: Tuning) -> Cuda {
        self.tuning = tuning;
        self
    }

    /// The launch-shape policy.
    pub fn tuning(&self) -> Tuning {
        self.tuning
    }

    /// This backend, waiting after every launch (`true`) so that a kernel's failure is
    /// reported by its own launch, with its name.
    pub fn with_checked_launches(mut self, checked: bool) -> Cuda {
        self.checked = checked;
        self
    }

    /// This backend, running kernels with reductions without reading their values back
    /// (`true`): such a launch queues like any other, does not wait, may be recorded into
    /// a [`Graph`], and returns NaN for each reduction. For work where only a kernel's
    /// field outputs matter, e.g. a residual whose norm is not needed every time.
    pub fn with_unread_reductions(mut self, unread: bool) -> Cuda {
        self.unread_reductions = unread;
        self
    }

    /// Whether a launch's reductions come back as its return value: not left unread,
    /// deferred or kept on the device (where a launch returns NaN for each).
    pub fn returns_reductions(&self) -> bool {
        !self.unread_reductions && self.deferred.is_none() && self.kept.is_none()
    }

    /// This backend leaving launches' reductions on the device, in `kept` (see
    /// [`crate::KeptReductions`]): such a launch queues like any other, does not wait, may
    /// be recorded into a [`Graph`], and returns NaN for each reduction.
    pub fn with_kept_reductions(mut self, kept: &crate::KeptReductions) -> Cuda {
        self.kept = Some(kept.clone());
        self
    }

    /// This backend launching kernels as programmatic dependents (`true`, the default
    /// unless `STENCIL_DEPENDENT_LAUNCH=off`) where the device has that (compute
    /// capability 9.0 and later): a kernel's thread blocks are launched while the kernel
    /// before it on the stream finishes, and wait for its results at their start. That
    /// hides most of the launch latency in chains of short kernels (a multigrid cycle's
    /// coarse levels). Results are the same either way.
    pub fn with_dependent_launches(mut self, on: bool) -> Cuda {
        self.dependent_launches = on;
        self
    }

    /// Whether kernels launch as programmatic dependents where the device allows it.
    pub fn dependent_launches(&self) -> bool {
        self.dependent_launches
    }

    /// This backend with deferred reductions (`true`): a launch with reductions queues like
    /// any other and returns NaN for each value; the values stay on the device and
    /// [`Cuda::read_deferred`] reads them later, launch by launch in order, waiting only for
    /// the launch that computed them. The host can then queue further work before it
    /// looks at a value (an iteration checking its residual one step late never leaves
    /// the device idle). The backend's clones share one queue of values; `false` drops it.
    pub fn with_deferred_reductions(mut self, on: bool) -> Cuda {
        self.deferred = on.then(|| deferred::DeferredQueue::new(self.stream.clone()));
        self
    }

    /// The reductions' values of the oldest launch not yet read on a backend with
    /// [`Cuda::with_deferred_reductions`], waiting until they are computed (but not for
    /// work queued after them); `None` when no values wait.
    pub fn read_deferred(&self) -> Result<Option<Vec<f64>>, Error> {
        match &self.deferred {
            Some(q) => q.pop(),
            None => Ok(None),
        }
    }

    /// Forgets every deferred value not yet read.
    pub fn discard_deferred(&self) {
        if let Some(q) = &self.deferred {
            q.clear();
        }
    }

    /// Whether reductions are left unread ([`Cuda::with_unread_reductions`]).
    pub fn reductions_unread(&self) -> bool {
        self.unread_reductions
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.stream.device.ordinal
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn device_name(&self) -> &str {
        &self.stream.device.name
    }

    /// The device's architecture: compute capability times ten (`90` for an H100 or H200),
    /// as [`Sass::arch`] names it.
    pub fn arch(&self) -> u32 {
        self.stream.device.arch
    }

    /// Waits for all work queued on this stream; the error of a failed kernel surfaces here.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.stream.synchronize()?;
        self.save_trial_launches()
    }

    /// Waits for all work on the device (every stream).
    pub fn synchronize_device(&self) -> Result<(), Error> {
        self.stream.device.synchronize()
    }

    /// A timer that measures work on this stream with device events.
    pub fn timer(&self) -> Result<Timer, Error> {
        Timer::new(self.stream.clone())
    }

    /// Makes the device's context current on this thread, for code that calls the driver
    /// directly (e.g. a benchmark launching hand-written kernels beside generated ones).
    pub fn bind(&self) -> Result<(), Error> {
        self.stream.device.bind()
    }

    /// The raw driver handle of the stream, for code that calls the driver directly.
    pub fn raw_stream(&self) -> cudarc::driver::sys::CUstream {
        self.stream.raw
    }

    pub(crate) fn stream(&self) -> &Arc<Stream> {
        &self.stream
    }
}
