//! Test meshes of any size: a triangulated unit square, interior vertices jittered, with
//! an analytic anisotropic metric that asks for thin elements along a circular front.

use crate::{Mesh, MeshError, Metric};

/// The metric at `(x, y)`: across the circle of radius 0.35 about (0.5, 0.5) the size is
/// `h_min` at the front, growing to `h_max` away from it; along the front it is `h_max`.
pub fn front_metric(x: f64, y: f64, h_min: f64, h_max: f64) -> Metric {
    let (dx, dy) = (x - 0.5, y - 0.5);
    let r = (dx * dx + dy * dy).sqrt().max(1e-12);
    let d = (r - 0.35).abs();
    let across = h_min + (h_max - h_min) * (d / 0.15).min(1.0);
    // Eigenvectors: the radial direction (size `across`) and the tangent (`h_max`).
    let (n0, n1) = (dx / r, dy / r);
    let (l_r, l_t) = (1.0 / (across * across), 1.0 / (h_max * h_max));
    Metric {
        a: l_r * n0 * n0 + l_t * n1 * n1,
        b: (l_r - l_t) * n0 * n1,
        c: l_r * n1 * n1 + l_t * n0 * n0,
    }
}

/// The most vertices per side of [`square_with_front`]: `n^2` below 2^32, what a mesh
/// table can number.
pub const MAX_SIDE: usize = 65_535;

/// An `n x n`-vertex triangulation of the unit square (each cell split along a diagonal),
/// interior vertices jittered by up to `jitter` of a cell (below 0.5 keeps every element
/// positive), with [`front_metric`] sized for `n`.
pub fn square_with_front(n: usize, jitter: f64) -> Result<Mesh, MeshError> {
    if !(3..=MAX_SIDE).contains(&n) || !(0.0..0.5).contains(&jitter) {
        return Err(MeshError::Invalid(format!(
            "a generated mesh needs 3 to {MAX_SIDE} vertices per side (a mesh table numbers fewer than 2^32 vertices) and a jitter in [0, 0.5); got n = {n}, jitter = {jitter}"
        )));
    }
    let h = 1.0 / (n - 1) as f64;
    let hash = |k: usize, salt: u64| {
        let mut z = (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
        z = (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        ((z >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let out_of_memory = |_| {
        MeshError::Runtime(stencil_runtime::Error::HostOutOfMemory {
            bytes: n * n * std::mem::size_of::<[f64; 2]>(),
            what: format!("a generated mesh of {n} x {n} vertices"),
        })
    };
    let mut points = Vec::new();
    points.try_reserve_exact(n * n).map_err(out_of_memory)?;
    for j in 0..n {
        for i in 0..n {
            let k = j * n + i;
            let interior = i > 0 && j > 0 && i < n - 1 && j < n - 1;
            let (ox, oy) = if interior {
                (2.0 * jitter * h * hash(k, 1), 2.0 * jitter * h * hash(k, 2))
            } else {
                (0.0, 0.0)
            };
            points.push([i as f64 * h + ox, j as f64 * h + oy]);
        }
    }
    let mut triangles = Vec::new();
    triangles
        .try_reserve_exact(2 * (n - 1) * (n - 1))
        .map_err(out_of_memory)?;
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let a = j * n + i;
            let (b, c, d) = (a + 1, a + n, a + n + 1);
            triangles.push([a, b, d]);
            triangles.push([a, d, c]);
        }
    }
    // Sizes near the mesh's own: smoothing moves vertices, it cannot add any.
    let (h_min, h_max) = (0.5 * h, 1.2 * h);
    let metric = points
        .iter()
        .map(|p| front_metric(p[0], p[1], h_min, h_max))
        .collect();
    Mesh::new(points, triangles, metric)
}
