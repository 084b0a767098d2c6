//! How a field's values are laid out in memory: extents, halo, strides, pitch.

use crate::Error;

/// Where a field's values are and how they are laid out.
///
/// Every layout stores rows of `extent[0] + 2 * halo` values (the halo on both sides);
/// rows follow each other at a pitch of `stride[1]` elements, planes at `stride[2]`.
/// Host fields are packed (the pitch is the row length). Device fields are pitched: each
/// row's first interior value is aligned to 128 bytes, so warps read whole cache lines.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Layout {
    pub(super) extent: [usize; 3],
    pub(super) dims: usize,
    pub(super) halo: usize,
    /// Element strides of axes 0, 1 and 2.
    pub(super) stride: [usize; 3],
    /// Index of interior point (0, 0, 0) in the storage.
    pub(super) origin: usize,
    /// Index of the first stored value (the halo's first) of the first row.
    pub(super) row_start: usize,
    /// Number of elements of storage.
    pub(super) len: usize,
}

/// Alignment of device rows' interior starts, in bytes.
const DEVICE_ROW_ALIGN: usize = 128;

impl Layout {
    pub(super) fn new(
        extent: &[usize],
        halo: usize,
        elem: usize,
        pitched: bool,
    ) -> Result<Layout, Error> {
        if extent.is_empty() || extent.len() > 3 {
            return Err(Error::InvalidField(format!(
                "a field has 1, 2 or 3 axes, not {}",
                extent.len()
            )));
        }
        if extent.contains(&0) {
            return Err(Error::InvalidField(format!(
                "extent {extent:?} has an empty axis"
            )));
        }
        let too_large = || Error::InvalidField(format!("extent {extent:?} is too large"));
        let dims = extent.len();
        let mut ext = [1usize; 3];
        let mut full = [1usize; 3];
        for (a, &n) in extent.iter().enumerate() {
            ext[a] = n;
            full[a] = n.checked_add(2 * halo).ok_or_else(too_large)?;
        }
        // Elements before the first row's halo, so that its interior is aligned.
        let align = if pitched { DEVICE_ROW_ALIGN / elem } else { 1 };
        let lead = halo.div_ceil(align) * align;
        let row_start = lead - halo;
        let pitch = (row_start + full[0]).div_ceil(align) * align;
        let plane = pitch.checked_mul(full[1]).ok_or_else(too_large)?;
        let len = plane.checked_mul(full[2]).ok_or_else(too_large)?;
        // No allocation may exceed `isize::MAX` bytes (a larger `Vec` is a panic).
        len.checked_mul(elem)
            .filter(|&bytes| bytes <= isize::MAX as usize)
            .ok_or_else(too_large)?;
        let stride = [1, pitch, plane];
        let origin = (0..3)
            .map(|a| if a < dims { halo * stride[a] } else { 0 })
            .sum::<usize>()
            + row_start;
        Ok(Layout {
            extent: ext,
            dims,
            halo,
            stride,
            origin,
            row_start,
            len,
        })
    }

    /// Number of stored rows (all of axis 1 and 2, halo included).
    pub(super) fn rows(&self) -> usize {
        (1..3)
            .map(|a| {
                if a < self.dims {
                    self.extent[a] + 2 * self.halo
                } else {
                    1
                }
            })
            .product()
    }

    pub(super) fn row_len(&self) -> usize {
        self.extent[0] + 2 * self.halo
    }

    pub(super) fn offset(&self, p: [isize; 3]) -> usize {
        let o = self.origin as isize
            + p.iter()
                .zip(&self.stride)
                .map(|(&x, &s)| x * s as isize)
                .sum::<isize>();
        o as usize
    }

    pub(super) fn contains(&self, p: [isize; 3]) -> bool {
        (0..3).all(|a| {
            let h = if a < self.dims { self.halo as isize } else { 0 };
            p[a] >= -h && p[a] < self.extent[a] as isize + h
        })
    }

    pub(super) fn same_shape(&self, other: &Layout) -> bool {
        self.dims == other.dims && self.extent == other.extent && self.halo == other.halo
    }
}
