//! A Poisson problem on the unit square or cube: the grid, the right-hand side and the
//! solution.

use crate::SolveError;
use stencil_runtime::{Backend, Field};

/// The halo of the solution and right-hand side: what the 6th-order defect reads.
pub const HALO: usize = 6;

/// `-(ax u_xx + ay u_yy) = f` on the unit square, on `n x n` nodes (`n = 2^k + 1`), or
/// `-(ax u_xx + ay u_yy + az u_zz) = f` on the unit cube, on `n x n x n` nodes.
pub struct Problem {
    /// Nodes per axis.
    pub n: usize,
    /// 2 or 3.
    pub dims: usize,
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
    /// A 2D problem on `backend` whose boundary values (and initial guess on the boundary)
    /// are `g(x, y)`, with source `f(x, y)`; the interior guess is 0.
    pub fn new(
        backend: &Backend,
        n: usize,
        g: impl Fn(f64, f64) -> f64,
        f: impl Fn(f64, f64) -> f64,
    ) -> Result<Problem, SolveError> {
        Problem::build(backend, n, 2, |p| g(p[0], p[1]), |p| f(p[0], p[1]))
    }

    /// A 3D problem on the unit cube: boundary values `g(x, y, z)`, source `f(x, y, z)`.
    pub fn new_3d(
        backend: &Backend,
        n: usize,
        g: impl Fn(f64, f64, f64) -> f64,
        f: impl Fn(f64, f64, f64) -> f64,
    ) -> Result<Problem, SolveError> {
        Problem::build(
            backend,
            n,
            3,
            |p| g(p[0], p[1], p[2]),
            |p| f(p[0], p[1], p[2]),
        )
    }

    fn build(
        backend: &Backend,
        n: usize,
        dims: usize,
        g: impl Fn([f64; 3]) -> f64,
        f: impl Fn([f64; 3]) -> f64,
    ) -> Result<Problem, SolveError> {
        if !is_coarsenable(n) {
            return Err(SolveError::Size { n });
        }
        let h = 1.0 / (n - 1) as f64;
        let last = n as isize - 1;
        let inside = |p: [isize; 3]| p[..dims].iter().all(|&i| (0..=last).contains(&i));
        let on_boundary = |p: [isize; 3]| p[..dims].iter().any(|&i| i == 0 || i == last);
        let x = |p: [isize; 3]| p.map(|i| i as f64 * h);
        let extent = vec![n; dims];
        let u = Field::from_fn(&extent, HALO, |p| {
            if inside(p) && on_boundary(p) {
                g(x(p))
            } else {
                0.0
            }
        });
        let rhs = Field::from_fn(&extent, HALO, |p| if inside(p) { f(x(p)) } else { 0.0 });
        Ok(Problem {
            n,
            dims,
            h,
            u: u.to(backend)?,
            f: rhs.to(backend)?,
        })
    }

    /// The largest difference between the 2D solution and `exact` over all nodes.
    pub fn max_error(&self, exact: impl Fn(f64, f64) -> f64) -> Result<f64, SolveError> {
        self.max_error_at(|p| exact(p[0], p[1]))
    }

    /// The largest difference between the 3D solution and `exact` over all nodes.
    pub fn max_error_3d(&self, exact: impl Fn(f64, f64, f64) -> f64) -> Result<f64, SolveError> {
        self.max_error_at(|p| exact(p[0], p[1], p[2]))
    }

    fn max_error_at(&self, exact: impl Fn([f64; 3]) -> f64) -> Result<f64, SolveError> {
        let u = self.u.interior()?;
        let n = self.n;
        let nz = if self.dims == 3 { n } else { 1 };
        let mut worst: f64 = 0.0;
        for k in 0..nz {
            for j in 0..n {
                for i in 0..n {
                    let p = [i, j, k].map(|c| c as f64 * self.h);
                    let e = u[i + n * (j + n * k)] - exact(p);
                    worst = worst.max(e.abs());
                }
            }
        }
        Ok(worst)
    }
}
