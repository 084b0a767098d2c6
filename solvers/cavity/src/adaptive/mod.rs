//! The cavity on a wavelet-adaptive grid (Mr Wags): blocks of several levels on a
//! vertex-centred block grid, kept where the interpolating wavelet transform's details
//! exceed a tolerance.
//!
//! - [`wavelet`]: the transform in the stencil language (predict, detail, reconstruct);
//! - [`Hierarchy`]: a tree of levels on a block grid, its halos (predicted from the
//!   coarser level next to absent blocks, extrapolated past the walls), the transform
//!   over all levels, and adaptation from the details;
//! - [`TreePoisson`]: the stream function's Poisson solve across the levels
//!   ([`kernels`]).

mod checkpoint;
mod flow;
mod hierarchy;
pub mod kernels;
mod poisson;
pub mod wavelet;

pub use checkpoint::AdaptiveCheckpoint;
pub use flow::{AdaptiveCavity, AdaptiveConfig};
pub use hierarchy::{Hierarchy, LevelHalo};
pub use poisson::TreePoisson;
