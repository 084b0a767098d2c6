//! Every kernel of the cavity solver, in the stencil language.
//!
//! The grid is vertex-centred: `n x n` nodes (`n = 2^k + 1`) cover the unit square,
//! walls included, node `(i, j)` at `(i h, j h)` with `h = 1 / (n - 1)`; the lid is the row
//! `j = n - 1`. Fields have a halo of one ghost layer that no kernel's result depends on
//! (where a wall node would read it, the value read is discarded).
//!
//! The fields may hold a slab of rows of the grid (one rank's part, over several ranks):
//! the flow kernels take `j0`, the grid's index of the fields' row 0, and `nj`, the grid's
//! rows (`0` and `extent(1)` for the whole grid), and a slab's ghost rows hold its
//! neighbours' rows where a kernel reads them.

use stencil_runtime::prelude::*;

/// The helpers both modules of kernels share (this one and
/// [`crate::adaptive::kernels::poisson`]).
#[stencil_helpers]
pub(crate) mod walls {
    /// Whether node `(i, j)` lies on a wall of the `nx x ny` nodes.
    #[stencil_fn]
    fn on_wall(i: i64, j: i64, nx: i64, ny: i64) -> bool {
        i == 0 || j == 0 || i == nx - 1 || j == ny - 1
    }
}

#[stencils(helpers = [walls])]
pub mod flow {
    /// Wall vorticity from the stream function by Thom's formula,
    /// `w_wall = 2 (psi_wall - psi_1) / h^2 - 2 U_t / h`, with `psi_wall = 0`, `psi_1` the
    /// value one node inside and `U_t` the wall's tangential speed (the lid's `U` at
    /// `j = n - 1`, 0 elsewhere; `lid = 2 U / h`). Interior nodes keep their value. The
    /// corners, where the formula is ambiguous and no interior stencil reads, get the side
    /// walls' value.
    #[stencil]
    pub fn wall_vorticity<T: Real>(psi: In<T>, w: InOut<T>, h2inv: T, lid: T, j0: i64, nj: i64) {
        let i = index(0);
        let j = index(1) + j0;
        if i == 0 {
            w = -2.0 * psi[(1, 0)] * h2inv;
        } else if i == extent(0) - 1 {
            w = -2.0 * psi[(-1, 0)] * h2inv;
        } else if j == 0 {
            w = -2.0 * psi[(0, 1)] * h2inv;
        } else if j == nj - 1 {
            w = -2.0 * psi[(0, -1)] * h2inv - lid;
        }
    }

    /// One stage of classical RK4 for `dw/dt = F(w) = lap(w) / Re - u w_x - v w_y`, with
    /// `u = psi_y`, `v = -psi_x` (all central differences) from the stage's stream
    /// function. At interior nodes:
    ///
    /// - `acc_out = (first ? base : acc) + a F(stage)` (the running RK4 sum),
    /// - `next = (last ? acc : base) + c F(stage)` (the next stage's vorticity, or after
    ///   the last stage the new time level).
    ///
    /// Wall nodes copy `acc_out` from its start and `next` from `stage` (their vorticity is
    /// set from the stream function before it is read).
    #[stencil]
    pub fn rk4_stage<T: Real>(
        stage: In<T>,
        psi: In<T>,
        base: In<T>,
        acc: In<T>,
        acc_out: Out<T>,
        next: Out<T>,
        re_inv: T,
        h_inv: T,
        a: T,
        c: T,
        first: bool,
        last: bool,
        j0: i64,
        nj: i64,
    ) {
        let half = 0.5 * h_inv;
        let u = (psi[(0, 1)] - psi[(0, -1)]) * half;
        let v = (psi[(-1, 0)] - psi[(1, 0)]) * half;
        let west = stage[(-1, 0)];
        let east = stage[(1, 0)];
        let south = stage[(0, -1)];
        let north = stage[(0, 1)];
        let diffusion = re_inv * (west + east + south + north - 4.0 * stage) * h_inv * h_inv;
        let rate = diffusion - u * (east - west) * half - v * (north - south) * half;
        let acc_start = if first { base } else { acc };
        let next_start = if last { acc } else { base };
        if on_wall(index(0), index(1) + j0, extent(0), nj) {
            acc_out = acc_start;
            next = stage;
        } else {
            acc_out = acc_start + a * rate;
            next = next_start + c * rate;
        }
    }

    /// The velocity `u = psi_y`, `v = -psi_x` (central differences inside; on the walls
    /// no slip, the lid moving at `lid_speed`, its corners included).
    #[stencil]
    pub fn velocity<T: Real>(
        psi: In<T>,
        u: Out<T>,
        v: Out<T>,
        h_inv: T,
        lid_speed: T,
        j0: i64,
        nj: i64,
    ) {
        let half = 0.5 * h_inv;
        let j = index(1) + j0;
        if j == nj - 1 {
            u = lid_speed;
            v = 0.0;
        } else if on_wall(index(0), j, extent(0), nj) {
            u = 0.0;
            v = 0.0;
        } else {
            u = (psi[(0, 1)] - psi[(0, -1)]) * half;
            v = (psi[(-1, 0)] - psi[(1, 0)]) * half;
        }
    }

    /// The largest `|u| + |v|` inside (the advective speed the time step must respect).
    #[stencil]
    pub fn speed<T: Real>(psi: In<T>, largest: Max<T>, h_inv: T, j0: i64, nj: i64) {
        let half = 0.5 * h_inv;
        let u = (psi[(0, 1)] - psi[(0, -1)]) * half;
        let v = (psi[(-1, 0)] - psi[(1, 0)]) * half;
        if !on_wall(index(0), index(1) + j0, extent(0), nj) {
            largest.reduce(u.abs() + v.abs());
        }
    }

    /// How far `w` moved from `previous`: the sums of `(w - previous)^2` and `w^2` over
    /// the nodes (NaN anywhere makes them NaN) and the largest `|w|` inside.
    #[stencil(dims = 2)]
    pub fn change<T: Real>(
        w: In<T>,
        previous: In<T>,
        moved: Sum<T>,
        size: Sum<T>,
        largest: Max<T>,
        j0: i64,
        nj: i64,
    ) {
        let d = w - previous;
        moved.reduce(d * d);
        size.reduce(w * w);
        if !on_wall(index(0), index(1) + j0, extent(0), nj) {
            largest.reduce(w.abs());
        }
    }
}
