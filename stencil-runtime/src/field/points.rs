//! Single points of a field: read and written one at a time, or read several together
//! (on a device, one wait for all of them).

use super::{Field, Storage};
use crate::cuda::{DeviceBuffer, Place, RowCopy};
use crate::{Element, Error};

impl<T: Element> Field<T> {
    /// The value at `p` (interior coordinates, halo allowed); `None` outside the storage
    /// (or if a device copy fails).
    pub fn get(&self, p: [isize; 3]) -> Option<T> {
        if !self.layout.contains(p) {
            return None;
        }
        let o = self.layout.offset(p);
        match &self.storage {
            Storage::Host(v) => Some(v[o]),
            Storage::Device(buf) => {
                let mut x = [T::default()];
                let one =
                    self.element_copy(buf, o, Place::Host(x.as_mut_ptr() as *const u8), false);
                one.ok().map(|_| x[0])
            }
        }
    }

    /// The values at `points` (as [`Field::get`]: `None` outside the storage), read on
    /// a device with one wait for all of them; an error if a device copy fails.
    pub fn get_many(&self, points: &[[isize; 3]]) -> Result<Vec<Option<T>>, Error> {
        let inside: Vec<usize> = points
            .iter()
            .filter(|&&p| self.layout.contains(p))
            .map(|&p| self.layout.offset(p))
            .collect();
        let mut found = match &self.storage {
            Storage::Host(v) => inside.iter().map(|&o| v[o]).collect(),
            Storage::Device(buf) => buf.gather(&inside)?,
        }
        .into_iter();
        Ok(points
            .iter()
            .map(|&p| {
                if self.layout.contains(p) {
                    found.next()
                } else {
                    None
                }
            })
            .collect())
    }

    /// Sets the value at `p`; returns false (and changes nothing) outside the storage (or
    /// if a device copy fails).
    pub fn set(&mut self, p: [isize; 3], v: T) -> bool {
        if !self.layout.contains(p) {
            return false;
        }
        let o = self.layout.offset(p);
        if let Storage::Host(data) = &mut self.storage {
            data[o] = v;
            return true;
        }
        let Storage::Device(buf) = &self.storage else {
            unreachable!("host handled above")
        };
        let x = [v];
        self.element_copy(buf, o, Place::Host(x.as_ptr() as *const u8), true)
            .is_ok()
    }

    /// Copies element `o` of device storage to (`upload == false`) or from a host place.
    fn element_copy(
        &self,
        buf: &DeviceBuffer,
        o: usize,
        host: Place,
        upload: bool,
    ) -> Result<(), Error> {
        let size = std::mem::size_of::<T>();
        let dev = (Place::Device(buf.ptr + (o * size) as u64), size);
        let host = (host, size);
        let (src, dst) = if upload { (host, dev) } else { (dev, host) };
        // SAFETY: one element at an offset inside the allocation; the host end is a
        // one-element array that outlives the (waited-for) copy.
        unsafe {
            RowCopy {
                row_bytes: size,
                rows: 1,
                src,
                dst,
            }
            .run(&buf.stream)
        }
    }
}
