//! Vertex smoothing: each interior vertex moves within its cavity (the triangles around
//! it), colour by colour. Every method's move is checked: a move that would invert an
//! element is halved until it does not (up to ten times) or dropped. The metric at a
//! moved vertex is interpolated linearly (barycentric) in the cavity triangle that
//! contains the new position.
//!
//! The vertices of a colour share no edge, so each one's move reads only vertices that
//! do not move in that colour: moving them one after the other (serial) or all at once
//! (parallel) gives the same mesh, bit for bit.

use crate::colour::Colouring;
use crate::mesh::{barycentric, interpolate, signed_area2};
use crate::metric_grid::MetricGrid;
use crate::quality::{min_mean, qualities, triangle_quality};
use crate::{Mesh, MeshError, Metric};
use rayon::prelude::*;

/// How a vertex moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// To the mean of its neighbours.
    Laplacian,
    /// As Laplacian, but only where the cavity's smallest quality does not drop.
    SmartLaplacian,
    /// Pain et al. (2001): `(D + A)(x - p) = (q - A p) / 2` with `A = sum M_e` and
    /// `q = sum M_e x_e` over the cavity's edges `e` from `p` (edge metrics: the mean of
    /// their ends'), and `D` the diagonal term that makes `D + A` diagonally dominant.
    /// The move is halved until the cavity's smallest quality does not drop (a spring
    /// relaxation alone lowers it: 0.45 to 0.23 in five sweeps of smooth_2d).
    Pain,
    /// A pattern search for the position that maximises the cavity's smallest quality.
    MinQuality,
}

impl std::str::FromStr for Method {
    type Err = MeshError;
    fn from_str(s: &str) -> Result<Method, MeshError> {
        Ok(match s {
            "laplacian" => Method::Laplacian,
            "smart-laplacian" | "smart" => Method::SmartLaplacian,
            "pain" => Method::Pain,
            "min-quality" | "minq" => Method::MinQuality,
            other => {
                return Err(MeshError::Invalid(format!(
                    "unknown method `{other}`: use laplacian, smart-laplacian, pain or min-quality"
                )))
            }
        })
    }
}

/// What a sweep did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepReport {
    /// Vertices that moved.
    pub moved: usize,
    /// The smallest element quality after the sweep.
    pub min: f64,
    /// The mean element quality after the sweep.
    pub mean: f64,
}

/// Where a vertex goes and its metric there (`None`: it stays).
type Move = Option<([f64; 2], Metric)>;

/// A vertex's cavity as seen with the vertex at `x` and metric `m`.
struct Cavity<'a> {
    mesh: &'a Mesh,
    v: usize,
    /// The super-sampled metric, if moved vertices take theirs from it.
    grid: Option<&'a MetricGrid>,
}

impl Cavity<'_> {
    /// The triangles' corners and metrics with `v` at `x` with metric `m`.
    fn triangles(
        &self,
        x: [f64; 2],
        m: Metric,
    ) -> impl Iterator<Item = ([[f64; 2]; 3], [Metric; 3])> + '_ {
        let mesh = self.mesh;
        let v = self.v;
        mesh.elements_of(v).iter().map(move |&k| {
            let t = mesh.triangles[k];
            let p = t.map(|w| if w == v { x } else { mesh.points[w] });
            let ms = t.map(|w| if w == v { m } else { mesh.metric[w] });
            (p, ms)
        })
    }

    /// The smallest quality, or -1 if a triangle would be inverted or degenerate.
    fn min_quality(&self, x: [f64; 2], m: Metric) -> f64 {
        let mut worst = f64::INFINITY;
        for (p, ms) in self.triangles(x, m) {
            if signed_area2(p[0], p[1], p[2]) <= 0.0 {
                return -1.0;
            }
            worst = worst.min(triangle_quality(p, ms));
        }
        worst
    }

    /// The metric at `x` by barycentric interpolation in the cavity triangle (with `v` at
    /// its present place) that holds `x`; `v`'s own metric if none does.
    fn metric_at(&self, x: [f64; 2]) -> Metric {
        if let Some(g) = self.grid {
            return g.at(x);
        }
        let here = self.mesh.points[self.v];
        let own = self.mesh.metric[self.v];
        for (p, ms) in self.triangles(here, own) {
            let (l, outside) = barycentric(p, x);
            if outside <= 1e-12 {
                return interpolate(l, ms);
            }
        }
        own
    }

    /// The proposed position of `method` (before the checks).
    fn proposal(&self, method: Method) -> [f64; 2] {
        let mesh = self.mesh;
        let p = mesh.points[self.v];
        let ns = mesh.neighbours_of(self.v);
        match method {
            Method::Laplacian | Method::SmartLaplacian | Method::MinQuality => {
                let n = ns.len() as f64;
                let s = ns.iter().fold([0.0, 0.0], |s, &w| {
                    [s[0] + mesh.points[w][0], s[1] + mesh.points[w][1]]
                });
                [s[0] / n, s[1] / n]
            }
            Method::Pain => {
                let (mut a, mut q) = ([0.0; 3], [0.0; 2]);
                for &w in ns {
                    let m = Metric::mean(&[mesh.metric[self.v], mesh.metric[w]]);
                    let x = mesh.points[w];
                    a = [a[0] + m.a, a[1] + m.b, a[2] + m.c];
                    q = [
                        q[0] + m.a * x[0] + m.b * x[1],
                        q[1] + m.b * x[0] + m.c * x[1],
                    ];
                }
                let r = [
                    0.5 * (q[0] - (a[0] * p[0] + a[1] * p[1])),
                    0.5 * (q[1] - (a[1] * p[0] + a[2] * p[1])),
                ];
                let d = [(a[1].abs() - a[0]).max(0.0), (a[1].abs() - a[2]).max(0.0)];
                let (m11, m12, m22) = (a[0] + d[0], a[1], a[2] + d[1]);
                let det = m11 * m22 - m12 * m12;
                if det.is_nan() || det == 0.0 {
                    return p;
                }
                [
                    p[0] + (m22 * r[0] - m12 * r[1]) / det,
                    p[1] + (m11 * r[1] - m12 * r[0]) / det,
                ]
            }
        }
    }

    /// Where `v` goes and its metric there, or `None` if it stays.
    fn relocate(&self, method: Method) -> Move {
        let mesh = self.mesh;
        let p = mesh.points[self.v];
        let before = self.min_quality(p, mesh.metric[self.v]);
        if method == Method::MinQuality {
            return self.search(before);
        }
        let target = self.proposal(method);
        let mut step = [target[0] - p[0], target[1] - p[1]];
        for _ in 0..=10 {
            let x = [p[0] + step[0], p[1] + step[1]];
            let m = self.metric_at(x);
            let q = self.min_quality(x, m);
            match method {
                // Smart Laplacian takes the whole move or none.
                Method::SmartLaplacian if q > 0.0 => {
                    return (q >= before && x != p).then_some((x, m))
                }
                // Pain's move is shortened until the cavity keeps its smallest quality.
                Method::Pain if q >= before => return (x != p).then_some((x, m)),
                Method::Laplacian if q > 0.0 => return (x != p).then_some((x, m)),
                _ => {}
            }
            step = [0.5 * step[0], 0.5 * step[1]];
        }
        None
    }

    /// Pattern search from `v`'s position: eight directions, the step halved when none
    /// improves the cavity's smallest quality; only improvements are taken.
    fn search(&self, before: f64) -> Move {
        let mesh = self.mesh;
        let p = mesh.points[self.v];
        let ns = mesh.neighbours_of(self.v);
        let reach = ns
            .iter()
            .map(|&w| {
                ((mesh.points[w][0] - p[0]).powi(2) + (mesh.points[w][1] - p[1]).powi(2)).sqrt()
            })
            .sum::<f64>()
            / ns.len() as f64;
        let (mut best, mut best_q, mut best_m) = (p, before, mesh.metric[self.v]);
        let mut h = 0.25 * reach;
        for _ in 0..16 {
            let mut improved = false;
            for k in 0..8 {
                let angle = k as f64 * std::f64::consts::FRAC_PI_4;
                let x = [best[0] + h * angle.cos(), best[1] + h * angle.sin()];
                let m = self.metric_at(x);
                let q = self.min_quality(x, m);
                if q > best_q {
                    (best, best_q, best_m, improved) = (x, q, m, true);
                }
            }
            if !improved {
                h *= 0.5;
            }
        }
        (best != p).then_some((best, best_m))
    }
}

/// One sweep of `method` over every colour, moving each colour's vertices serially or in
/// parallel (the same result either way); moved vertices take their metric by
/// barycentric interpolation in their cavity.
pub fn sweep(
    mesh: &mut Mesh,
    colouring: &Colouring,
    method: Method,
    parallel: bool,
) -> SweepReport {
    sweep_with(mesh, colouring, method, parallel, None)
}

/// [`sweep`], moved vertices taking their metric from `grid` when given.
pub fn sweep_with(
    mesh: &mut Mesh,
    colouring: &Colouring,
    method: Method,
    parallel: bool,
    grid: Option<&MetricGrid>,
) -> SweepReport {
    let mut moved = 0;
    for set in &colouring.colours {
        let view: &Mesh = mesh;
        let go = |&v: &usize| {
            (
                v,
                Cavity {
                    mesh: view,
                    v,
                    grid,
                }
                .relocate(method),
            )
        };
        let moves: Vec<(usize, Move)> = if parallel {
            set.par_iter().map(go).collect()
        } else {
            set.iter().map(go).collect()
        };
        for (v, m) in moves {
            if let Some((x, metric)) = m {
                mesh.points[v] = x;
                mesh.metric[v] = metric;
                moved += 1;
            }
        }
    }
    let (min, mean) = min_mean(&qualities(mesh));
    SweepReport { moved, min, mean }
}
