//! Multigrid and mixed-precision defect correction for Poisson-type problems
//! `-(ax u_xx + ay u_yy [+ az u_zz]) = f` on the unit square or cube, every kernel in the stencil language
//! ([`kernels`]), on the CPU or a CUDA device.
//!
//! The solver is Algorithm 1 of Glimberg, Engsig-Karup & Madsen (ENUMATH 2011): the
//! residual of a 2nd, 4th or 6th-order operator is computed in f64, a correction is found
//! by one multigrid cycle of the 2nd-order operator (the preconditioner), and the solution
//! is updated in f64. In [`Precision::Mixed`] the whole preconditioner runs in f32. With
//! the 2nd-order operator in f64 this is plain multigrid in residual-correction form.
//!
//! ```no_run
//! use multigrid::{Options, Problem, solve};
//! use stencil_runtime::Backend;
//! let backend = Backend::auto().unwrap();
//! let n = 257;
//! let mut problem = Problem::new(&backend, n, |x, y| x * y, |_, _| 1.0).unwrap();
//! let report = solve(&backend, &mut problem, &Options::default()).unwrap();
//! println!("{} cycles, residual {:e}", report.cycles.len(), report.relative_residual());
//! ```

pub mod kernels;
mod ops;
mod options;
mod preconditioner;
mod problem;
mod ranked;
mod report;
mod schedule;
mod solve;
mod solver;

pub use options::{
    Boundary, BoundaryKind, Cycle, Options, Order, Precision, Smoother, GATHER_BELOW,
};
pub use preconditioner::srj_schedule;
pub use problem::Problem;
pub use report::{CycleStat, LevelStat, Report};
pub use schedule::Schedule;
pub use solve::solve;
pub use solver::Solver;

/// Why a solve stopped without an answer.
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// A failure of the run time (a field on the wrong device, a CUDA error, ...).
    #[error(transparent)]
    Runtime(#[from] stencil_runtime::Error),
    /// A grid size multigrid cannot coarsen.
    #[error("a grid of {n} nodes per axis cannot be coarsened: use 2^k + 1 nodes (k >= 1), e.g. 257 or 4097")]
    Size {
        /// The size given.
        n: usize,
    },
    /// What several ranks cannot do, or a failure between them.
    #[error("over several ranks: {0}")]
    Ranks(String),
    /// A parameter outside its range.
    #[error("option `{name}` = {value} is invalid: {expected}")]
    Option {
        /// The option.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// No side fixes the solution (Neumann everywhere, or Neumann and periodic sides): the
    /// problem has no unique solution. (Every side periodic is allowed: the solver returns
    /// the zero-mean solution.)
    #[error("no side is Dirichlet: with Neumann sides and no Dirichlet one the solution is defined only up to a constant; make at least one side Dirichlet (or every side periodic)")]
    Singular,
    /// Every side periodic and a right-hand side that does not sum to zero: no solution.
    #[error("every side is periodic, so the right-hand side must have zero mean, but its mean is {mean:e} (largest magnitude {largest:e}); subtract the mean from f")]
    Incompatible {
        /// The mean of the right-hand side over the distinct nodes.
        mean: f64,
        /// Its largest magnitude.
        largest: f64,
    },
    /// The residual grew: the iteration diverges.
    #[error("diverged at cycle {cycle}: the relative residual grew to {residual:e} (not finite or above 1e3); check the boundary kinds, the anisotropy and the smoother")]
    Diverged {
        /// The cycle.
        cycle: usize,
        /// Its relative residual.
        residual: f64,
    },
    /// The residual stopped falling.
    #[error("stagnated at cycle {cycle}: the residual fell by only a factor {rate:.3} per cycle over the last cycles, at relative residual {residual:e}; the tolerance may be below what the precision allows")]
    Stagnated {
        /// The cycle.
        cycle: usize,
        /// The recent convergence rate.
        rate: f64,
        /// Its relative residual.
        residual: f64,
    },
    /// The cycle budget ran out.
    #[error("not converged after {cycles} cycles: relative residual {residual:e} > tolerance {tolerance:e}; raise `max_cycles` or use a stronger smoother")]
    NotConverged {
        /// Cycles run.
        cycles: usize,
        /// The final relative residual.
        residual: f64,
        /// The tolerance.
        tolerance: f64,
    },
}
