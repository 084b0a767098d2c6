//! A Poisson problem on the unit square: the grid, the right-hand side and the solution.

use crate::SolveError;
use stencil_runtime::{Backend, Field};

/// The halo of the solution and right-hand side: what the 6th-order defect reads.
pub const HALO: usize = 6;

/// `-(ax u_xx + ay u_yy) = f` on the unit square, on `n x n` nodes (`n = 2^k + 1`).
pub struct Problem {
    /// Nodes per axis.
    pub n: usize,
    /// Grid spacing `1 / (n - 1)`.
    pub h: f64,
    /// The solution: on entry the initial guess, whose boundary nodes hold the Dirichlet
    /// values; on return the answer.
    pub u: Field<f64>,
    /// The right-hand side at every node.
    pub f: Field<f64>,
}

/// Whether `n` is `2^k + 1` with `k >= 1`.
pub fn is_coarsenable(n: usize) -> bool {
    n >= 3 && (n - 1).is_power_of_two()
}

impl Problem {
    /// A problem on `backend` whose boundary values (and initial guess on the boundary) are
    /// `g(x, y)`, with source `f(x, y)`; the interior guess is 0.
    pub fn new(
        backend: &Backend,
        n: usize,
        g: impl Fn(f64, f64) -> f64,
        f: impl Fn(f64, f64) -> f64,
    ) -> Result<Problem, SolveError> {
        if !is_coarsenable(n) {
            return Err(SolveError::Size { n });
        }
        let h = 1.0 / (n - 1) as f64;
        let on_boundary =
            |i: isize, j: isize| i == 0 || j == 0 || i == n as isize - 1 || j == n as isize - 1;
        let inside =
            |i: isize, j: isize| (0..n as isize).contains(&i) && (0..n as isize).contains(&j);
        let u = Field::from_fn(&[n, n], HALO, |[i, j, _]| {
            if inside(i, j) && on_boundary(i, j) {
                g(i as f64 * h, j as f64 * h)
            } else {
                0.0
            }
        });
        let rhs = Field::from_fn(&[n, n], HALO, |[i, j, _]| {
            if inside(i, j) {
                f(i as f64 * h, j as f64 * h)
            } else {
                0.0
            }
        });
        Ok(Problem {
            n,
            h,
            u: u.to(backend)?,
            f: rhs.to(backend)?,
        })
    }

    /// The largest difference between the solution and `exact` over all nodes.
    pub fn max_error(&self, exact: impl Fn(f64, f64) -> f64) -> Result<f64, SolveError> {
        let u = self.u.interior()?;
        let mut worst: f64 = 0.0;
        for j in 0..self.n {
            for i in 0..self.n {
                let e = u[i + j * self.n] - exact(i as f64 * self.h, j as f64 * self.h);
                worst = worst.max(e.abs());
            }
        }
        Ok(worst)
    }
}
