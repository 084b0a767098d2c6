//! [`Nccl`]: NCCL between the devices of several processes (one device each), on a
//! backend's stream: point packs sent and received without the host.
//!
//! The library (`libnccl.so.2`) is opened at run time, like the driver, so a program
//! builds and runs without it until it asks for a communicator.

use super::Cuda;
use crate::blocks::PointPack;
use crate::field::PlaneExchange;
use crate::{Backend, Error, Field, Precision, Real, Value};
use cudarc::nccl::{result, sys};
use std::ops::Range;
use std::sync::Mutex;

/// The bytes of an NCCL unique id: made on one rank ([`Nccl::unique_id`]), sent to the
/// others (by MPI), and passed to [`Nccl::new`] on every rank.
pub type NcclId = [u8; 128];

/// A communicator of NCCL: this process's device among the devices of a run's ranks,
/// queuing sends and receives on a stream the caller names, so that they follow the
/// launches queued there before them and precede those after, with no wait on the host.
pub struct Nccl {
    comm: Mutex<Comm>,
    cuda: Cuda,
    rank: usize,
    size: usize,
}

/// The communicator's handle.
struct Comm(sys::ncclComm_t);

// SAFETY: NCCL communicators may be used from any thread, one call at a time (the
// `Mutex` around it).
unsafe impl Send for Comm {}

impl std::fmt::Debug for Nccl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Nccl {{ rank: {} of {}, device: {} }}",
            self.rank,
            self.size,
            self.cuda.ordinal()
        )
    }
}

/// An error for an NCCL call.
fn nccl_error(op: &str, e: result::NcclError) -> Error {
    Error::Cuda {
        op: format!("NCCL: {op}"),
        cause: describe(e.0),
    }
}

/// NCCL's text for a result.
fn describe(r: sys::ncclResult_t) -> String {
    // SAFETY: NCCL returns a static C string for every result.
    let text = unsafe { std::ffi::CStr::from_ptr(sys::ncclGetErrorString(r)) };
    format!("{} ({r:?})", text.to_string_lossy())
}

/// Why NCCL could not be opened, and what to do.
const NO_NCCL: &str = "not found: install NCCL (Debian/Ubuntu: libnccl2) or add its folder to \
     LD_LIBRARY_PATH, or run the ranks on the CPU";

impl Nccl {
    /// Whether the NCCL library can be opened here; an error saying how to get it
    /// otherwise.
    pub fn available() -> Result<(), Error> {
        // SAFETY: opening a shared library by name.
        if unsafe { sys::is_culib_present() } {
            Ok(())
        } else {
            Err(Error::Cuda {
                op: "opening NCCL (libnccl.so.2), which ranks on devices send halos through".into(),
                cause: NO_NCCL.into(),
            })
        }
    }

    /// A new unique id, made on one rank and sent to every other.
    pub fn unique_id() -> Result<NcclId, Error> {
        Nccl::available()?;
        let id = result::get_uniqueid().map_err(|e| nccl_error("making a unique id", e))?;
        Ok(id.internal.map(|c| c as u8))
    }

    /// Rank `rank` of `size`, on `cuda`'s device, joining the communicator of
    /// `id`. Every rank must call it (it waits for all of them).
    pub fn new(cuda: &Cuda, id: &NcclId, rank: usize, size: usize) -> Result<Nccl, Error> {
        Nccl::available()?;
        cuda.bind()?;
        let id = sys::ncclUniqueId {
            internal: id.map(|b| b as ::core::ffi::c_char),
        };
        let mut comm = std::mem::MaybeUninit::uninit();
        // SAFETY: `comm` is written by the call; the id came from `unique_id`.
        let comm = unsafe {
            result::comm_init_rank(comm.as_mut_ptr(), size as i32, id, rank as i32)
                .map_err(|e| nccl_error("joining the ranks' communicator", e))?;
            comm.assume_init()
        };
        Ok(Nccl {
            comm: Mutex::new(Comm(comm)),
            cuda: cuda.clone(),
            rank,
            size,
        })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The backend (device) the communicator was made on.
    pub fn cuda(&self) -> &Cuda {
        &self.cuda
    }

    /// Queues on `on`'s stream (of this communicator's device), as one group, the sends
    /// of `send`'s buffer ranges and the receives into `receive`'s: for each
    /// `(rank, points)` of `sends` and each field of the pack, the values of those points
    /// (a range of `0..send.count()`), and likewise for `receives`. Messages between two
    /// ranks pair up in the order they are listed, so both sides must list their ranges in
    /// the same order.
    pub fn exchange<T: Real>(
        &self,
        on: &Cuda,
        send: &PointPack<T>,
        sends: &[(usize, Range<usize>)],
        receive: &mut PointPack<T>,
        receives: &[(usize, Range<usize>)],
    ) -> Result<(), Error> {
        // The stream `on` and both packs on this communicator's device: a communicator
        // outlives the runs (and streams) of a program, and a caller may overlap the
        // messages with other work.
        let on_device = |p: &PointPack<T>| match p.backend() {
            Backend::Cuda(c) if c.ordinal() == on.ordinal() => p.device_values(),
            _ => None,
        };
        let (Some(from), Some(into)) = (on_device(send), on_device(receive)) else {
            return Err(self.elsewhere("point packs"));
        };
        if sends.iter().any(|(_, r)| r.end > send.count())
            || receives.iter().any(|(_, r)| r.end > receive.count())
        {
            return Err(Error::InvalidField(
                "an NCCL message's points lie past its pack".into(),
            ));
        }
        let size = std::mem::size_of::<T>() as u64;
        let messages = |base: u64, fields: usize, count: usize, list: &[(usize, Range<usize>)]| {
            let mut out = Vec::with_capacity(fields * list.len());
            for f in 0..fields {
                for (rank, r) in list {
                    out.push((*rank, base + (f * count + r.start) as u64 * size, r.len()));
                }
            }
            out
        };
        let sent = messages(from, send.fields(), send.count(), sends);
        let received = messages(into, receive.fields(), receive.count(), receives);
        // SAFETY: every range lies inside its pack's device buffer (checked above).
        unsafe { self.group::<T>(on, &sent, &received) }
    }

    /// Queues on `on`'s stream, as one group, the sends and receives of `exchange`, of
    /// fields on `on`'s device: whole planes, halo columns and row padding included.
    pub fn exchange_planes<T: Real>(
        &self,
        on: &Cuda,
        exchange: PlaneExchange<'_, T>,
    ) -> Result<(), Error> {
        let (send, receive) = exchange.fields.ends();
        let sent = self.plane_messages(on, send, exchange.sends)?;
        let received = self.plane_messages(on, receive, exchange.receives)?;
        // SAFETY: every range lies inside its field's storage (`plane_storage` checks).
        unsafe { self.group::<T>(on, &sent, &received) }
    }

    /// The messages `(rank, address, values)` of planes `list` of `field`, a field on
    /// `on`'s device.
    fn plane_messages<T: Real>(
        &self,
        on: &Cuda,
        field: &Field<T>,
        list: &[(usize, Range<isize>)],
    ) -> Result<Vec<(usize, u64, usize)>, Error> {
        if field.device_args().map(|a| a.0) != Some(on.ordinal()) {
            return Err(self.elsewhere("fields"));
        }
        list.iter()
            .map(|(rank, planes)| {
                let at = field.plane_storage(planes.clone())?;
                let address = field.device_address(at.start).expect("on the device");
                Ok((*rank, address, at.len()))
            })
            .collect()
    }

    /// Queues on `on`'s stream the largest of every rank's `value` into `value` (an
    /// all-reduce of one real, without the host): a value decided on each device, such as
    /// a CFL maximum kept there, made the same on all. Every rank must call it at the same
    /// point, after the same NCCL calls.
    pub fn all_reduce_max<T: Real>(&self, on: &Cuda, value: &mut Value<T>) -> Result<(), Error> {
        if on.ordinal() != self.cuda.ordinal() {
            return Err(self.elsewhere("a stream"));
        }
        let Some((ordinal, at)) = value.device_address() else {
            return Err(self.elsewhere("a host value"));
        };
        if ordinal != self.cuda.ordinal() {
            return Err(self.elsewhere("values"));
        }
        let comm = self.locked()?;
        let stream = on.raw_stream() as sys::cudaStream_t;
        // SAFETY: `at` holds one value of `T` on this communicator's device, kept alive by
        // `value` (the caller keeps it until the stream has run); in place is allowed.
        unsafe {
            result::all_reduce(
                at as *const _,
                at as *mut _,
                1,
                data_type::<T>(),
                sys::ncclRedOp_t::ncclMax,
                comm.0,
                stream,
            )
        }
        .map_err(|e| nccl_error("queuing an all-reduce", e))?;
        Ok(())
    }

    /// The communicator, locked for one call, with its device's context current.
    fn locked(&self) -> Result<std::sync::MutexGuard<'_, Comm>, Error> {
        let comm = self.comm.lock().map_err(|_| Error::Cuda {
            op: "NCCL".into(),
            cause: "a thread failed while holding the communicator".into(),
        })?;
        self.cuda.bind()?;
        Ok(comm)
    }

    /// The error for buffers or a stream off this communicator's device.
    fn elsewhere(&self, what: &str) -> Error {
        Error::InvalidField(format!(
            "NCCL exchanges {what} on its device {}",
            self.cuda.ordinal()
        ))
    }

    /// Queues on `on`'s stream, as one group, the sends `(rank, device address, values)`
    /// and the receives, of values of type `T`.
    ///
    /// # Safety
    /// Every address must start that many values of `T` inside a live allocation of this
    /// communicator's device that outlives the queued work.
    unsafe fn group<T: Real>(
        &self,
        on: &Cuda,
        sends: &[(usize, u64, usize)],
        receives: &[(usize, u64, usize)],
    ) -> Result<(), Error> {
        if on.ordinal() != self.cuda.ordinal() {
            return Err(Error::InvalidField(format!(
                "NCCL queues on its device {}, not {}",
                self.cuda.ordinal(),
                on.ordinal()
            )));
        }
        for (rank, _, _) in sends.iter().chain(receives) {
            if *rank >= self.size || *rank == self.rank {
                return Err(Error::InvalidField(format!(
                    "NCCL message to or from rank {rank} (this is rank {} of {})",
                    self.rank, self.size
                )));
            }
        }
        let kind = data_type::<T>();
        let stream = on.raw_stream() as sys::cudaStream_t;
        let comm = self.locked()?;
        result::group_start().map_err(|e| nccl_error("starting a group", e))?;
        let mut queued = Ok(());
        for &(rank, at, len) in sends {
            // SAFETY: the caller's contract.
            let sent = unsafe { result::send(at as _, len, kind, rank as i32, comm.0, stream) };
            queued = queued.and(sent.map(|_| ()));
        }
        for &(rank, at, len) in receives {
            // SAFETY: as for the sends.
            let got = unsafe { result::recv(at as _, len, kind, rank as i32, comm.0, stream) };
            queued = queued.and(got.map(|_| ()));
        }
        let ended = result::group_end();
        queued.map_err(|e| nccl_error("queuing a send or receive", e))?;
        ended.map_err(|e| nccl_error("ending a group", e))?;
        Ok(())
    }
}

/// NCCL's name for values of type `T`.
fn data_type<T: Real>() -> sys::ncclDataType_t {
    match T::PRECISION {
        Precision::F32 => sys::ncclDataType_t::ncclFloat32,
        Precision::F64 => sys::ncclDataType_t::ncclFloat64,
    }
}

impl Drop for Nccl {
    fn drop(&mut self) {
        if let Ok(comm) = self.comm.lock() {
            // SAFETY: the communicator was made in `new` and is destroyed once; NCCL
            // waits for its pending operations.
            unsafe {
                let _ = result::comm_destroy(comm.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Nccl;

    /// Without NCCL (as on the CI machine) asking for it is a typed error that names the
    /// library and what to do; with it, a unique id can be made.
    #[test]
    fn a_missing_library_is_an_error_that_says_what_to_do() {
        match Nccl::available() {
            Ok(()) => {
                println!("NCCL is installed here: making a unique id instead");
                assert!(Nccl::unique_id().is_ok());
            }
            Err(e) => {
                let text = e.to_string();
                assert!(text.contains("libnccl.so.2"), "{text}");
                assert!(text.contains("LD_LIBRARY_PATH"), "{text}");
                let again = Nccl::unique_id().expect_err("no NCCL, no id");
                assert_eq!(again.to_string(), text);
            }
        }
    }
}
