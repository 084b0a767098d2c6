//! `stencil-runtime`: what a program that uses stencil kernels links against.
//!
//! Write kernels with [`stencil`] (and helpers with [`stencil_fn`] inside a [`stencils`]
//! module); each becomes a module with a typed `launch` function that runs the kernel on a
//! [`Backend`] over [`Field`]s. The final binary needs no compiler toolchain: the CPU code
//! is generated Rust and the GPU code is PTX text embedded at build time.
//!
//! ```
//! use stencil_runtime::prelude::*;
//!
//! /// Weighted-Jacobi sweep for -lap(u) = f.
//! #[stencil]
//! fn jacobi<T: Real>(u: In<T>, f: In<T>, out: Out<T>, h2: T, omega: T) {
//!     let r = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] + h2 * f) * 0.25;
//!     out = u + omega * (r - u);
//! }
//!
//! # fn main() -> Result<(), stencil_runtime::Error> {
//! let backend = Backend::auto()?; // a CUDA GPU if there is one, else the CPU
//! let u = Field::<f64>::from_fn(&[64, 64], 1, |[i, j, _]| (i * j) as f64).to(&backend)?;
//! let f = Field::<f64>::zeros_on(&backend, &[64, 64], 0)?;
//! let mut out = Field::<f64>::zeros_on(&backend, &[64, 64], 0)?;
//! jacobi::launch(&backend, &u, &f, &mut out, 1.0, 0.8)?;
//! let values = out.interior()?; // copied back to the host
//! # assert_eq!(values.len(), 64 * 64);
//! # Ok(())
//! # }
//! ```

// Lets the macros' `::stencil_runtime::` paths resolve inside this crate (for the
// reduction passes written in the language).
extern crate self as stencil_runtime;

pub mod axes;
pub mod backend;
pub mod blocks;
pub mod blowup;
pub mod cpu;
pub mod cuda;
pub mod dsl;
pub mod error;
pub mod field;
pub mod launch;
pub mod mesh;
pub mod programs;
pub mod real;
pub mod sampled;
mod team;
pub mod value;

pub use axes::Axes;
pub use backend::Backend;
pub use blocks::{BlockField, BlockGrid, BlockKey, BlockList, BlockRegion, HaloExchange, HaloRule};
pub use blowup::Blowup;
pub use cuda::Cuda;
pub use error::Error;
pub use field::Field;
pub use real::{Element, Precision, Real};
pub use sampled::{Filtering, SampledGrid};
pub use stencil_macros::{stencil, stencil_fn, stencil_group, stencil_helpers, stencils};
pub use value::{KeptReductions, Value, ValueReader};

/// The README's example compiles and runs (as a doc test).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Re-exported for generated code.
pub use num_traits;

/// Everything a kernel-writing program needs.
pub mod prelude {
    pub use crate::dsl::{Coarse, Fine, In, InOut, Max, Mesh, Min, Out, Sampled, Sum};
    pub use crate::mesh::{MeshTopology, VertexSet};
    pub use crate::{
        stencil, stencil_fn, stencil_group, stencil_helpers, stencils, Axes, Backend, Element,
        Error, Field, Filtering, Precision, Real, SampledGrid, Value,
    };
}
