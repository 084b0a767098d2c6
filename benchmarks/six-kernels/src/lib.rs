//! Six small kernels of the kinds a new user writes first: a heat step, advection with a
//! flux limiter, a Sobel edge detector with a maximum, diffusion with harmonic-mean
//! coefficients, a 27-point box filter and a leapfrog wave step. `benchmarks/rebuild.sh`
//! times how long this crate takes to rebuild after one kernel changes (issue 30's bar);
//! `tests/six_kernels.rs` checks each kernel against the same sums in Rust.

use stencil_runtime::prelude::*;

#[stencils]
pub mod kernels {
    /// One explicit heat-equation step: `out = u + a * lap(u)` with `a = kappa dt / h^2`.
    #[stencil]
    pub fn heat_step<T: Real>(u: In<T>, out: Out<T>, a: T) {
        out = u + a * (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u);
    }

    /// The minmod limiter of two slopes.
    #[stencil_fn]
    fn minmod<T: Real>(a: T, b: T) -> T {
        if a > 0.0 && b > 0.0 {
            a.min(b)
        } else if a < 0.0 && b < 0.0 {
            a.max(b)
        } else {
            0.0
        }
    }

    /// One upwind step of `q_t + c q_x = 0` (c > 0) with minmod-limited second-order
    /// slopes along x; `r = c dt / h`.
    #[stencil]
    pub fn limited_advection<T: Real>(q: In<T>, out: Out<T>, r: T) {
        let s = minmod(q - q[(-1, 0)], q[(1, 0)] - q);
        let sw = minmod(q[(-1, 0)] - q[(-2, 0)], q - q[(-1, 0)]);
        let face_e = q + 0.5 * (1.0 - r) * s;
        let face_w = q[(-1, 0)] + 0.5 * (1.0 - r) * sw;
        out = q - r * (face_e - face_w);
    }

    /// The Sobel gradient magnitude of an image, and its largest value.
    #[stencil]
    pub fn sobel<T: Real>(img: In<T>, edges: Out<T>, largest: Max<T>) {
        let gx = img[(1, -1)] + 2.0 * img[(1, 0)] + img[(1, 1)]
            - img[(-1, -1)]
            - 2.0 * img[(-1, 0)]
            - img[(-1, 1)];
        let gy = img[(-1, 1)] + 2.0 * img[(0, 1)] + img[(1, 1)]
            - img[(-1, -1)]
            - 2.0 * img[(0, -1)]
            - img[(1, -1)];
        let g = (gx * gx + gy * gy).sqrt();
        edges = g;
        largest.reduce(g);
    }

    /// The harmonic mean of two positive coefficients: the conductance of a face.
    #[stencil_fn]
    fn harmonic<T: Real>(a: T, b: T) -> T {
        2.0 * a * b / (a + b)
    }

    /// One step of `u_t = div(k grad u)` with face coefficients the harmonic means of
    /// the cells' `k`; `a = dt / h^2`.
    #[stencil]
    pub fn harmonic_diffusion<T: Real>(u: In<T>, k: In<T>, out: Out<T>, a: T) {
        let flux = harmonic(k, k[(1, 0)]) * (u[(1, 0)] - u)
            - harmonic(k, k[(-1, 0)]) * (u - u[(-1, 0)])
            + harmonic(k, k[(0, 1)]) * (u[(0, 1)] - u)
            - harmonic(k, k[(0, -1)]) * (u - u[(0, -1)]);
        out = u + a * flux;
    }

    /// The mean of the 27 points of the 3 x 3 x 3 box around each point.
    #[stencil]
    pub fn box27<T: Real>(u: In<T>, out: Out<T>) {
        let mut s = 0.0;
        for dk in -1..=1 {
            for dj in -1..=1 {
                for di in -1..=1 {
                    s += u[(di, dj, dk)];
                }
            }
        }
        out = s / 27.0;
    }

    /// One leapfrog step of the wave equation: `next = 2u - prev + c2 lap(u)` with
    /// `c2 = (c dt / h)^2`.
    #[stencil]
    pub fn leapfrog<T: Real>(u: In<T>, prev: In<T>, next: Out<T>, c2: T) {
        let lap = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u;
        next = 2.0 * u - prev + c2 * lap;
    }
}
