//! A Poisson problem on the unit square or cube: the grid, the right-hand side and the
//! solution.

use crate::SolveError;
use std::ops::Range;
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
    /// The nodes along the last axis that `u` and `f` hold: all (`0..n`), or a rank's
    /// slab ([`Problem::on_rows`]).
    pub rows: Range<usize>,
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
        Problem::on_rows(backend, n, 2, 0..n, |p| g(p[0], p[1]), |p| f(p[0], p[1]))
    }

    /// A 3D problem on the unit cube: boundary values `g(x, y, z)`, source `f(x, y, z)`.
    pub fn new_3d(
        backend: &Backend,
        n: usize,
        g: impl Fn(f64, f64, f64) -> f64,
        f: impl Fn(f64, f64, f64) -> f64,
    ) -> Result<Problem, SolveError> {
        Problem::on_rows(
            backend,
            n,
            3,
            0..n,
            |p| g(p[0], p[1], p[2]),
            |p| f(p[0], p[1], p[2]),
        )
    }

    /// The part of a problem on `n` nodes per axis over `dims` axes (2 or 3) that holds
    /// nodes `rows` of the last axis (a rank's slab, [`crate::Solver::rows`]): boundary
    /// values `g` and source `f` at the nodes' coordinates (`[x, y, z]`, `z` 0 in 2D).
    pub fn on_rows(
        backend: &Backend,
        n: usize,
        dims: usize,
        rows: Range<usize>,
        g: impl Fn([f64; 3]) -> f64,
        f: impl Fn([f64; 3]) -> f64,
    ) -> Result<Problem, SolveError> {
        if !is_coarsenable(n) {
            return Err(SolveError::Size { n });
        }
        if !(2..=3).contains(&dims) || rows.is_empty() || rows.end > n {
            return Err(SolveError::Option {
                name: "rows",
                value: format!("{rows:?} of {n} nodes on {dims} axes"),
                expected: "2 or 3 axes and a non-empty range of the nodes along the last",
            });
        }
        let h = 1.0 / (n - 1) as f64;
        let last = n as isize - 1;
        let axis = dims - 1;
        // Global node indices of a stored point.
        let global = |mut p: [isize; 3]| {
            p[axis] += rows.start as isize;
            p
        };
        let inside = |p: [isize; 3]| p[..dims].iter().all(|&i| (0..=last).contains(&i));
        let on_boundary = |p: [isize; 3]| p[..dims].iter().any(|&i| i == 0 || i == last);
        let x = |p: [isize; 3]| p.map(|i| i as f64 * h);
        let mut extent = vec![n; dims];
        extent[axis] = rows.len();
        let u = Field::from_fn(&extent, HALO, |p| {
            let p = global(p);
            if inside(p) && on_boundary(p) {
                g(x(p))
            } else {
                0.0
            }
        });
        let rhs = Field::from_fn(&extent, HALO, |p| {
            let p = global(p);
            if inside(p) {
                f(x(p))
            } else {
                0.0
            }
        });
        Ok(Problem {
            n,
            dims,
            h,
            u: u.to(backend)?,
            f: rhs.to(backend)?,
            rows,
        })
    }

    /// The largest difference between the 2D solution and `exact` over the nodes held.
    pub fn max_error(&self, exact: impl Fn(f64, f64) -> f64) -> Result<f64, SolveError> {
        self.max_error_at(|p| exact(p[0], p[1]))
    }

    /// The largest difference between the 3D solution and `exact` over the nodes held.
    pub fn max_error_3d(&self, exact: impl Fn(f64, f64, f64) -> f64) -> Result<f64, SolveError> {
        self.max_error_at(|p| exact(p[0], p[1], p[2]))
    }

    /// The largest difference between the solution and `exact` (of `[x, y, z]`, `z` 0 in
    /// 2D) over the nodes held.
    pub fn max_error_at(&self, exact: impl Fn([f64; 3]) -> f64) -> Result<f64, SolveError> {
        let u = self.u.interior()?;
        let e = self.u.extent();
        let (nx, ny, nz) = (e[0], e[1], e.get(2).copied().unwrap_or(1));
        let mut worst: f64 = 0.0;
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let mut at = [i, j, k];
                    at[self.dims - 1] += self.rows.start;
                    let p = at.map(|c| c as f64 * self.h);
                    let e = u[i + nx * (j + ny * k)] - exact(p);
                    worst = worst.max(e.abs());
                }
            }
        }
        Ok(worst)
    }
}
