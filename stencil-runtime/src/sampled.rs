//! Sampled grids: the values a `g: Sampled<T>` kernel parameter reads at any position with
//! `g.sample(x, y)`, interpolated bilinearly between the grid's samples.
//!
//! A [`SampledGrid`] holds `nx x ny` samples over a rectangle (sample `(i, j)` at
//! `origin + (i * dx, j * dy)`), on the backend it was made for. Positions outside the
//! rectangle read its edge. On the CPU, and on the GPU by default, the kernel reads four
//! samples and interpolates them in its own arithmetic (the same operations on both, so the
//! results agree exactly). [`SampledGrid::with_hardware_filtering`] makes the GPU fetch
//! them through a texture object instead: one fetch, filtered by the texture units from
//! `f32` samples with interpolation weights of 8 fractional bits (a relative error of
//! about 1/256 of the difference between neighbouring samples).

use crate::cpu::SampledView;
use crate::cuda::texture::Texture;
use crate::{Backend, Error, Field, Real};
use std::sync::Arc;

/// How kernels on the GPU interpolate a [`SampledGrid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filtering {
    /// Four loads and the interpolation in the kernel's precision (every backend).
    Software,
    /// A texture fetch with hardware filtering (CUDA only; `f32` samples).
    Hardware,
}

/// A 2D grid of samples that kernels interpolate at computed positions.
#[derive(Clone, Debug)]
pub struct SampledGrid<T: Real> {
    samples: Field<T>,
    extent: [usize; 2],
    origin: [f64; 2],
    spacing: [f64; 2],
    texture: Option<Arc<Texture>>,
}

impl<T: Real> SampledGrid<T> {
    /// `extent[0] x extent[1]` samples (row by row: sample `(i, j)` is
    /// `samples[i + j * extent[0]]`, at `origin + (i * spacing[0], j * spacing[1])`) on
    /// `backend`, interpolated in software.
    ///
    /// Fails if an axis has fewer than 2 samples, `samples` has the wrong length or holds
    /// a value that is not finite, or the origin or spacing is not finite and positive.
    pub fn new(
        backend: &Backend,
        extent: [usize; 2],
        origin: [f64; 2],
        spacing: [f64; 2],
        samples: &[T],
    ) -> Result<SampledGrid<T>, Error> {
        let bad = |m: String| Err(Error::InvalidField(format!("sampled grid: {m}")));
        if extent.iter().any(|&n| n < 2) {
            return bad(format!(
                "extent {extent:?} has an axis with fewer than 2 samples; interpolation needs at least 2 per axis"
            ));
        }
        let count = extent[0].checked_mul(extent[1]);
        if count != Some(samples.len()) {
            return bad(format!(
                "{} samples given for an extent of {extent:?}; pass extent[0] * extent[1] values, row by row",
                samples.len()
            ));
        }
        if !origin.iter().all(|o| o.is_finite()) {
            return bad(format!("origin {origin:?} is not finite"));
        }
        if !spacing.iter().all(|&h| h.is_finite() && h > 0.0) {
            return bad(format!(
                "spacing {spacing:?} must be finite and positive on both axes"
            ));
        }
        if let Some(k) = samples.iter().position(|v| !v.is_finite()) {
            return bad(format!(
                "sample ({}, {}) is {}; every sample must be finite",
                k % extent[0],
                k / extent[0],
                samples[k]
            ));
        }
        // One row of `nx * ny` values: contiguous on every backend, as the kernels index it.
        let host = Field::from_fn(&[samples.len()], 0, |[k, _, _]| samples[k as usize]);
        Ok(SampledGrid {
            samples: host.to(backend)?,
            extent,
            origin,
            spacing,
            texture: None,
        })
    }

    /// The same grid read on the GPU through a texture object with hardware filtering
    /// ([`Filtering::Hardware`]). Fails on the CPU backend, which has no texture units.
    pub fn with_hardware_filtering(mut self, backend: &Backend) -> Result<SampledGrid<T>, Error> {
        let Backend::Cuda(cuda) = backend else {
            return Err(Error::Backend(
                "hardware filtering of a sampled grid needs a CUDA device; on the CPU use software filtering (the default)".into(),
            ));
        };
        let values: Vec<f32> = self
            .samples
            .interior()?
            .iter()
            .map(|v| v.as_f64() as f32)
            .collect();
        self.texture = Some(Arc::new(Texture::new(
            cuda,
            self.extent[0],
            self.extent[1],
            &values,
        )?));
        Ok(self)
    }

    /// How GPU kernels interpolate this grid.
    pub fn filtering(&self) -> Filtering {
        match self.texture {
            Some(_) => Filtering::Hardware,
            None => Filtering::Software,
        }
    }

    /// Samples per axis.
    pub fn extent(&self) -> [usize; 2] {
        self.extent
    }

    /// The position of sample `(0, 0)`.
    pub fn origin(&self) -> [f64; 2] {
        self.origin
    }

    /// The distance between samples per axis.
    pub fn spacing(&self) -> [f64; 2] {
        self.spacing
    }

    /// Where the samples live.
    pub fn location(&self) -> String {
        self.samples.location()
    }

    /// The origin and inverse spacing in the kernel's precision: what every backend
    /// computes positions in samples from.
    fn frame(&self) -> ([T; 2], [T; 2]) {
        (
            self.origin.map(T::from_f64),
            self.spacing.map(|h| T::from_f64(1.0 / h)),
        )
    }

    /// The view the generated CPU code reads (the grid must be in host memory).
    pub fn cpu_view(&self, kernel: &str, param: &str) -> Result<SampledView<T>, Error> {
        let values = self.samples.view(kernel, param)?;
        let (origin, inverse_spacing) = self.frame();
        Ok(SampledView {
            values: values.ptr,
            nx: self.extent[0] as i64,
            ny: self.extent[1] as i64,
            origin,
            inverse_spacing,
        })
    }

    /// The launch parameters on CUDA device `ordinal`, or `None` if the samples are not
    /// on that device.
    pub(crate) fn device_args(&self, ordinal: usize) -> Option<DeviceArgs<T>> {
        let (device, ptr, _) = self.samples.device_args()?;
        if device != ordinal {
            return None;
        }
        let (origin, inverse_spacing) = self.frame();
        Some(DeviceArgs {
            handle: self.texture.as_ref().map_or(ptr, |t| t.object),
            extent: self.extent.map(|n| n as u64),
            origin,
            inverse_spacing,
        })
    }
}

/// A sampled grid's launch parameters, in the order of the kernels' calling convention.
pub(crate) struct DeviceArgs<T> {
    /// The samples' address (software filtering) or the texture object (hardware).
    pub handle: u64,
    /// Samples per axis.
    pub extent: [u64; 2],
    /// The position of sample `(0, 0)`.
    pub origin: [T; 2],
    /// One over the spacing per axis.
    pub inverse_spacing: [T; 2],
}
