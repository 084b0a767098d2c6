//! Planes of a field along its last axis (the rows of a 2D field, the planes of a 3D one):
//! the storage that moves when a grid is split into slabs of consecutive planes, one per
//! rank, and ghost planes are exchanged or slabs gathered.
//!
//! A plane is stored whole and contiguously, with the halo of the other axes and any row
//! padding, so consecutive planes are one range of the storage.

use super::{Field, Storage};
use crate::{Element, Error};
use std::ops::Range;

impl<T: Element> Field<T> {
    /// The axis along which planes are counted: the last one.
    fn plane_axis(&self) -> usize {
        self.layout.dims - 1
    }

    /// Elements from one plane to the next.
    pub fn plane_len(&self) -> usize {
        self.layout.stride[self.plane_axis()]
    }

    /// Where planes `planes` along the last axis (ghost planes included: from `-halo` to
    /// `extent + halo`) lie in the storage, as a range of element indices. Fails for a 1D
    /// field or planes outside the stored ones.
    pub fn plane_storage(&self, planes: Range<isize>) -> Result<Range<usize>, Error> {
        let (h, n) = (
            self.layout.halo as isize,
            self.layout.extent[self.plane_axis()] as isize,
        );
        if self.layout.dims < 2 || planes.start < -h || planes.end > n + h || planes.is_empty() {
            return Err(Error::InvalidField(format!(
                "planes {planes:?} of a field of extent {:?} and halo {h}: a field of 2 or 3 \
                 axes stores planes {}..{} along its last axis",
                self.extent(),
                -h,
                n + h
            )));
        }
        let s = self.plane_len();
        Ok((planes.start + h) as usize * s..(planes.end + h) as usize * s)
    }

    /// Whether `other`'s planes are laid out as this field's (same axes, extents of the
    /// axes other than the last, halo, pitch and memory kind), so that planes copy
    /// between them as one range.
    pub fn same_planes(&self, other: &Field<T>) -> bool {
        let (a, b) = (&self.layout, &other.layout);
        let last = a.dims.saturating_sub(1);
        a.dims == b.dims
            && a.dims >= 2
            && a.extent[..last] == b.extent[..last]
            && a.halo == b.halo
            && a.stride[1..=last] == b.stride[1..=last]
            && self.is_host() == other.is_host()
    }

    /// Copies planes `from` of `src` into this field's planes from `to` on (both fields on
    /// the host, or on one device, where the copy is queued on this field's stream), with
    /// the layouts of [`Field::same_planes`].
    pub fn copy_planes(
        &mut self,
        to: isize,
        src: &Field<T>,
        from: Range<isize>,
    ) -> Result<(), Error> {
        if !self.same_planes(src) {
            return Err(Error::InvalidField(format!(
                "planes of a field of extent {:?} and halo {} in {} cannot be copied into one \
                 of extent {:?} and halo {} in {}: the axes before the last, the halo and the \
                 memory must match",
                src.extent(),
                src.halo(),
                src.location(),
                self.extent(),
                self.halo(),
                self.location()
            )));
        }
        let source = src.plane_storage(from.clone())?;
        let target = self.plane_storage(to..to + from.len() as isize)?;
        match (&src.storage, &mut self.storage) {
            (Storage::Host(a), Storage::Host(b)) => {
                b[target].copy_from_slice(&a[source]);
                Ok(())
            }
            (Storage::Device(a), Storage::Device(b)) => {
                if a.stream.device.ordinal != b.stream.device.ordinal {
                    return Err(Error::Backend(
                        "planes copy within one device; between devices they travel by NCCL".into(),
                    ));
                }
                let size = std::mem::size_of::<T>();
                b.copy_range(
                    target.start * size,
                    a,
                    source.start * size,
                    source.len() * size,
                )
            }
            _ => unreachable!("same_planes checks the memory kind"),
        }
    }

    /// The device address of storage element `at` (`None` on the host).
    pub(crate) fn device_address(&self, at: usize) -> Option<u64> {
        self.device_buffer()
            .map(|b| b.ptr + (at * std::mem::size_of::<T>()) as u64)
    }
}

/// An exchange of planes along the last axis ([`Field::plane_storage`]) between ranks:
/// for each `(rank, planes)` of `sends` those planes of the sending field go to `rank`,
/// and for each of `receives` those of the receiving field come from it. Both sides
/// list a pair's messages in the same order, with planes of the same layout
/// ([`Field::same_planes`]).
pub struct PlaneExchange<'a, T> {
    /// The field sent from and the one received into.
    pub fields: PlaneFields<'a, T>,
    /// The planes sent, each with the rank it goes to.
    pub sends: &'a [(usize, Range<isize>)],
    /// The planes received, each with the rank it comes from.
    pub receives: &'a [(usize, Range<isize>)],
}

/// The fields a [`PlaneExchange`] reads and writes.
pub enum PlaneFields<'a, T> {
    /// One field: its own planes sent, its ghost planes received.
    Within(&'a mut Field<T>),
    /// Planes of the first field sent, received into the second.
    Between(&'a Field<T>, &'a mut Field<T>),
}

impl<'a, T> PlaneFields<'a, T> {
    /// The field whose planes are sent, then the one that receives.
    pub fn ends(&self) -> (&Field<T>, &Field<T>) {
        match self {
            PlaneFields::Within(f) => (f, f),
            PlaneFields::Between(from, into) => (from, into),
        }
    }

    /// The field that receives, to write the planes received into.
    pub fn into_receiver(self) -> &'a mut Field<T> {
        match self {
            PlaneFields::Within(f) => f,
            PlaneFields::Between(_, into) => into,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Field;

    #[test]
    fn planes_copy_between_fields_of_the_same_rows() {
        let whole = Field::<f64>::from_fn(&[5, 9], 1, |p| (p[0] + 10 * p[1]) as f64);
        let mut part = Field::<f64>::zeros(&[5, 3], 1).unwrap();
        // Planes 3..6 of the whole (with the halo columns) into the part's 0..3.
        part.copy_planes(0, &whole, 3..6).unwrap();
        assert_eq!(part.get([0, 0, 0]), Some(30.0));
        assert_eq!(part.get([4, 2, 0]), Some(54.0));
        assert_eq!(
            part.get([-1, 1, 0]),
            whole.get([-1, 4, 0]),
            "halo columns travel"
        );
        let range = part.plane_storage(-1..4).unwrap();
        assert_eq!(range, 0..part.storage_len());
        assert!(part.plane_storage(-2..0).is_err());
        let other = Field::<f64>::zeros(&[6, 3], 1).unwrap();
        let err = part.copy_planes(0, &other, 0..1).unwrap_err().to_string();
        assert!(err.contains("cannot be copied"), "{err}");
    }
}
