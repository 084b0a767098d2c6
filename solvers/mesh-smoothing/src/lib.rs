//! Anisotropic mesh vertex smoothing: 2D triangular meshes with a
//! metric tensor per vertex, their element quality in the metric (Vasilevskii & Lipnikov
//! 1999), and VTK `.vtu` input (the zlib-compressed, base64-appended form of
//! `../shared/data/meshes`).
//!
//! Smoothing ([`smooth`]): Laplacian, smart Laplacian, the optimisation of Pain et al.
//! (2001) and a min-quality optimisation, colour by colour ([`colour`]: greedy and
//! Jones-Plassmann), serial or in parallel (rayon) with the same result; no move inverts
//! an element.
//!
//! The smoothing kernels are vertex kernels in the stencil language ([`kernels`]), run by
//! a [`smooth::Smoother`] on the CPU or a CUDA GPU. The metric at a candidate position is
//! interpolated barycentrically in the cavity, or bilinearly from a super-sampled copy of
//! the field ([`metric_grid`]), on the GPU optionally through textures with hardware
//! filtering. Input: `.vtu` ([`vtu`]) and Gmsh 4 ASCII ([`gmsh`]).
//! The `smooth` program smooths a `.vtu` mesh (or a generated one) with a per-sweep report,
//! writing the result with its quality and pictures of the quality before and after.

pub mod colour;
pub mod generate;
pub mod gmsh;
pub mod kernels;
pub mod live;
pub mod mesh;
pub mod metric_grid;
pub mod picture;
pub mod quality;
pub mod smooth;
pub mod vtu;

pub use mesh::{Mesh, Metric};

/// Why a mesh could not be read or used.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// A file is unreadable or malformed.
    #[error("{file}: {message}")]
    Input {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The mesh itself is unusable: inverted or degenerate elements, a metric that is not
    /// symmetric positive definite, a non-manifold edge, an index out of range.
    #[error("{0}")]
    Invalid(String),
    /// Running the kernels failed (a bad mesh table, no GPU, out of memory).
    #[error(transparent)]
    Runtime(#[from] stencil_runtime::Error),
    /// The live view (`--serve`) failed.
    #[error(transparent)]
    Live(#[from] live_view::Error),
}
