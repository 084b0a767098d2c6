//! Vertex smoothing: each interior vertex moves within its cavity (the triangles around
//! it), colour by colour, by the kernels of [`crate::kernels`] (in the stencil language)
//! on a [`Backend`]: the CPU (generated Rust; serial inside a one-thread pool, else on
//! every core) or a CUDA GPU (the kernels' PTX). No move may invert an element: a move
//! that would is shortened or dropped. The metric at a moved vertex is interpolated
//! linearly (barycentric) in the cavity triangle that contains the new position, or, after
//! [`Smoother::with_metric_grid`], bilinearly from a super-sampled copy of the metric
//! field ([`MetricGrid`]; on the GPU optionally through textures with hardware filtering).
//!
//! The vertices of a colour share no edge, so each one's move reads only vertices that
//! do not move in that colour: serial, parallel and GPU sweeps give the same mesh.

use crate::colour::Colouring;
use crate::kernels::smoothing::{relocate, search, Vertices};
use crate::metric_grid::MetricGrid;
use crate::quality::{min_mean, qualities};
use crate::{Mesh, MeshError, Metric};
use std::sync::Arc;
use stencil_runtime::mesh::{MeshTopology, VertexSet};
use stencil_runtime::{Backend, Field, Filtering, SampledGrid};

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
    /// relaxation alone lowers it).
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

/// A mesh's vertices and metric in the memory of a backend, with its colours as vertex
/// sets, ready for sweeps.
pub struct Smoother {
    backend: Backend,
    sets: Vec<VertexSet>,
    /// The vertices' positions and metric.
    vertices: Vertices<Field<f64>>,
    /// The min-quality search's step per vertex, kept between its rounds.
    step: Field<f64>,
    /// Whether each vertex moved in a round of the search so far.
    moved_flag: Field<f64>,
    /// The super-sampled metric's components, when candidates read it.
    grid: Option<[SampledGrid<f64>; 3]>,
}

/// Rounds of the min-quality pattern search per colour (one launch each).
pub const SEARCH_ROUNDS: i64 = 12;

/// The vertices that moved in [`SEARCH_ROUNDS`] rounds of the pattern search over one
/// colour, `launch(round)` running round `round` (its count is that of the last round).
fn search_rounds(
    mut launch: impl FnMut(i64) -> Result<f64, stencil_runtime::Error>,
) -> Result<f64, MeshError> {
    let mut count = 0.0;
    for round in 0..SEARCH_ROUNDS {
        count += launch(round)?;
    }
    Ok(count)
}

impl Smoother {
    /// Copies `mesh` and its colouring to `backend`.
    pub fn new(
        mesh: &Mesh,
        colouring: &Colouring,
        backend: &Backend,
    ) -> Result<Smoother, MeshError> {
        let topology = MeshTopology::new(mesh.points.len(), &mesh.triangles)?.to(backend)?;
        Smoother::with_topology(mesh, &topology, colouring, backend)
    }

    /// As [`Smoother::new`], reusing a topology already on `backend`.
    pub fn with_topology(
        mesh: &Mesh,
        topology: &Arc<MeshTopology>,
        colouring: &Colouring,
        backend: &Backend,
    ) -> Result<Smoother, MeshError> {
        let sets = colouring
            .colours
            .iter()
            .map(|c| topology.set(c))
            .collect::<Result<Vec<_>, _>>()?;
        let n = mesh.points.len();
        let field = |f: &dyn Fn(usize) -> f64| -> Result<Field<f64>, MeshError> {
            Ok(Field::from_fn(&[n], 0, |[i, _, _]| f(i as usize)).to(backend)?)
        };
        Ok(Smoother {
            backend: backend.clone(),
            sets,
            vertices: Vertices {
                x: field(&|v| mesh.points[v][0])?,
                y: field(&|v| mesh.points[v][1])?,
                m11: field(&|v| mesh.metric[v].a)?,
                m12: field(&|v| mesh.metric[v].b)?,
                m22: field(&|v| mesh.metric[v].c)?,
            },
            step: field(&|_| 0.0)?,
            moved_flag: field(&|_| 0.0)?,
            grid: None,
        })
    }

    /// Makes the sweeps read the metric at a candidate position from `grid` (bilinear
    /// interpolation) instead of interpolating it in the cavity's triangles; a vertex that
    /// moves takes the grid's metric. `Filtering::Hardware` reads the grid through
    /// textures (CUDA only).
    pub fn with_metric_grid(
        mut self,
        grid: &MetricGrid,
        filtering: Filtering,
    ) -> Result<Smoother, MeshError> {
        self.grid = Some(grid.to_sampled(&self.backend, filtering)?);
        Ok(self)
    }

    /// One sweep of `method` over every colour; returns how many vertices moved.
    pub fn sweep(&mut self, method: Method) -> Result<usize, MeshError> {
        let mut moved = 0.0;
        for set in &self.sets {
            let v = &mut self.vertices;
            let (step, flag) = (&mut self.step, &mut self.moved_flag);
            let b = &self.backend;
            moved += match (method, &self.grid) {
                (Method::MinQuality, None) => search_rounds(|round| {
                    let (v, rounds) = (v.each_mut(), SEARCH_ROUNDS);
                    search::sampled_false::launch(b, set, v, step, flag, round, rounds)
                })?,
                (Method::MinQuality, Some([g11, g12, g22])) => search_rounds(|round| {
                    let (v, rounds) = (v.each_mut(), SEARCH_ROUNDS);
                    search::sampled_true::launch(
                        b, set, v, g11, g12, g22, step, flag, round, rounds,
                    )
                })?,
                (other, None) => {
                    relocate::sampled_false::launch(b, set, v.each_mut(), code(other))?
                }
                (other, Some([g11, g12, g22])) => {
                    let v = v.each_mut();
                    relocate::sampled_true::launch(b, set, v, g11, g12, g22, code(other))?
                }
            };
        }
        Ok(moved as usize)
    }

    /// Copies the vertices and their metric back into `mesh`.
    pub fn write_back(&self, mesh: &mut Mesh) -> Result<(), MeshError> {
        let v = &self.vertices;
        let (x, y) = (v.x.interior()?, v.y.interior()?);
        let (a, b, c) = (v.m11.interior()?, v.m12.interior()?, v.m22.interior()?);
        for v in 0..mesh.points.len() {
            mesh.points[v] = [x[v], y[v]];
            mesh.metric[v] = Metric {
                a: a[v],
                b: b[v],
                c: c[v],
            };
        }
        Ok(())
    }
}

/// The `method` number of the `relocate` kernels.
fn code(method: Method) -> i64 {
    match method {
        Method::Laplacian => 0,
        Method::SmartLaplacian => 1,
        _ => 2,
    }
}

/// One sweep of `method` over every colour of `mesh` on `backend`, with the quality after
/// it. (A program that sweeps many times keeps a [`Smoother`] instead.)
pub fn sweep(
    mesh: &mut Mesh,
    colouring: &Colouring,
    method: Method,
    backend: &Backend,
) -> Result<SweepReport, MeshError> {
    let mut s = Smoother::new(mesh, colouring, backend)?;
    let moved = s.sweep(method)?;
    s.write_back(mesh)?;
    let (min, mean) = min_mean(&qualities(mesh));
    Ok(SweepReport { moved, min, mean })
}

/// Runs `f` with the CPU backend's kernels on one thread (the serial CPU path).
pub fn serially<R: Send>(f: impl FnOnce() -> R + Send) -> Result<R, MeshError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| MeshError::Invalid(format!("cannot start a one-thread pool: {e}")))?;
    Ok(pool.install(f))
}
