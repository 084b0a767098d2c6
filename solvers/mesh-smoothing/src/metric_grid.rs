//! The metric field super-sampled on a structured grid over the mesh's bounding box, and
//! looked up bilinearly: the alternative to barycentric interpolation in the containing
//! element (no element search at lookup time; on a GPU, what a texture with hardware
//! filtering does).

use crate::mesh::{barycentric, interpolate};
use crate::{Mesh, MeshError, Metric};
use rayon::prelude::*;
use stencil_runtime::{Backend, Filtering, SampledGrid};

/// `n x n` samples of the metric over `[lo, hi]`.
#[derive(Clone, Debug)]
pub struct MetricGrid {
    n: usize,
    lo: [f64; 2],
    step: [f64; 2],
    samples: Vec<Metric>,
}

impl MetricGrid {
    /// Samples `mesh`'s metric (barycentric in the containing triangle; the nearest
    /// triangle's vertex mean outside the mesh) at `n x n` nodes, `n >= 2`.
    pub fn sample(mesh: &Mesh, n: usize) -> MetricGrid {
        let n = n.max(2);
        let (lo, hi) = mesh.bounds();
        let step = [
            (hi[0] - lo[0]) / (n - 1) as f64,
            (hi[1] - lo[1]) / (n - 1) as f64,
        ];
        // Buckets of triangles by bounding box, about one triangle per bucket.
        let b = ((mesh.triangles.len() as f64).sqrt().ceil() as usize).max(1);
        let cell = [(hi[0] - lo[0]) / b as f64, (hi[1] - lo[1]) / b as f64];
        let bucket_of = |x: f64, a: usize| (((x - lo[a]) / cell[a]) as usize).min(b - 1);
        let mut buckets: Vec<Vec<usize>> = vec![vec![]; b * b];
        for (k, t) in mesh.triangles.iter().enumerate() {
            let p = t.map(|v| mesh.points[v]);
            let (x0, x1) = (
                p.iter().map(|q| q[0]).fold(f64::INFINITY, f64::min),
                p.iter().map(|q| q[0]).fold(f64::NEG_INFINITY, f64::max),
            );
            let (y0, y1) = (
                p.iter().map(|q| q[1]).fold(f64::INFINITY, f64::min),
                p.iter().map(|q| q[1]).fold(f64::NEG_INFINITY, f64::max),
            );
            for j in bucket_of(y0, 1)..=bucket_of(y1, 1) {
                for i in bucket_of(x0, 0)..=bucket_of(x1, 0) {
                    buckets[j * b + i].push(k);
                }
            }
        }
        let at = |x: [f64; 2]| -> Metric {
            let list = &buckets[bucket_of(x[1], 1) * b + bucket_of(x[0], 0)];
            let mut nearest = (f64::INFINITY, Metric::IDENTITY);
            for &k in list {
                let t = mesh.triangles[k];
                let p = t.map(|v| mesh.points[v]);
                let ms = t.map(|v| mesh.metric[v]);
                let (l, outside) = barycentric(p, x);
                if outside <= 1e-12 {
                    return interpolate(l, ms);
                }
                if outside < nearest.0 {
                    nearest = (outside, Metric::mean(&ms));
                }
            }
            nearest.1
        };
        let samples = (0..n * n)
            .into_par_iter()
            .map(|k| {
                at([
                    lo[0] + (k % n) as f64 * step[0],
                    lo[1] + (k / n) as f64 * step[1],
                ])
            })
            .collect();
        MetricGrid {
            n,
            lo,
            step,
            samples,
        }
    }

    /// Samples per axis.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The three components `[a, b, c]` of the metric `[[a, b], [b, c]]` as sampled grids
    /// on `backend`, which kernels interpolate bilinearly; with `Filtering::Hardware`, on
    /// the GPU through textures.
    pub fn to_sampled(
        &self,
        backend: &Backend,
        filtering: Filtering,
    ) -> Result<[SampledGrid<f64>; 3], MeshError> {
        let component = |f: fn(&Metric) -> f64| -> Result<SampledGrid<f64>, MeshError> {
            let values: Vec<f64> = self.samples.iter().map(f).collect();
            let g = SampledGrid::new(backend, [self.n; 2], self.lo, self.step, &values)?;
            Ok(match filtering {
                Filtering::Software => g,
                Filtering::Hardware => g.with_hardware_filtering(backend)?,
            })
        };
        Ok([
            component(|m| m.a)?,
            component(|m| m.b)?,
            component(|m| m.c)?,
        ])
    }

    /// The metric at `x` by bilinear interpolation of the samples (clamped to the box).
    pub fn at(&self, x: [f64; 2]) -> Metric {
        let n = self.n;
        let u = ((x[0] - self.lo[0]) / self.step[0]).clamp(0.0, (n - 1) as f64);
        let v = ((x[1] - self.lo[1]) / self.step[1]).clamp(0.0, (n - 1) as f64);
        let (i, j) = ((u as usize).min(n - 2), (v as usize).min(n - 2));
        let (fu, fv) = (u - i as f64, v - j as f64);
        let s = |di: usize, dj: usize| self.samples[(j + dj) * n + i + di];
        let w = [
            (1.0 - fu) * (1.0 - fv),
            fu * (1.0 - fv),
            (1.0 - fu) * fv,
            fu * fv,
        ];
        let ms = [s(0, 0), s(1, 0), s(0, 1), s(1, 1)];
        let mix = |f: fn(&Metric) -> f64| (0..4).map(|k| w[k] * f(&ms[k])).sum::<f64>();
        Metric {
            a: mix(|m| m.a),
            b: mix(|m| m.b),
            c: mix(|m| m.c),
        }
    }
}
