//! Fields: arrays on a 1D, 2D or 3D grid with a halo of ghost cells, in host memory or in
//! a CUDA device's memory.

use crate::cpu::{View, ViewMut};
use crate::cuda::{BoxCopy, DeviceBuffer, Place, RowCopy};
use crate::{Backend, Element, Error};

mod layout;
mod planes;
mod points;
use layout::Layout;
pub use planes::{PlaneExchange, PlaneFields};

/// The memory holding a field's values.
#[derive(Debug)]
enum Storage<T> {
    Host(Vec<T>),
    Device(DeviceBuffer),
}

/// An array of reals (or of `i32`, `u8` or `bool`: see [`Element`]) over a grid of 1 to
/// 3 dimensions, with `halo` ghost cells on every
/// side of every axis, in host memory or on a CUDA device.
///
/// Indices are interior coordinates: `0..extent` is the interior, `-halo..0` and
/// `extent..extent+halo` the ghost cells. Axis 0 is the fastest in memory.
///
/// Create host fields with [`Field::zeros`] or [`Field::from_fn`], fields on any backend
/// with [`Field::zeros_on`], and move values between backends with [`Field::to`],
/// [`Field::to_host`] and [`Field::copy_from`]. [`Field::get`] and [`Field::set`] work
/// anywhere (on a device, one element is copied each call: for set-up and inspection, not
/// for loops); slices and [`Field::fill_with`] need host memory.
#[derive(Debug)]
pub struct Field<T> {
    storage: Storage<T>,
    layout: Layout,
}

impl<T: Element> Clone for Field<T> {
    /// A copy in the same memory.
    ///
    /// # Panics
    /// If a device copy fails (out of device memory); use [`Field::to`] to handle that.
    fn clone(&self) -> Self {
        match &self.storage {
            Storage::Host(v) => Field {
                storage: Storage::Host(v.clone()),
                layout: self.layout.clone(),
            },
            Storage::Device(_) => self
                .device_copy()
                .expect("device copy of a field (use Field::to to handle failure)"),
        }
    }
}

impl<T: Element> PartialEq for Field<T> {
    /// Same shape and the same interior and halo values (wherever they live).
    fn eq(&self, other: &Self) -> bool {
        if !self.layout.same_shape(&other.layout) {
            return false;
        }
        match (self.to_host(), other.to_host()) {
            (Ok(a), Ok(b)) => a.as_slice().ok() == b.as_slice().ok(),
            _ => false,
        }
    }
}

/// `len` zeros in host memory for a field of `extent`, or [`Error::HostOutOfMemory`]
/// where the memory cannot be had (`vec!` alone would abort the process).
fn host_zeros<T: Element>(len: usize, extent: &[usize]) -> Result<Vec<T>, Error> {
    // Asked for first without touching it: `vec!` then takes lazily zeroed pages, which the
    // kernels first touch from their own threads.
    let mut probe = Vec::<T>::new();
    probe
        .try_reserve_exact(len)
        .map_err(|_| Error::HostOutOfMemory {
            bytes: len.saturating_mul(std::mem::size_of::<T>()),
            what: format!("a field of extent {extent:?}"),
        })?;
    drop(probe);
    Ok(vec![T::default(); len])
}

impl<T: Element> Field<T> {
    /// A host field of zeros with the given interior extent (1 to 3 axes) and halo width.
    pub fn zeros(extent: &[usize], halo: usize) -> Result<Self, Error> {
        let layout = Layout::new(extent, halo, std::mem::size_of::<T>(), false)?;
        Ok(Field {
            storage: Storage::Host(host_zeros(layout.len, extent)?),
            layout,
        })
    }

    /// A field of zeros in the memory of `backend`.
    pub fn zeros_on(backend: &Backend, extent: &[usize], halo: usize) -> Result<Self, Error> {
        match backend {
            Backend::Cpu => Self::zeros(extent, halo),
            Backend::Cuda(cuda) => {
                let layout = Layout::new(extent, halo, std::mem::size_of::<T>(), true)?;
                let bytes = layout
                    .len
                    .checked_mul(std::mem::size_of::<T>())
                    .ok_or_else(|| {
                        Error::InvalidField(format!("extent {extent:?} is too large"))
                    })?;
                let buf = DeviceBuffer::zeroed(
                    cuda.stream(),
                    bytes,
                    &format!("a field of extent {extent:?}"),
                )?;
                Ok(Field {
                    storage: Storage::Device(buf),
                    layout,
                })
            }
        }
    }

    /// Sets every point, halo included, to zero where the field lives (queued on a
    /// device).
    pub fn set_zero(&mut self) -> Result<(), Error> {
        match &mut self.storage {
            Storage::Host(v) => v.fill(T::default()),
            Storage::Device(b) => b.zero_range(0, b.bytes)?,
        }
        Ok(())
    }

    /// A host field whose every point, halo included, is `f([i, j, k])` (interior
    /// coordinates; unused axes are 0).
    ///
    /// # Panics
    /// On an invalid extent (see [`Field::zeros`] for the fallible form).
    pub fn from_fn(extent: &[usize], halo: usize, f: impl Fn([isize; 3]) -> T) -> Self {
        let mut field = Self::zeros(extent, halo).expect("valid extent");
        field.fill_with(f).expect("a host field");
        field
    }

    /// Sets every point, halo included, to `f([i, j, k])`. Needs host memory.
    pub fn fill_with(&mut self, f: impl Fn([isize; 3]) -> T) -> Result<(), Error> {
        let l = self.layout.clone();
        let data = self.host_mut("Field::fill_with")?;
        let h = l.halo as isize;
        let r = |a: usize| {
            if a < l.dims {
                -h..l.extent[a] as isize + h
            } else {
                0..1
            }
        };
        for k in r(2) {
            for j in r(1) {
                for i in r(0) {
                    data[l.offset([i, j, k])] = f([i, j, k]);
                }
            }
        }
        Ok(())
    }

    /// The interior values in storage order (axis 0 fastest), copied to the host.
    pub fn interior(&self) -> Result<Vec<T>, Error> {
        let host;
        let f = match &self.storage {
            Storage::Host(_) => self,
            Storage::Device(_) => {
                host = self.to_host()?;
                &host
            }
        };
        let Storage::Host(data) = &f.storage else {
            unreachable!("a host copy")
        };
        let l = &f.layout;
        let mut out = Vec::with_capacity(self.len());
        for k in 0..l.extent[2] as isize {
            for j in 0..l.extent[1] as isize {
                let start = l.offset([0, j, k]);
                out.extend_from_slice(&data[start..start + l.extent[0]]);
            }
        }
        Ok(out)
    }

    /// A copy of this field in the memory of `backend`.
    pub fn to(&self, backend: &Backend) -> Result<Field<T>, Error> {
        let mut dst = Field::zeros_on(backend, self.extent(), self.halo())?;
        dst.copy_from(self)?;
        Ok(dst)
    }

    /// A copy of this field in host memory (waits for pending work on its device).
    pub fn to_host(&self) -> Result<Field<T>, Error> {
        self.to(&Backend::Cpu)
    }

    /// Copies every value (halo included) of `src`, which must have the same extent and
    /// halo, wherever either lives.
    pub fn copy_from(&mut self, src: &Field<T>) -> Result<(), Error> {
        if !self.layout.same_shape(&src.layout) {
            return Err(Error::InvalidField(format!(
                "cannot copy a field of extent {:?} and halo {} into one of extent {:?} and halo {}",
                src.extent(),
                src.halo(),
                self.extent(),
                self.halo()
            )));
        }
        let size = std::mem::size_of::<T>();
        let place = |f: &Field<T>| -> (Place, usize) {
            let start = f.layout.row_start * size;
            let p = match &f.storage {
                Storage::Host(v) => Place::Host(unsafe { (v.as_ptr() as *const u8).add(start) }),
                Storage::Device(b) => Place::Device(b.ptr + start as u64),
            };
            (p, f.layout.stride[1] * size)
        };
        if let (Storage::Host(a), Storage::Host(b)) = (&src.storage, &mut self.storage) {
            b.copy_from_slice(a);
            return Ok(());
        }
        let src_place = place(src);
        let stream = match (&src.storage, &self.storage) {
            (Storage::Device(b), _) | (_, Storage::Device(b)) => b.stream.clone(),
            (Storage::Host(_), Storage::Host(_)) => unreachable!("handled above"),
        };
        if let (Storage::Device(a), Storage::Device(b)) = (&src.storage, &self.storage) {
            if a.stream.device.ordinal != b.stream.device.ordinal {
                return Err(Error::Backend(
                    "copies between two GPUs go through the host: use `to_host()` then `copy_from`"
                        .into(),
                ));
            }
        }
        let dst_place = place(self);
        let copy = RowCopy {
            row_bytes: self.layout.row_len() * size,
            rows: self.layout.rows(),
            src: src_place,
            dst: dst_place,
        };
        // SAFETY: both layouts hold `rows` rows of `row_len` elements from their first
        // stored value at their pitches (same extent and halo, checked above); the host
        // ends outlive the copy, which `run` waits for.
        unsafe { copy.run(&stream) }
    }

    /// Fills `depth` ghost layers on both ends of `axis` with periodic images: a ghost at
    /// index `g < 0` takes the value at `g + period`, one at `g >= extent` the value at
    /// `g - period`. Use `period = extent - 1` for a vertex-centred periodic grid whose
    /// last node repeats the first, `period = extent` for a cell-centred one. The copies
    /// span the whole stored range of the other axes, so wrapping every periodic axis in
    /// turn fills the corners too. On a device the copies are queued on `backend`'s stream
    /// without waiting (and can be recorded into a graph); the field must live on
    /// `backend`.
    pub fn wrap_periodic(
        &mut self,
        backend: &Backend,
        axis: usize,
        period: usize,
        depth: usize,
    ) -> Result<(), Error> {
        let l = &self.layout;
        let n = l.extent[axis.min(2)];
        if axis >= l.dims || depth > l.halo || depth > period || period > n || period == 0 {
            return Err(Error::InvalidField(format!(
                "cannot wrap {depth} layers with period {period} along axis {axis} of a field of extent {:?} and halo {}: need axis < {}, depth <= halo and depth <= period <= extent",
                self.extent(),
                l.halo,
                l.dims
            )));
        }
        if depth == 0 {
            return Ok(());
        }
        // The box of one side: `depth` layers along `axis`, everything stored along the
        // others (halo included).
        let h = l.halo as isize;
        let mut lo = [0isize; 3];
        let mut size = [1usize; 3];
        for a in 0..l.dims {
            lo[a] = -h;
            size[a] = l.extent[a] + 2 * l.halo;
        }
        size[axis] = depth;
        let (n, period, depth) = (n as isize, period as isize, depth as isize);
        // (source start, destination start) along `axis`, for the low and the high side.
        let sides = [(period - depth, -depth), (n - period, n)];
        let elem = std::mem::size_of::<T>();
        let wrong_place = |have: String, want: &str| Error::Residency {
            kernel: "wrap_periodic".into(),
            field: "the wrapped field".into(),
            have,
            want: want.into(),
        };
        match (&mut self.storage, backend) {
            (Storage::Host(_), Backend::Cuda(c)) => Err(wrong_place(
                "the CPU".into(),
                &format!("CUDA device {}", c.ordinal()),
            )),
            (Storage::Device(b), Backend::Cpu) => Err(wrong_place(
                format!("CUDA device {}", b.stream.device.ordinal),
                "the CPU",
            )),
            (Storage::Host(v), Backend::Cpu) => {
                for (src, dst) in sides {
                    for z in 0..size[2] as isize {
                        for y in 0..size[1] as isize {
                            for x in 0..size[0] as isize {
                                let mut from = [lo[0] + x, lo[1] + y, lo[2] + z];
                                let mut to = from;
                                from[axis] = src + [x, y, z][axis];
                                to[axis] = dst + [x, y, z][axis];
                                v[self.layout.offset(to)] = v[self.layout.offset(from)];
                            }
                        }
                    }
                }
                Ok(())
            }
            (Storage::Device(b), Backend::Cuda(c)) => {
                for (src, dst) in sides {
                    let (mut from, mut to) = (lo, lo);
                    from[axis] = src;
                    to[axis] = dst;
                    let copy = BoxCopy {
                        width_bytes: size[0] * elem,
                        rows: size[1],
                        planes: size[2],
                        src: b.ptr + (self.layout.offset(from) * elem) as u64,
                        dst: b.ptr + (self.layout.offset(to) * elem) as u64,
                        pitch: self.layout.stride[1] * elem,
                        plane_rows: self.layout.stride[2] / self.layout.stride[1],
                    };
                    // SAFETY: both boxes lie inside the field's storage: every index is
                    // within the stored range, checked above.
                    unsafe { copy.queue(c.stream())? };
                }
                Ok(())
            }
        }
    }

    fn device_copy(&self) -> Result<Field<T>, Error> {
        let Storage::Device(b) = &self.storage else {
            unreachable!("called on device fields")
        };
        let mut f = Field {
            storage: Storage::Device(DeviceBuffer::new(&b.stream, b.bytes, "a field copy")?),
            layout: self.layout.clone(),
        };
        f.copy_from(self)?;
        Ok(f)
    }

    /// Where the field lives, in words (for errors and reports).
    pub fn location(&self) -> String {
        match &self.storage {
            Storage::Host(_) => "host memory".into(),
            Storage::Device(b) => format!(
                "the memory of CUDA device {} ({})",
                b.stream.device.ordinal, b.stream.device.name
            ),
        }
    }

    /// Whether the field is in host memory.
    pub fn is_host(&self) -> bool {
        matches!(self.storage, Storage::Host(_))
    }

    /// For a device field: the device ordinal, the address of interior point (0, 0, 0),
    /// and the element strides of axes 1 and 2.
    pub fn device_args(&self) -> Option<(usize, u64, [usize; 2])> {
        match &self.storage {
            Storage::Host(_) => None,
            Storage::Device(b) => Some((
                b.stream.device.ordinal,
                b.ptr + (self.layout.origin * std::mem::size_of::<T>()) as u64,
                self.strides(),
            )),
        }
    }

    /// A device field of `extent` and `halo`, unpadded, held in `buf` (which must hold
    /// at least its storage).
    pub(crate) fn from_device_buffer(
        buf: DeviceBuffer,
        extent: &[usize],
        halo: usize,
    ) -> Result<Field<T>, Error> {
        let layout = Layout::new(extent, halo, std::mem::size_of::<T>(), false)?;
        if layout.len * std::mem::size_of::<T>() > buf.bytes {
            return Err(Error::InvalidField(format!(
                "a device buffer of {} bytes cannot hold a field of extent {extent:?}",
                buf.bytes
            )));
        }
        Ok(Field {
            storage: Storage::Device(buf),
            layout,
        })
    }

    /// A device field's memory (`None` on the host).
    pub(crate) fn device_buffer(&self) -> Option<&DeviceBuffer> {
        match &self.storage {
            Storage::Host(_) => None,
            Storage::Device(b) => Some(b),
        }
    }

    /// The stream a device field's work is queued on (`None` on the host).
    pub(crate) fn device_stream(&self) -> Option<&std::sync::Arc<crate::cuda::Stream>> {
        match &self.storage {
            Storage::Host(_) => None,
            Storage::Device(b) => Some(&b.stream),
        }
    }

    /// Number of elements stored, halo and row padding included.
    pub fn storage_len(&self) -> usize {
        self.layout.len
    }

    /// Number of interior points.
    pub fn len(&self) -> usize {
        self.layout.extent.iter().product()
    }

    /// Whether the interior is empty (never: extents are at least 1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Interior extent per axis (length `dims`).
    pub fn extent(&self) -> &[usize] {
        &self.layout.extent[..self.layout.dims]
    }

    /// Number of axes.
    pub fn dims(&self) -> usize {
        self.layout.dims
    }

    /// Halo width.
    pub fn halo(&self) -> usize {
        self.layout.halo
    }

    fn host_mut(&mut self, what: &'static str) -> Result<&mut [T], Error> {
        let location = self.location();
        match &mut self.storage {
            Storage::Host(v) => Ok(v),
            Storage::Device(_) => Err(Error::NotOnHost { what, location }),
        }
    }

    /// The whole host storage, halo included. Fails for device fields.
    pub fn as_slice(&self) -> Result<&[T], Error> {
        match &self.storage {
            Storage::Host(v) => Ok(v),
            Storage::Device(_) => Err(Error::NotOnHost {
                what: "Field::as_slice",
                location: self.location(),
            }),
        }
    }

    /// The whole host storage, halo included, mutably. Fails for device fields.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], Error> {
        self.host_mut("Field::as_mut_slice")
    }

    /// Element strides of axes 1 and 2.
    pub fn strides(&self) -> [usize; 2] {
        [self.layout.stride[1], self.layout.stride[2]]
    }

    /// Index in the storage of interior point (0, 0, 0).
    pub fn origin(&self) -> usize {
        self.layout.origin
    }

    /// A read view for generated CPU code. Fails for device fields, naming `kernel` and
    /// the parameter.
    pub fn view(&self, kernel: &str, param: &str) -> Result<View<T>, Error> {
        let data = self.as_slice().map_err(|_| self.not_host(kernel, param))?;
        Ok(View {
            // SAFETY: the origin is inside the allocation.
            ptr: unsafe { data.as_ptr().add(self.layout.origin) },
            sy: self.layout.stride[1] as isize,
            sz: self.layout.stride[2] as isize,
        })
    }

    /// A write view for generated CPU code. Fails for device fields.
    pub fn view_mut(&mut self, kernel: &str, param: &str) -> Result<ViewMut<T>, Error> {
        let e = self.not_host(kernel, param);
        let (origin, sy, sz) = (
            self.layout.origin,
            self.layout.stride[1] as isize,
            self.layout.stride[2] as isize,
        );
        let data = self.host_mut("a CPU kernel").map_err(|_| e)?;
        Ok(ViewMut {
            // SAFETY: the origin is inside the allocation.
            ptr: unsafe { data.as_mut_ptr().add(origin) },
            sy,
            sz,
        })
    }

    fn not_host(&self, kernel: &str, param: &str) -> Error {
        Error::Residency {
            kernel: kernel.to_string(),
            field: param.to_string(),
            have: self.location(),
            want: "the CPU".into(),
        }
    }
}
