//! [`Axes`]: one value per axis, as a parameter group holds a member written `c: Axes<T>`.

use std::ops::Deref;

/// The most axes a kernel has.
const MAX_AXES: usize = 3;

/// One value per axis of a kernel (at most three), held inline: the Rust type of a
/// parameter group's member `c: Axes<T>` (see "Parameter groups" in `docs/language.md`).
/// A kernel launched with the group checks that the member holds one value per axis of
/// the kernel, as it checks a slice passed for an `Axes` parameter.
///
/// ```
/// use stencil_runtime::Axes;
/// let c = Axes::new(&[1.0, 0.5]);
/// assert_eq!((c.len(), c[1]), (2, 0.5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axes<T> {
    values: [T; MAX_AXES],
    len: usize,
}

impl<T: Copy + Default> Axes<T> {
    /// The values of `values`, one per axis. More than three values are counted (so that
    /// the launch reports the mismatch) but not kept.
    pub fn new(values: &[T]) -> Self {
        let mut kept = [T::default(); MAX_AXES];
        let n = values.len().min(MAX_AXES);
        kept[..n].copy_from_slice(&values[..n]);
        Self {
            values: kept,
            len: values.len(),
        }
    }
}

impl<T> Axes<T> {
    /// How many values were given (the kernel's launch checks it against its axes).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value was given.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T> Deref for Axes<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.values[..self.len.min(MAX_AXES)]
    }
}

impl<T: Copy + Default> From<&[T]> for Axes<T> {
    fn from(values: &[T]) -> Self {
        Self::new(values)
    }
}

impl<T: Copy + Default, const N: usize> From<[T; N]> for Axes<T> {
    fn from(values: [T; N]) -> Self {
        Self::new(&values)
    }
}
