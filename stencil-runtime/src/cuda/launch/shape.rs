//! Choosing a dense launch's shape: the default, or the fastest
//! candidate found by timing on first use (cached per kernel, device and size).

use super::{addresses, CudaLaunch, KernelCode};
use crate::cuda::tune::{cache_key, LaunchShape, Tuning};
use crate::cuda::Cuda;
use crate::{Error, Precision};

/// Timed launches per candidate shape when tuning (after one untimed).
const TUNE_REPS: usize = 3;

impl CudaLaunch<'_> {
    /// The launch shape: by the backend's policy, tuning on first use when it is on.
    pub(super) fn shape(&self, n: [usize; 3]) -> Result<LaunchShape, Error> {
        let (code, p) = (self.code, self.precision);
        let usable = |s: &LaunchShape| fits(code, p, n, s, self.aligned);
        let default = LaunchShape::default_for(code.dims);
        match self.cuda.tuning {
            Tuning::Off => Ok(default),
            Tuning::Fixed(s) if usable(&s) => Ok(s),
            Tuning::Fixed(_) => Ok(default),
            // Running an in-place kernel to time it would change its result.
            Tuning::On if code.in_place => Ok(default),
            // Timing needs waiting, which a graph capture cannot do.
            Tuning::On if self.cuda.is_capturing() => Ok(self
                .cuda
                .cached_shape(code, p, n)
                .1
                .filter(usable)
                .unwrap_or(default)),
            Tuning::On => {
                let (key, cached) = self.cuda.cached_shape(code, p, n);
                if let Some(s) = cached.filter(usable) {
                    return Ok(s);
                }
                // A domain too small to fill the device runs a point per thread: more
                // points per thread would only lengthen the launch's critical path (which
                // back-to-back timing hides, and a chain of dependent launches does not).
                let points: usize = n.iter().product();
                let small = points <= self.cuda.stream().device.resident_threads;
                let candidates: Vec<LaunchShape> =
                    LaunchShape::candidates(code.dims, code.points, code.ptx(p).vector)
                        .into_iter()
                        .filter(usable)
                        .filter(|s| !small || (s.points == 1 && s.vector == 1))
                        .collect();
                let best = self.search(&candidates, n)?.unwrap_or(default);
                let device = &self.cuda.stream().device;
                device
                    .tuned
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .put(key, best);
                Ok(best)
            }
        }
    }

    /// Times each candidate on the real arguments (outputs are distinct from inputs, so
    /// running a kernel again gives the same result) and returns the fastest.
    pub(super) fn search(
        &self,
        candidates: &[LaunchShape],
        n: [usize; 3],
    ) -> Result<Option<LaunchShape>, Error> {
        let mut timer = self.cuda.timer()?;
        let mut best: Option<(f64, LaunchShape)> = None;
        for &shape in candidates {
            let Some(grid) = shape.grid(self.code.dims, n) else {
                continue;
            };
            let partials = self.partials(grid)?;
            let at = addresses(&partials);
            // A shape the kernel cannot launch with (too many registers for the block) is
            // skipped; any other failure surfaces when the timer waits.
            if self.launch(n, shape, grid, &at).is_err() {
                continue;
            }
            timer.start()?;
            for _ in 0..TUNE_REPS {
                self.launch(n, shape, grid, &at)?;
            }
            let t = timer.stop().map_err(|e| self.failed(e))?;
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, shape));
            }
        }
        Ok(best.map(|(_, s)| s))
    }
}

impl Cuda {
    /// The launch shape `code` would use at precision `p` over domain `n` under this
    /// backend's policy, without searching: the tuned shape if one is cached, else the
    /// fixed or default shape. (For reports; assumes aligned fields.)
    pub fn launch_shape(&self, code: &KernelCode, p: Precision, n: [usize; 3]) -> LaunchShape {
        let default = LaunchShape::default_for(code.dims);
        match self.tuning {
            Tuning::Off => default,
            Tuning::Fixed(s) if fits(code, p, n, &s, true) => s,
            Tuning::Fixed(_) => default,
            Tuning::On => self.cached_shape(code, p, n).1.unwrap_or(default),
        }
    }

    /// The tuning-cache key of `code` at `p` over `n`, and the shape cached under it.
    pub(super) fn cached_shape(
        &self,
        code: &KernelCode,
        p: Precision,
        n: [usize; 3],
    ) -> (String, Option<LaunchShape>) {
        let device = &self.stream().device;
        let name = match p {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        };
        let key = cache_key(code.ptx(p).hash, name, &device.name, n);
        let cached = device
            .tuned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key);
        (key, cached)
    }
}

/// Whether `code` at `p` has an entry for shape `s` and the shape's grid covers `n`; vector
/// shapes also need every field `aligned` to the vector.
fn fits(code: &KernelCode, p: Precision, n: [usize; 3], s: &LaunchShape, aligned: bool) -> bool {
    code.points.contains(&s.points)
        && (s.vector == 1 || (s.vector == code.ptx(p).vector && aligned))
        && s.grid(code.dims, n).is_some()
}
