//! Anisotropic mesh vertex smoothing (issue 7, in progress): 2D triangular meshes with a
//! metric tensor per vertex, their element quality in the metric (Vasilevskii & Lipnikov
//! 1999), and VTK `.vtu` input (the zlib-compressed, base64-appended form of
//! `../shared/data/meshes`).
//!
//! Not there yet: the smoothing kernels in the stencil language, colouring, the GPU path,
//! Gmsh input, pictures and the command-line program.

pub mod mesh;
pub mod quality;
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
}
