//! [`Downsampler`]: a field made small enough for the page's view where it lives, so that
//! a frame copies a view's worth of values from the device, never the whole field.
//!
//! Each halving is one launch of [`halve`], a kernel of the stencil language: a point of
//! the half-size grid is the mean of the (up to) four points it covers. Halving repeats
//! until the field fits the view.

use crate::Error;
use stencil_runtime::prelude::*;

/// The mean of the points of `fine` that this point of the grid half its size covers:
/// four, or two (or one) where an odd extent leaves no partner along an axis.
#[stencil(dims = 2)]
pub fn halve<T: Real>(fine: Fine<T>, coarse: Out<T>, fine_extent: Axes<i64>) {
    let east = 2 * index(0) + 1 < fine_extent[0];
    let north = 2 * index(1) + 1 < fine_extent[1];
    let e = if east { fine[(1, 0)] } else { fine };
    let n = if north { fine[(0, 1)] } else { fine };
    let ne = if east && north {
        fine[(1, 1)]
    } else if east {
        e
    } else {
        n
    };
    coarse = 0.25 * (fine + e + n + ne);
}

/// Halves fields on a backend until they fit a view, keeping its half-size fields
/// between frames.
pub struct Downsampler<T: Real> {
    backend: Backend,
    /// The source extent the levels were made for, and the levels.
    levels: Option<([usize; 2], Vec<Field<T>>)>,
}

impl<T: Real> Downsampler<T> {
    /// A downsampler on `backend` (where the fields it is given live).
    pub fn new(backend: &Backend) -> Downsampler<T> {
        Downsampler {
            backend: backend.clone(),
            levels: None,
        }
    }

    /// The extents of the successive halvings of `extent` until it fits `view`.
    pub fn halvings(extent: [usize; 2], view: [usize; 2]) -> Vec<[usize; 2]> {
        let mut out = vec![];
        let mut e = extent;
        while e[0] > view[0].max(1) || e[1] > view[1].max(1) {
            e = [e[0].div_ceil(2), e[1].div_ceil(2)];
            out.push(e);
        }
        out
    }

    /// `source` (a 2D field with a halo of at least one point) downsampled to fit `view`
    /// (columns, rows): its columns, rows and values, row by row, as `f32`.
    pub fn frame(
        &mut self,
        source: &Field<T>,
        view: [usize; 2],
    ) -> Result<(usize, usize, Vec<f32>), Error> {
        if source.dims() != 2 {
            return Err(Error::Frame(format!(
                "a frame is drawn from a 2D field, not a {}D one",
                source.dims()
            )));
        }
        let extent = [source.extent()[0], source.extent()[1]];
        let sizes = Self::halvings(extent, view);
        let fresh = match &self.levels {
            Some((e, levels)) => {
                *e != extent
                    || levels.len() != sizes.len()
                    || levels.iter().zip(&sizes).any(|(f, s)| f.extent() != s)
            }
            None => true,
        };
        if fresh {
            let levels = sizes
                .iter()
                .map(|s| Field::zeros_on(&self.backend, s, 1))
                .collect::<Result<Vec<_>, _>>()?;
            self.levels = Some((extent, levels));
        }
        let levels = match &mut self.levels {
            Some((_, levels)) => levels,
            None => unreachable!("made above"),
        };
        let mut fine_extent = [extent[0] as i64, extent[1] as i64];
        for k in 0..levels.len() {
            let (done, rest) = levels.split_at_mut(k);
            let fine = done.last().unwrap_or(source);
            halve::launch(&self.backend, fine, &mut rest[0], &fine_extent)?;
            fine_extent = [rest[0].extent()[0] as i64, rest[0].extent()[1] as i64];
        }
        let last = levels.last().unwrap_or(source);
        let values = last.interior()?;
        let (w, h) = (last.extent()[0], last.extent()[1]);
        Ok((
            w,
            h,
            values.into_iter().map(|v| v.as_f64() as f32).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halvings_stop_when_the_field_fits() {
        assert!(Downsampler::<f64>::halvings([100, 50], [800, 600]).is_empty());
        assert_eq!(
            Downsampler::<f64>::halvings([1025, 513], [800, 600]),
            vec![[513, 257]]
        );
        assert_eq!(
            Downsampler::<f64>::halvings([3001, 10], [700, 600]),
            vec![[1501, 5], [751, 3], [376, 2]]
        );
    }

    #[test]
    fn a_halving_is_the_mean_of_the_points_covered_at_odd_edges_too() {
        let (nx, ny) = (7, 5);
        let value = |i: isize, j: isize| (i * 10 + j * j) as f64;
        let source = Field::from_fn(&[nx, ny], 1, |[i, j, _]| value(i, j));
        let mut d = Downsampler::<f64>::new(&Backend::Cpu);
        let (w, h, got) = d.frame(&source, [4, 3]).unwrap();
        assert_eq!((w, h), (4, 3));
        for cj in 0..h as isize {
            for ci in 0..w as isize {
                let mut sum = 0.0;
                let mut n = 0.0;
                for j in 2 * cj..(2 * cj + 2).min(ny as isize) {
                    for i in 2 * ci..(2 * ci + 2).min(nx as isize) {
                        sum += value(i, j);
                        n += 1.0;
                    }
                }
                // Along one axis without a partner the point counts twice: the mean is
                // the same.
                let want = sum / n;
                let at = (ci + cj * w as isize) as usize;
                assert!(
                    (got[at] as f64 - want).abs() < 1e-4,
                    "({ci}, {cj}): {} vs {want}",
                    got[at]
                );
            }
        }
    }
}
