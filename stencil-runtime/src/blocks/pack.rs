//! [`PointPack`]: listed points of block fields copied into one contiguous buffer and
//! back, where the fields live: what ranks send each other (the points of their blocks
//! that other ranks' halos read).

use super::field::BlockField;
use super::grid::{BlockGrid, BlockKey};
use crate::cuda::memory::DeviceBuffer;
use crate::cuda::{queue_points, PointLaunch, HALO_FIELDS};
use crate::{Backend, Error, Real};

/// Where a pack's tables and values live.
#[derive(Debug)]
enum Store<T> {
    Host {
        elements: Vec<u32>,
        values: Vec<T>,
    },
    Device {
        elements: DeviceBuffer,
        values: DeviceBuffer,
    },
}

/// A list of points of a grid's present blocks and a buffer holding them for up to
/// eight fields of the grid's layout: [`PointPack::pack`] copies the fields' points into
/// the buffer, field after field (value `f * count + e` is point `e` of field `f`),
/// [`PointPack::unpack`] copies the buffer into the fields. On a device both are one
/// launch on the grid's stream, queued without a wait, and the buffer stays on the
/// device, where a communication library (NCCL, see [`crate::cuda::Nccl`]) sends and
/// receives it on the same stream.
#[derive(Debug)]
pub struct PointPack<T> {
    backend: Backend,
    grid: u64,
    generation: u64,
    count: usize,
    fields: usize,
    store: Store<T>,
}

impl<T: Real> PointPack<T> {
    /// A pack of `points` (each a present block of `grid` and elements of its slot, see
    /// [`super::Geometry::element`]) for `fields` fields (1 to 8). A block that is not
    /// present, an element outside a slot or an arena too large for 32-bit elements is
    /// an [`Error::InvalidField`].
    pub fn new(
        grid: &BlockGrid,
        points: &[(BlockKey, Vec<usize>)],
        fields: usize,
    ) -> Result<PointPack<T>, Error> {
        if !(1..=HALO_FIELDS).contains(&fields) {
            return Err(Error::InvalidField(format!(
                "a point pack holds 1 to {HALO_FIELDS} fields, not {fields}"
            )));
        }
        let len = grid.geometry().slot_len();
        if grid.capacity() * len > u32::MAX as usize {
            return Err(Error::InvalidField(format!(
                "the grid's arenas hold {} points, past the 2^32 a point pack can name: use larger blocks or fewer per rank",
                grid.capacity() * len
            )));
        }
        let mut elements = Vec::new();
        for (key, list) in points {
            let slot = grid.slot(*key).ok_or_else(|| {
                Error::InvalidField(format!(
                    "block {key:?} of a point pack is not present on its grid"
                ))
            })?;
            if let Some(e) = list.iter().find(|&&e| e >= len) {
                return Err(Error::InvalidField(format!(
                    "element {e} of block {key:?} lies outside its slot of {len}"
                )));
            }
            elements.extend(list.iter().map(|&e| (slot * len + e) as u32));
        }
        let count = elements.len();
        let store = match grid.backend() {
            Backend::Cpu => Store::Host {
                elements,
                values: vec![T::zero(); count * fields],
            },
            Backend::Cuda(c) => Store::Device {
                elements: DeviceBuffer::from_slice(c.stream(), &elements, "a point pack's list")?,
                values: DeviceBuffer::zeroed(
                    c.stream(),
                    count * fields * std::mem::size_of::<T>(),
                    "a point pack's buffer",
                )?,
            },
        };
        Ok(PointPack {
            backend: grid.backend().clone(),
            grid: grid.id(),
            generation: grid.generation(),
            count,
            fields,
            store,
        })
    }

    /// Points per field.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Fields the buffer holds.
    pub fn fields(&self) -> usize {
        self.fields
    }

    /// The backend the buffer lives on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The buffer, where it is on the host (`None` on a device).
    pub fn host_values(&self) -> Option<&[T]> {
        match &self.store {
            Store::Host { values, .. } => Some(values),
            Store::Device { .. } => None,
        }
    }

    /// The buffer to write, where it is on the host (`None` on a device).
    pub fn host_values_mut(&mut self) -> Option<&mut [T]> {
        match &mut self.store {
            Store::Host { values, .. } => Some(values),
            Store::Device { .. } => None,
        }
    }

    /// The buffer's device address (`None` on the host).
    pub(crate) fn device_values(&self) -> Option<u64> {
        match &self.store {
            Store::Host { .. } => None,
            Store::Device { values, .. } => Some(values.ptr),
        }
    }

    /// Copies the listed points of `fields` (as many as the pack holds, on its grid's
    /// present layout) into the buffer.
    pub fn pack(&mut self, grid: &BlockGrid, fields: &[&BlockField<T>]) -> Result<(), Error> {
        self.pack_on(None, grid, fields)
    }

    /// [`PointPack::pack`] on the stream of `on` where given (a stream of the pack's
    /// device, which the caller orders after the fields' writes and before their next
    /// ones), else on the pack's own.
    pub fn pack_on(
        &mut self,
        on: Option<&crate::Cuda>,
        grid: &BlockGrid,
        fields: &[&BlockField<T>],
    ) -> Result<(), Error> {
        self.check(grid, fields.iter().copied())?;
        let count = self.count;
        match &mut self.store {
            Store::Host { elements, values } => {
                for (f, field) in fields.iter().enumerate() {
                    let arena = field.host_arena().ok_or_else(|| moved("PointPack::pack"))?;
                    let out = &mut values[f * count..(f + 1) * count];
                    for (v, &e) in out.iter_mut().zip(elements.iter()) {
                        *v = arena[e as usize];
                    }
                }
                Ok(())
            }
            Store::Device { elements, values } => {
                let launch = PointLaunch::Pack {
                    elements: elements.ptr,
                    buffer: values.ptr,
                    unpack: false,
                };
                let arenas = device_arenas(fields.iter().map(|f| f.device_arena()))?;
                let cuda = match (on, &self.backend) {
                    (Some(c), Backend::Cuda(own)) if c.ordinal() == own.ordinal() => c,
                    (None, Backend::Cuda(own)) => own,
                    _ => return Err(moved("PointPack::pack_on")),
                };
                // SAFETY: the elements were checked against the slots of this layout
                // (`check`), and the buffer holds `fields * count` values.
                unsafe { queue_points(cuda, T::PRECISION, launch, count, &arenas, fields.len()) }
            }
        }
    }

    /// Copies the buffer into the listed points of `fields`.
    pub fn unpack(&self, grid: &BlockGrid, fields: &mut [&mut BlockField<T>]) -> Result<(), Error> {
        self.unpack_on(None, grid, fields)
    }

    /// [`PointPack::unpack`] on the stream of `on` where given (a stream of the pack's
    /// device, [`crate::Cuda::new_stream`], which the caller orders after the buffer's
    /// writes), else on the pack's own.
    pub fn unpack_on(
        &self,
        on: Option<&crate::Cuda>,
        grid: &BlockGrid,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), Error> {
        self.check(grid, fields.iter().map(|f| &**f))?;
        match &self.store {
            Store::Host { elements, values } => {
                for (f, field) in fields.iter_mut().enumerate() {
                    let arena = field
                        .host_arena_mut()
                        .ok_or_else(|| moved("PointPack::unpack"))?;
                    let from = &values[f * self.count..(f + 1) * self.count];
                    for (&v, &e) in from.iter().zip(elements.iter()) {
                        arena[e as usize] = v;
                    }
                }
                Ok(())
            }
            Store::Device { elements, values } => {
                let arenas = device_arenas(fields.iter().map(|f| f.device_arena()))?;
                let cuda = match (on, &self.backend) {
                    (Some(c), Backend::Cuda(own)) if c.ordinal() == own.ordinal() => c,
                    (None, Backend::Cuda(own)) => own,
                    _ => return Err(moved("PointPack::unpack_on")),
                };
                let launch = PointLaunch::Pack {
                    elements: elements.ptr,
                    buffer: values.ptr,
                    unpack: true,
                };
                let count = self.count;
                // SAFETY: as in `pack`.
                unsafe { queue_points(cuda, T::PRECISION, launch, count, &arenas, fields.len()) }
            }
        }
    }

    /// Refuses fields of another grid, layout or backend, or a number of fields other
    /// than the pack's.
    fn check<'a>(
        &self,
        grid: &BlockGrid,
        fields: impl ExactSizeIterator<Item = &'a BlockField<T>>,
    ) -> Result<(), Error> {
        if grid.id() != self.grid || grid.generation() != self.generation {
            return Err(Error::InvalidField(
                "a point pack was planned for another grid or an older layout: plan it again after the blocks change".into(),
            ));
        }
        if fields.len() != self.fields {
            return Err(Error::InvalidField(format!(
                "a point pack of {} fields was given {}",
                self.fields,
                fields.len()
            )));
        }
        for f in fields {
            f.check(grid, "PointPack", "field")?;
        }
        Ok(())
    }
}

/// The error for a field whose arena is not where the pack is.
fn moved(what: &str) -> Error {
    Error::InvalidField(format!(
        "{what}: a field lives on another backend than the pack's grid"
    ))
}

/// The device addresses of up to [`HALO_FIELDS`] arenas (0 past them).
fn device_arenas(arenas: impl Iterator<Item = Option<u64>>) -> Result<[u64; HALO_FIELDS], Error> {
    let mut out = [0; HALO_FIELDS];
    for (slot, a) in out.iter_mut().zip(arenas) {
        *slot = a.ok_or_else(|| moved("PointPack"))?;
    }
    Ok(out)
}
