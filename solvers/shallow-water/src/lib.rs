//! Shallow-water flood simulation on the CPU or a CUDA device: the second-order
//! well-balanced positivity-preserving central-upwind scheme of Kurganov & Petrova (2007),
//! every kernel in the stencil language ([`kernels`]).
//!
//! The model is the Saint-Venant system with bed slope and Manning friction,
//!
//! ```text
//! h_t + (hu)_x + (hv)_y = 0
//! (hu)_t + (hu^2 + g h^2 / 2)_x + (huv)_y = -g h B_x - g n^2 |u| hu / h^(4/3)
//! (hv)_t + (huv)_x + (hv^2 + g h^2 / 2)_y = -g h B_y - g n^2 |u| hv / h^(4/3)
//! ```
//!
//! on a uniform grid of cells over a continuous, piecewise bilinear bed ([`Terrain`]),
//! each side of the rectangle a wall, a fixed depth, a fixed discharge, an open outlet or
//! periodic ([`Boundary`]), in `f32` or `f64`.
//!
//! ```
//! use shallow_water::*;
//! # fn main() -> Result<(), FloodError> {
//! let grid = Grid::new(64, 4, 1.0 / 64.0, 1.0 / 64.0, 0.0, 0.0)?;
//! let terrain = Terrain::from_fn(grid, |_, _| 0.0)?;
//! // A dam break: 1 m of water on the left half, 0.1 m on the right.
//! let water = Water::from_depth(&terrain, |x, _| if x < 0.5 { 1.0 } else { 0.1 });
//! let setup = Setup::new(terrain, water, Boundaries::all(Boundary::Wall), Physics::default());
//! let mut flow = ShallowWater::<f64>::new(&stencil_runtime::Backend::Cpu, &setup)?;
//! flow.advance_to(0.05)?;
//! let survey = flow.survey()?;
//! assert!((survey.volume - flow.initial_volume()).abs() < 1e-12);
//! # Ok(())
//! # }
//! ```

pub mod analytic;
mod asc;
mod boundary;
pub mod cases;
mod checkpoint;
pub mod clock;
pub mod flow;
mod grid;
pub mod kernels;
pub mod live;
mod model;
pub mod output;
pub mod programs;
pub mod run;
pub mod scenario;
pub mod sparse;

pub use asc::Raster;
pub use boundary::{Boundaries, Boundary, Series};
pub use flow::{Flow, Storage};
pub use grid::{Grid, Terrain};
pub use model::{
    AfterStep, CellFields, Integrator, Passes, Physics, SavedState, Setup, ShallowWater, Survey,
    Water, ONE_PASS_MOST_CELLS,
};
pub use run::{Run, RunOptions, Summary, WallSplit};
pub use scenario::{Gauge, Output, Scenario};
pub use sparse::{RankBlocks, SparseShallowWater};

/// `, line N` of an [`FloodError::Input`], nothing for line 0 (the whole file).
fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(", line {line}")
    }
}

/// Why a simulation could not start or stopped early.
#[derive(Debug, thiserror::Error)]
pub enum FloodError {
    /// A parameter, size or setting out of range.
    #[error("`{name}` = {value} is invalid: expected {expected}")]
    Config {
        /// The parameter (a scenario field's path where there is one).
        name: String,
        /// Its value.
        value: String,
        /// What it must be.
        expected: String,
    },
    /// A failure of the run time (a CUDA error, a field in the wrong memory, ...).
    #[error(transparent)]
    Runtime(#[from] stencil_runtime::Error),
    /// The live view (`--serve`) failed.
    #[error(transparent)]
    Live(#[from] live_view::Error),
    /// Several ranks could not work together.
    #[error(transparent)]
    Ranks(#[from] stencil_ranks::LayoutError),
    /// An input file is malformed.
    #[error("{file}{}: {message}", at_line(*.line))]
    Input {
        /// The file.
        file: String,
        /// The line (1-based; 0 when the file could not be read at all).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A scenario file names a field with a bad value.
    #[error("{file}: `{field}`: {message}")]
    Scenario {
        /// The scenario file.
        file: String,
        /// The field's path (`boundaries.west`, `gauge \`A\``, ...).
        field: String,
        /// What is wrong and what it must be.
        message: String,
    },
    /// An output or checkpoint file could not be written.
    #[error("cannot write {path}: {cause}")]
    Output {
        /// The file.
        path: String,
        /// Why.
        cause: String,
    },
    /// The run went unstable.
    #[error("unstable at {at:.3} (t in s, x and y in m): the cell has depth {depth:e} m and velocity ({u:e}, {v:e}) m/s; lower the Courant number or check the input")]
    Unstable {
        /// The step and the first bad cell (its column, its row, its centre).
        at: stencil_runtime::Blowup,
        /// Its depth.
        depth: f64,
        /// Its x velocity.
        u: f64,
        /// Its y velocity.
        v: f64,
    },
}
