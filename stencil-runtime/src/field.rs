//! Fields: arrays on a 1D, 2D or 3D grid with a halo of ghost cells.

use crate::cpu::{View, ViewMut};
use crate::{Error, Real};

/// A real-valued array over a grid of 1 to 3 dimensions, with `halo` ghost cells on every
/// side of every axis. Stored row-major with axis 0 fastest. Indices passed to
/// [`Field::get`] and [`Field::set`] are interior coordinates: `0..extent` is the interior,
/// `-halo..0` and `extent..extent+halo` the ghost cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Field<T> {
    data: Vec<T>,
    extent: [usize; 3],
    dims: usize,
    halo: usize,
    stride: [usize; 3],
}

impl<T: Real> Field<T> {
    /// A field of zeros with the given interior extent (1 to 3 axes) and halo width.
    pub fn zeros(extent: &[usize], halo: usize) -> Result<Self, Error> {
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
        let mut full = [1usize; 3];
        let mut ext = [1usize; 3];
        for (a, &n) in extent.iter().enumerate() {
            ext[a] = n;
            full[a] = n + 2 * halo;
        }
        let len = full
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n))
            .ok_or_else(|| Error::InvalidField(format!("extent {extent:?} is too large")))?;
        Ok(Field {
            data: vec![T::zero(); len],
            extent: ext,
            dims: extent.len(),
            halo,
            stride: [1, full[0], full[0] * full[1]],
        })
    }

    /// A field whose every point, halo included, is `f([i, j, k])` (interior coordinates;
    /// unused axes are 0).
    ///
    /// # Panics
    /// On an invalid extent (see [`Field::zeros`] for the fallible form).
    pub fn from_fn(extent: &[usize], halo: usize, f: impl Fn([isize; 3]) -> T) -> Self {
        let mut field = Self::zeros(extent, halo).expect("valid extent");
        field.fill_with(f);
        field
    }

    /// Sets every point, halo included, to `f([i, j, k])`.
    pub fn fill_with(&mut self, f: impl Fn([isize; 3]) -> T) {
        let h = self.halo as isize;
        let r = |a: usize| {
            if a < self.dims {
                -h..self.extent[a] as isize + h
            } else {
                0..1
            }
        };
        for k in r(2) {
            for j in r(1) {
                for i in r(0) {
                    let o = self.offset([i, j, k]);
                    self.data[o] = f([i, j, k]);
                }
            }
        }
    }

    fn offset(&self, p: [isize; 3]) -> usize {
        let h = self.halo as isize;
        let mut o = 0isize;
        for (a, (&x, &stride)) in p.iter().zip(&self.stride).enumerate() {
            let pad = if a < self.dims { h } else { 0 };
            o += (x + pad) * stride as isize;
        }
        o as usize
    }

    fn check(&self, p: [isize; 3]) -> bool {
        (0..3).all(|a| {
            let h = if a < self.dims { self.halo as isize } else { 0 };
            p[a] >= -h && p[a] < self.extent[a] as isize + h
        })
    }

    /// The value at `p` (interior coordinates, halo allowed); `None` outside the storage.
    pub fn get(&self, p: [isize; 3]) -> Option<T> {
        self.check(p).then(|| self.data[self.offset(p)])
    }

    /// Sets the value at `p`; returns false (and changes nothing) outside the storage.
    pub fn set(&mut self, p: [isize; 3], v: T) -> bool {
        let ok = self.check(p);
        if ok {
            let o = self.offset(p);
            self.data[o] = v;
        }
        ok
    }

    /// The interior values in storage order (axis 0 fastest).
    pub fn interior(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        for k in 0..self.extent[2] as isize {
            for j in 0..self.extent[1] as isize {
                for i in 0..self.extent[0] as isize {
                    out.push(self.data[self.offset([i, j, k])]);
                }
            }
        }
        out
    }

    /// Number of interior points.
    pub fn len(&self) -> usize {
        self.extent.iter().product()
    }

    /// Whether the interior is empty (never: extents are at least 1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Interior extent per axis (length `dims`).
    pub fn extent(&self) -> &[usize] {
        &self.extent[..self.dims]
    }

    /// Number of axes.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Halo width.
    pub fn halo(&self) -> usize {
        self.halo
    }

    /// The whole storage, halo included.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The whole storage, halo included, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// Element strides of axes 1 and 2.
    pub fn strides(&self) -> [usize; 2] {
        [self.stride[1], self.stride[2]]
    }

    /// Index in [`Field::as_slice`] of interior point (0, 0, 0).
    pub fn origin(&self) -> usize {
        self.offset([0, 0, 0])
    }

    /// A read view for generated code.
    pub fn view(&self) -> View<T> {
        View {
            // SAFETY: the origin is inside the allocation.
            ptr: unsafe { self.data.as_ptr().add(self.origin()) },
            sy: self.stride[1] as isize,
            sz: self.stride[2] as isize,
        }
    }

    /// A write view for generated code.
    pub fn view_mut(&mut self) -> ViewMut<T> {
        let origin = self.origin();
        ViewMut {
            // SAFETY: the origin is inside the allocation.
            ptr: unsafe { self.data.as_mut_ptr().add(origin) },
            sy: self.stride[1] as isize,
            sz: self.stride[2] as isize,
        }
    }
}
