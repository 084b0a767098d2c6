//! Reals held on a backend: [`Value`] (what a kernel's `Value<T>` parameter reads),
//! [`KeptReductions`] (a launch's reductions left on the device as values instead of read
//! back), and [`ValueReader`] (values read back later, without waiting for the work queued
//! after them).
//!
//! Together they let a solver decide on the device: a reduction (the CFL maximum) kept as
//! a value, a one-point kernel that turns it into a time step, and later launches that read
//! the step as a `Value<T>` parameter, with no read-back in between. On the CPU, where a
//! launch returns its reductions at once, the same code runs with host values.

use crate::cuda::readback::Readback;
use crate::cuda::DeviceBuffer;
use crate::{Backend, Error, Field, Precision, Real};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One real of type `T` held where a backend keeps its fields (host memory, or a device's
/// memory): a kernel parameter `x: Value<T>` reads it when the kernel starts, so an earlier
/// launch on the same stream may have written it (as a kept reduction, or through
/// [`Value::field_mut`] as a one-point field) without the host reading it.
#[derive(Debug)]
pub struct Value<T: Real> {
    /// A 1D field of one point and no halo.
    field: Field<T>,
}

impl<T: Real> Value<T> {
    /// `v` held on `backend`.
    pub fn new(backend: &Backend, v: T) -> Result<Value<T>, Error> {
        let mut value = Value {
            field: Field::zeros_on(backend, &[1], 0)?,
        };
        value.set(v)?;
        Ok(value)
    }

    /// The value (waits for the work queued before on a device).
    pub fn get(&self) -> Result<T, Error> {
        Ok(self.field.interior()?[0])
    }

    /// Sets the value (on a device, after the work queued before it has run: the copy
    /// waits for the stream).
    pub fn set(&mut self, v: T) -> Result<(), Error> {
        let host = Field::from_fn(&[1], 0, |_| v);
        self.field.copy_from(&host)
    }

    /// The value as a one-point 1D field without halo: what a kernel over the domain
    /// `[1]` reads as `In<T>`.
    pub fn field(&self) -> &Field<T> {
        &self.field
    }

    /// The value as a one-point field that a kernel over the domain `[1]` writes
    /// (`Out<T>` or `InOut<T>`).
    pub fn field_mut(&mut self) -> &mut Field<T> {
        &mut self.field
    }

    /// Where the value lives, in words.
    pub fn location(&self) -> String {
        self.field.location()
    }

    /// For generated CPU launchers: the value, which must be in host memory.
    #[doc(hidden)]
    pub fn host_value(&self, kernel: &str, param: &str) -> Result<T, Error> {
        if !self.field.is_host() {
            return Err(Error::Residency {
                kernel: kernel.to_string(),
                field: param.to_string(),
                have: self.location(),
                want: "host memory".into(),
            });
        }
        Ok(self.field.as_slice()?[0])
    }

    /// For a value on a device: the device ordinal and the value's address.
    pub(crate) fn device_address(&self) -> Option<(usize, u64)> {
        self.field
            .device_args()
            .map(|(ordinal, ptr, _)| (ordinal, ptr))
    }

    /// A value held in `buf`, whose first element is the value.
    fn from_device(buf: DeviceBuffer) -> Result<Value<T>, Error> {
        Ok(Value {
            field: Field::from_device_buffer(buf, &[1], 0)?,
        })
    }
}

/// Where launches leave their reductions instead of reading them back: a launch on a
/// backend [`Backend::keeping_reductions`] queues the passes that combine its reductions
/// and leaves each final value on the device, in launch order; [`KeptReductions::take`]
/// hands them out as [`Value`]s. Nothing waits for the device. (On the CPU a launch
/// returns its reductions at once, and `take` holds the returned value instead.)
#[derive(Clone, Default)]
pub struct KeptReductions(Arc<Mutex<VecDeque<(DeviceBuffer, Precision)>>>);

impl std::fmt::Debug for KeptReductions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeptReductions {{ waiting: {} }}", self.lock().len())
    }
}

impl KeptReductions {
    /// An empty store.
    pub fn new() -> KeptReductions {
        KeptReductions::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(DeviceBuffer, Precision)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps a launch's final value (one element at the start of `buf`).
    pub(crate) fn keep(&self, buf: DeviceBuffer, p: Precision) {
        self.lock().push_back((buf, p));
    }

    /// The oldest kept value, as a value on its device (freed in the order of
    /// `backend`'s stream, which must have waited for the stream of the launch that left
    /// it); if none is kept (the launch ran on the CPU and returned it), `returned` held
    /// on `backend`.
    pub fn take<T: Real>(&self, backend: &Backend, returned: T) -> Result<Value<T>, Error> {
        let Some((buf, p)) = self.lock().pop_front() else {
            return Value::new(backend, returned);
        };
        if p != T::PRECISION {
            return Err(Error::InvalidField(format!(
                "a kept reduction of precision {p:?} taken as {:?}: take each value in the type its kernel reduces in",
                T::PRECISION
            )));
        }
        // Freed in the order of the stream that takes it: a launch on another stream
        // may have left it, and the taker's stream reads it after waiting for that one.
        let buf = match backend {
            Backend::Cuda(c) => buf.ordered_on(c.stream()),
            Backend::Cpu => buf,
        };
        Value::from_device(buf)
    }
}

impl Backend {
    /// This backend with launches leaving their reductions in `kept` (see
    /// [`KeptReductions`]) instead of reading them back; a launch then returns NaN for
    /// each. The CPU computes reductions at once and returns them as always.
    pub fn keeping_reductions(&self, kept: &KeptReductions) -> Backend {
        match self {
            Backend::Cpu => Backend::Cpu,
            Backend::Cuda(c) => Backend::Cuda(c.clone().with_kept_reductions(kept)),
        }
    }
}

/// Values read back later, oldest first: [`ValueReader::start`] queues a copy of a value
/// into page-locked memory and returns at once; [`ValueReader::finish`] waits for that
/// copy only. A solver can so learn, one step late, what the device decided, without
/// draining the work queued since. Page-locked slots are reused.
#[derive(Debug, Default)]
pub struct ValueReader {
    pending: VecDeque<Pending>,
    free: Vec<Readback>,
}

#[derive(Debug)]
enum Pending {
    Ready(f64),
    Copying(Readback, Precision),
}

impl ValueReader {
    /// A reader with nothing started.
    pub fn new() -> ValueReader {
        ValueReader::default()
    }

    /// Starts reading `value` as it will be once the work queued so far has run.
    pub fn start<T: Real>(&mut self, value: &Value<T>) -> Result<(), Error> {
        let Some(buf) = value.field.device_buffer() else {
            self.pending
                .push_back(Pending::Ready(value.field.as_slice()?[0].as_f64()));
            return Ok(());
        };
        buf.stream.device.bind()?;
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => Readback::new(8)?,
        };
        let bytes = std::mem::size_of::<T>();
        // SAFETY: the slot is not read before `finish` waits for its event, and is reused
        // only after that; the source holds the value at its start.
        let queued = unsafe { slot.queue(&buf.stream, 0, buf, bytes) }
            .and_then(|()| slot.record(&buf.stream));
        if let Err(e) = queued {
            // A copy may have been queued: let it land before the slot is freed.
            let _ = buf.stream.synchronize();
            return Err(e);
        }
        self.pending.push_back(Pending::Copying(slot, T::PRECISION));
        Ok(())
    }

    /// The oldest started value, waiting for its copy; `None` if none was started.
    pub fn finish(&mut self) -> Result<Option<f64>, Error> {
        match self.pending.pop_front() {
            None => Ok(None),
            Some(Pending::Ready(v)) => Ok(Some(v)),
            Some(Pending::Copying(slot, p)) => {
                slot.wait()?;
                let v = match p {
                    Precision::F32 => slot.read::<f32>(0) as f64,
                    Precision::F64 => slot.read::<f64>(0),
                };
                self.free.push(slot);
                Ok(Some(v))
            }
        }
    }

    /// Values started and not yet finished.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

impl Drop for ValueReader {
    fn drop(&mut self) {
        // Copies still on their way must land before their memory is freed.
        for p in self.pending.drain(..) {
            if let Pending::Copying(slot, _) = p {
                let _ = slot.wait();
            }
        }
    }
}
