//! Element quality in the metric, after Vasilevskii & Lipnikov (1999):
//!
//! ```text
//! Q(K) = 12 sqrt(3) |K|_M / |dK|_M^2 * F(|dK|_M / 3),  F(x) = (min(x, 1/x) (2 - min(x, 1/x)))^3
//! ```
//!
//! with `M` the mean of the element's vertex metrics, `|K|_M = sqrt(det M) |K|` its area and
//! `|dK|_M` its perimeter measured in `M`. `Q` is 1 for an equilateral triangle with unit
//! edges in the metric, lower for a distorted or wrongly sized one, and at most 1.

use crate::mesh::{signed_area2, Mesh};
use crate::Metric;

/// The size factor `F(x)`: 1 at `x = 1`, falling to 0 as `x` goes to 0 or infinity.
fn size_factor(x: f64) -> f64 {
    let m = x.min(1.0 / x);
    (m * (2.0 - m)).powi(3)
}

/// The quality of the triangle with corners `p` (counter-clockwise) and vertex metrics
/// `m`; negative for an inverted triangle.
pub fn triangle_quality(p: [[f64; 2]; 3], m: [Metric; 3]) -> f64 {
    let m = Metric::mean(&m);
    let area = 0.5 * signed_area2(p[0], p[1], p[2]) * m.det().sqrt();
    let perimeter: f64 = (0..3)
        .map(|i| {
            let (a, b) = (p[i], p[(i + 1) % 3]);
            m.length2([b[0] - a[0], b[1] - a[1]]).sqrt()
        })
        .sum();
    12.0 * 3f64.sqrt() * area / (perimeter * perimeter) * size_factor(perimeter / 3.0)
}

/// The quality of triangle `k` of `mesh` with its vertices at `points`.
pub fn element_quality(mesh: &Mesh, points: &[[f64; 2]], k: usize) -> f64 {
    let t = mesh.triangles[k];
    triangle_quality(t.map(|v| points[v]), t.map(|v| mesh.metric[v]))
}

/// Every element's quality.
pub fn qualities(mesh: &Mesh) -> Vec<f64> {
    (0..mesh.triangles.len())
        .map(|k| element_quality(mesh, &mesh.points, k))
        .collect()
}

/// The smallest and the mean of `q`.
pub fn min_mean(q: &[f64]) -> (f64, f64) {
    let min = q.iter().copied().fold(f64::INFINITY, f64::min);
    (min, q.iter().sum::<f64>() / q.len().max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_equilateral_unit_triangle_has_quality_one() {
        let h = 3f64.sqrt() / 2.0;
        let mesh = Mesh::new(
            vec![[0.0, 0.0], [1.0, 0.0], [0.5, h]],
            vec![[0, 1, 2]],
            vec![Metric::IDENTITY; 3],
        )
        .unwrap();
        assert!((qualities(&mesh)[0] - 1.0).abs() < 1e-12);
        // Twice as large in the metric: the size factor F(2) = (0.5 * 1.5)^3.
        let big = Metric {
            a: 4.0,
            b: 0.0,
            c: 4.0,
        };
        let mesh = Mesh::new(mesh.points.clone(), mesh.triangles.clone(), vec![big; 3]).unwrap();
        assert!((qualities(&mesh)[0] - 0.75f64.powi(3)).abs() < 1e-12);
    }
}
