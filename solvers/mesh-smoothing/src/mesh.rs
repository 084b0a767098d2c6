//! Triangular meshes with a metric per vertex, checked on construction, and their
//! adjacency in CSR form.

use crate::MeshError;
use std::collections::HashMap;

/// A symmetric 2x2 metric tensor `[[a, b], [b, c]]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metric {
    /// `M_11`.
    pub a: f64,
    /// `M_12 = M_21`.
    pub b: f64,
    /// `M_22`.
    pub c: f64,
}

impl Metric {
    /// The identity (lengths measured as they are).
    pub const IDENTITY: Metric = Metric {
        a: 1.0,
        b: 0.0,
        c: 1.0,
    };

    /// `det M`.
    pub fn det(&self) -> f64 {
        self.a * self.c - self.b * self.b
    }

    /// Whether it is positive definite (and finite).
    pub fn is_spd(&self) -> bool {
        self.a.is_finite()
            && self.b.is_finite()
            && self.c.is_finite()
            && self.a > 0.0
            && self.det() > 0.0
    }

    /// The squared length `e^T M e` of `e`.
    pub fn length2(&self, e: [f64; 2]) -> f64 {
        self.a * e[0] * e[0] + 2.0 * self.b * e[0] * e[1] + self.c * e[1] * e[1]
    }

    /// The mean of metrics (componentwise).
    pub fn mean(ms: &[Metric]) -> Metric {
        let n = ms.len() as f64;
        let (a, b, c) = ms
            .iter()
            .fold((0.0, 0.0, 0.0), |(a, b, c), m| (a + m.a, b + m.b, c + m.c));
        Metric {
            a: a / n,
            b: b / n,
            c: c / n,
        }
    }
}

/// A 2D triangular mesh: vertices, counter-clockwise triangles, a metric per vertex, and
/// the adjacency (vertex to vertices, vertex to elements) in CSR form.
#[derive(Clone, Debug)]
pub struct Mesh {
    /// Vertex coordinates.
    pub points: Vec<[f64; 2]>,
    /// Vertex indices of each triangle, counter-clockwise.
    pub triangles: Vec<[usize; 3]>,
    /// The metric at each vertex.
    pub metric: Vec<Metric>,
    /// `neighbours[neighbour_start[v]..neighbour_start[v + 1]]`: the vertices sharing an
    /// edge with `v`, ascending.
    pub neighbour_start: Vec<usize>,
    /// See `neighbour_start`.
    pub neighbours: Vec<usize>,
    /// `elements[element_start[v]..element_start[v + 1]]`: the triangles around `v`.
    pub element_start: Vec<usize>,
    /// See `element_start`.
    pub elements: Vec<usize>,
    /// Whether each vertex lies on the boundary (on an edge of one triangle only).
    pub boundary: Vec<bool>,
}

/// Twice the signed area of triangle `(p, q, r)`.
pub fn signed_area2(p: [f64; 2], q: [f64; 2], r: [f64; 2]) -> f64 {
    (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
}

/// The barycentric coordinates of `x` in triangle `p`, and how far outside it lies (the
/// most negative coordinate, negated; 0 inside).
pub fn barycentric(p: [[f64; 2]; 3], x: [f64; 2]) -> ([f64; 3], f64) {
    let total = signed_area2(p[0], p[1], p[2]);
    let l = [
        signed_area2(x, p[1], p[2]) / total,
        signed_area2(p[0], x, p[2]) / total,
        signed_area2(p[0], p[1], x) / total,
    ];
    (l, -l.iter().copied().fold(0.0, f64::min))
}

/// The metric interpolated linearly at barycentric coordinates `l` of vertex metrics `m`.
pub fn interpolate(l: [f64; 3], m: [Metric; 3]) -> Metric {
    let mix = |f: fn(&Metric) -> f64| l[0] * f(&m[0]) + l[1] * f(&m[1]) + l[2] * f(&m[2]);
    Metric {
        a: mix(|m| m.a),
        b: mix(|m| m.b),
        c: mix(|m| m.c),
    }
}

impl Mesh {
    /// The lower-left and upper-right corners of the vertices' bounding box.
    pub fn bounds(&self) -> ([f64; 2], [f64; 2]) {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in &self.points {
            for a in 0..2 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
        (lo, hi)
    }

    /// Builds and checks a mesh. If every triangle is clockwise the orientation is turned;
    /// a mix of orientations (an inverted element), a degenerate element, an index out of
    /// range, a vertex whose metric is not symmetric positive definite or an edge shared
    /// by more than two triangles is an error naming the first offender.
    pub fn new(
        points: Vec<[f64; 2]>,
        mut triangles: Vec<[usize; 3]>,
        metric: Vec<Metric>,
    ) -> Result<Mesh, MeshError> {
        let bad = |m: String| Err(MeshError::Invalid(m));
        if metric.len() != points.len() {
            return bad(format!(
                "{} metrics for {} vertices: one per vertex expected",
                metric.len(),
                points.len()
            ));
        }
        if let Some(v) = points
            .iter()
            .position(|p| !(p[0].is_finite() && p[1].is_finite()))
        {
            return bad(format!(
                "vertex {v} has a non-finite coordinate {:?}",
                points[v]
            ));
        }
        if let Some((k, t)) = triangles.iter().enumerate().find(|(_, t)| {
            t.iter().any(|&v| v >= points.len()) || t[0] == t[1] || t[1] == t[2] || t[0] == t[2]
        }) {
            return bad(format!(
                "element {k} has vertices {t:?}: indices must be distinct and below {}",
                points.len()
            ));
        }
        if let Some(v) = metric.iter().position(|m| !m.is_spd()) {
            return bad(format!(
                "the metric at vertex {v} ({:?}) is not positive definite",
                metric[v]
            ));
        }
        let area2 = |t: &[usize; 3]| signed_area2(points[t[0]], points[t[1]], points[t[2]]);
        let clockwise = triangles.iter().filter(|t| area2(t) < 0.0).count();
        if clockwise == triangles.len() {
            for t in &mut triangles {
                t.swap(1, 2);
            }
        }
        // Degenerate: an area below 1e-12 of the squared longest edge.
        for (k, t) in triangles.iter().enumerate() {
            let a = area2(t);
            let longest = (0..3)
                .map(|i| {
                    let (p, q) = (points[t[i]], points[t[(i + 1) % 3]]);
                    (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)
                })
                .fold(0.0, f64::max);
            if a.abs() <= 1e-12 * longest {
                return bad(format!(
                    "element {k} {t:?} is degenerate (area {})",
                    0.5 * a
                ));
            }
            if a < 0.0 {
                return bad(format!(
                    "element {k} {t:?} is inverted (signed area {}, its neighbours are counter-clockwise)",
                    0.5 * a
                ));
            }
        }
        let mut edges: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        for (k, t) in triangles.iter().enumerate() {
            for i in 0..3 {
                let (p, q) = (t[i], t[(i + 1) % 3]);
                edges.entry((p.min(q), p.max(q))).or_default().push(k);
            }
        }
        if let Some(((p, q), ks)) = edges
            .iter()
            .filter(|(_, ks)| ks.len() > 2)
            .min_by_key(|((p, q), ks)| (ks[0], *p, *q))
        {
            return bad(format!(
                "the edge ({p}, {q}) is shared by elements {ks:?}: the mesh is not manifold"
            ));
        }
        let n = points.len();
        let mut boundary = vec![false; n];
        let mut adjacent: Vec<Vec<usize>> = vec![vec![]; n];
        for (&(p, q), ks) in &edges {
            adjacent[p].push(q);
            adjacent[q].push(p);
            if ks.len() == 1 {
                boundary[p] = true;
                boundary[q] = true;
            }
        }
        let mut around: Vec<Vec<usize>> = vec![vec![]; n];
        for (k, t) in triangles.iter().enumerate() {
            for &v in t {
                around[v].push(k);
            }
        }
        let csr = |lists: Vec<Vec<usize>>| {
            let mut start = vec![0];
            let mut flat = vec![];
            for mut l in lists {
                l.sort_unstable();
                flat.extend(l);
                start.push(flat.len());
            }
            (start, flat)
        };
        let (neighbour_start, neighbours) = csr(adjacent);
        let (element_start, elements) = csr(around);
        Ok(Mesh {
            points,
            triangles,
            metric,
            neighbour_start,
            neighbours,
            element_start,
            elements,
            boundary,
        })
    }

    /// The vertices sharing an edge with `v`.
    pub fn neighbours_of(&self, v: usize) -> &[usize] {
        &self.neighbours[self.neighbour_start[v]..self.neighbour_start[v + 1]]
    }

    /// The triangles around `v`.
    pub fn elements_of(&self, v: usize) -> &[usize] {
        &self.elements[self.element_start[v]..self.element_start[v + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> (Vec<[f64; 2]>, Vec<[usize; 3]>) {
        let p = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.5]];
        let t = vec![[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]];
        (p, t)
    }

    #[test]
    fn adjacency_and_boundary() {
        let (p, t) = square();
        let m = Mesh::new(p, t, vec![Metric::IDENTITY; 5]).unwrap();
        assert_eq!(m.neighbours_of(4), &[0, 1, 2, 3]);
        assert_eq!(m.elements_of(0), &[0, 3]);
        assert_eq!(m.boundary, vec![true, true, true, true, false]);
    }

    #[test]
    fn bad_meshes_name_the_first_offender() {
        let (p, mut t) = square();
        t[2] = [2, 4, 3];
        let e = Mesh::new(p.clone(), t, vec![Metric::IDENTITY; 5])
            .unwrap_err()
            .to_string();
        assert!(e.contains("element 2") && e.contains("inverted"), "{e}");
        let (_, t) = square();
        let mut m = vec![Metric::IDENTITY; 5];
        m[3].b = 2.0;
        let e = Mesh::new(p.clone(), t.clone(), m).unwrap_err().to_string();
        assert!(e.contains("vertex 3"), "{e}");
        let mut q = p.clone();
        q[4] = [0.5, 0.0];
        let e = Mesh::new(q, t.clone(), vec![Metric::IDENTITY; 5])
            .unwrap_err()
            .to_string();
        assert!(e.contains("element 0") && e.contains("degenerate"), "{e}");
        let mut t3 = t.clone();
        let mut p3 = p.clone();
        p3.push([0.5, -0.5]);
        t3.push([1, 0, 5]);
        t3.push([0, 1, 4]);
        let e = Mesh::new(p3, t3, vec![Metric::IDENTITY; 6])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("edge (0, 1)") && e.contains("not manifold"),
            "{e}"
        );
    }
}
