//! The memory of a [`super::BlockField`]: one allocation of one slot per block, on the
//! host or on a device, and how it follows the grid's blocks.

use super::grid::Relayout;
use crate::cuda::memory::DeviceBuffer;
use crate::{Backend, Error, Real};

/// The memory of an arena.
#[derive(Debug)]
pub(super) enum Arena<T> {
    Host(Vec<T>),
    Device(DeviceBuffer),
}

impl<T: Real> Arena<T> {
    /// An arena of `host`'s values on `backend`.
    pub(super) fn from_host(backend: &Backend, host: Vec<T>) -> Result<Arena<T>, Error> {
        match backend {
            Backend::Cpu => Ok(Arena::Host(host)),
            Backend::Cuda(c) => Ok(Arena::Device(DeviceBuffer::from_slice(
                c.stream(),
                &host,
                "a block field",
            )?)),
        }
    }

    /// The values, on the host.
    pub(super) fn to_host(&self) -> Result<Vec<T>, Error> {
        match self {
            Arena::Host(v) => Ok(v.clone()),
            Arena::Device(b) => {
                let mut v = vec![T::zero(); b.bytes / std::mem::size_of::<T>()];
                b.download(&mut v)?;
                Ok(v)
            }
        }
    }

    /// `len` values from element `start`, on the host.
    pub(super) fn read(&self, start: usize, len: usize) -> Result<Vec<T>, Error> {
        match self {
            Arena::Host(v) => Ok(v[start..start + len].to_vec()),
            Arena::Device(b) => {
                let mut v = vec![T::zero(); len];
                b.download_from(start, &mut v)?;
                Ok(v)
            }
        }
    }

    /// The arena after `change`: kept slots moved, added slots from `fresh` (one slot of
    /// `len` elements per added block, in order; `None`: zero). Works in place when the slot count
    /// stays and no kept block moves (the common case: blocks added into free slots or
    /// freed); copies runs of consecutive slots at once.
    pub(super) fn relaid(
        self,
        backend: &Backend,
        change: &Relayout,
        len: usize,
        fresh: Option<&[T]>,
    ) -> Result<Arena<T>, Error> {
        let capacity = change.capacity;
        let in_place = change.kept.iter().all(|&(from, to)| from == to);
        let added: Vec<(usize, usize)> = change.added.iter().copied().enumerate().collect();
        match self {
            Arena::Host(mut old) => {
                if in_place {
                    old.resize(capacity * len, T::zero());
                    if 2 * old.len() < old.capacity() {
                        old.shrink_to_fit();
                    }
                    fill_added(&mut old, &added, len, fresh);
                    return Ok(Arena::Host(old));
                }
                let mut new = vec![T::zero(); capacity * len];
                for (from, to, n) in runs(&change.kept) {
                    new[to * len..(to + n) * len]
                        .copy_from_slice(&old[from * len..(from + n) * len]);
                }
                fill_added(&mut new, &added, len, fresh);
                Ok(Arena::Host(new))
            }
            Arena::Device(old) => {
                let Backend::Cuda(c) = backend else {
                    return Err(Error::InvalidField(
                        "a device block field on a CPU grid".into(),
                    ));
                };
                let size = std::mem::size_of::<T>();
                let bytes = capacity * len * size;
                // In place unless the buffer is too small, or twice too large (memory
                // follows the present blocks).
                let new = if in_place && bytes <= old.bytes && 2 * bytes > old.bytes {
                    old
                } else if in_place {
                    // Slots stay put: one copy of the old arena (free slots' garbage too)
                    // rather than one per run of kept slots.
                    let new = DeviceBuffer::new(c.stream(), bytes, "a block field")?;
                    new.copy_range(0, &old, 0, old.bytes.min(bytes))?;
                    new
                } else {
                    let new = DeviceBuffer::new(c.stream(), bytes, "a block field")?;
                    for (from, to, n) in runs(&change.kept) {
                        new.copy_range(to * len * size, &old, from * len * size, n * len * size)?;
                    }
                    new
                };
                match fresh {
                    _ if added.is_empty() => {}
                    Some(fresh) => {
                        let staged = DeviceBuffer::from_slice(c.stream(), fresh, "new blocks")?;
                        for (from, to, n) in runs(&added) {
                            new.copy_range(
                                to * len * size,
                                &staged,
                                from * len * size,
                                n * len * size,
                            )?;
                        }
                        // `staged` is freed in stream order, after the copies.
                    }
                    // Zero is all bits zero in f32 and f64.
                    None => {
                        for (_, to, n) in runs(&added) {
                            new.zero_range(to * len * size, n * len * size)?;
                        }
                    }
                }
                Ok(Arena::Device(new))
            }
        }
    }
}

/// `(from, to)` slot pairs as runs `(from, to, count)` of consecutive slots on both sides.
fn runs(pairs: &[(usize, usize)]) -> Vec<(usize, usize, usize)> {
    let mut sorted = pairs.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<(usize, usize, usize)> = Vec::new();
    for (from, to) in sorted {
        match out.last_mut() {
            Some((f, t, n)) if *f + *n == from && *t + *n == to => *n += 1,
            _ => out.push((from, to, 1)),
        }
    }
    out
}

/// Writes the added slots (`(index among the added, slot)` pairs) of a host arena from
/// `fresh`, or zero.
fn fill_added<T: Real>(arena: &mut [T], added: &[(usize, usize)], len: usize, fresh: Option<&[T]>) {
    for (from, to, n) in runs(added) {
        let slots = &mut arena[to * len..(to + n) * len];
        match fresh {
            Some(fresh) => slots.copy_from_slice(&fresh[from * len..(from + n) * len]),
            None => slots.fill(T::zero()),
        }
    }
}
