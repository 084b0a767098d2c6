//! The 2D lid-driven cavity in vorticity-stream function form, every kernel in the stencil
//! language ([`kernels`]), on the CPU or a CUDA device.
//!
//! The model on the unit square, lid speed 1 at `y = 1`:
//!
//! - vorticity transport `dw/dt = lap(w) / Re - u w_x - v w_y`, central differences,
//!   classical RK4 in time with the time step from the diffusion and advection limits
//!   ([`stable_time_step`]);
//! - `lap(psi) = -w` with `psi = 0` on the walls, by the [`multigrid`] crate's kept
//!   [`multigrid::Solver`], warm-started from the previous stage ([`Config::poisson_cycles`]
//!   cycles per stage);
//! - `u = psi_y`, `v = -psi_x`; wall vorticity by Thom's formula
//!   `w_wall = -2 psi_1 / h^2 - 2 U_t / h` ([`kernels::flow::wall_vorticity`]).
//!
//! ```no_run
//! use cavity::{Cavity, Config};
//! let backend = stencil_runtime::Backend::auto().unwrap();
//! let mut flow = Cavity::new(&backend, &Config { re: 100.0, n: 129, ..Config::default() }).unwrap();
//! let outcome = flow.run(|_, check| { println!("{check:?}"); true }).unwrap();
//! let profiles = cavity::Profiles::of(&mut flow).unwrap();
//! ```

pub mod adaptive;
mod checkpoint;
mod config;
pub mod kernels;
pub mod live;
mod model;
mod output;
mod reference;
mod step_graph;

pub use checkpoint::Checkpoint;
pub use config::{Config, Until};
pub use model::{
    poisson_cycles, stable_time_step, wall_update, Cavity, Check, Outcome, WholeFlow, LID_SPEED,
};
pub use output::{prepare_output, write_adaptive_results, write_results, Profiles, Summary};
pub use reference::{Comparison, Reference};

use std::path::PathBuf;

/// Why a cavity run could not start or stopped early.
#[derive(Debug, thiserror::Error)]
pub enum CavityError {
    /// An option out of range.
    #[error("option `{name}` = {value} is invalid: {expected}")]
    Config {
        /// The option.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A failure of the run time (a CUDA error, a field in the wrong memory, ...).
    #[error(transparent)]
    Runtime(#[from] stencil_runtime::Error),
    /// The live view (`--serve`) failed.
    #[error(transparent)]
    Live(#[from] live_view::Error),
    /// The Poisson solver refused or failed.
    #[error("the stream-function solve failed: {0}")]
    Poisson(#[from] multigrid::SolveError),
    /// The run went unstable.
    #[error("unstable at {at:.4}: the node's w = {value:e} (non-finite, or |w| above {bound:e}); lower --cfl")]
    Unstable {
        /// The step and the node.
        at: stencil_runtime::Blowup,
        /// The offending value.
        value: f64,
        /// The growth bound.
        bound: f64,
    },
    /// A failure between ranks.
    #[error("over several ranks: {0}")]
    Ranks(String),
    /// The step budget ran out before steady state.
    #[error("not steady after {steps} steps: the vorticity still changes by {change:e} per unit time (tolerance {tolerance:e}); raise the step limit or the tolerance")]
    StepLimit {
        /// Steps taken.
        steps: u64,
        /// The last relative change per unit time.
        change: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// A file could not be read or written.
    #[error("{what} `{path}`: {cause}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The system's reason.
        cause: std::io::Error,
    },
    /// A checkpoint that cannot be resumed (corrupt, or of another configuration).
    #[error("cannot resume: {0}")]
    Checkpoint(String),
    /// A reference data file that cannot be read.
    #[error("reference data `{path}` line {line}: {cause}")]
    Reference {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        cause: String,
    },
    /// A picture or VTK file could not be made.
    #[error("writing `{path}`: {cause}")]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: String,
    },
}

impl CavityError {
    /// An [`CavityError::Io`] for `path`.
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        CavityError::Io {
            what,
            path: path.into(),
            cause,
        }
    }
}
