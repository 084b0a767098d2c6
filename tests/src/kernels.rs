//! The kernels of the conformance suite, written with the macros as a user would.
//! `tests/kernels/suite.stencil` holds the same kernels in the text format. The kernels
//! that suite-wide checks cannot run (fields of integers and booleans, values held on the
//! backend) are in `kernels/beside.rs`.

use stencil_runtime::prelude::*;

mod beside;
pub mod groups;
pub use beside::{bits, held, life};

#[stencils]
pub mod suite {

    /// 2D 5-point Laplacian.
    #[stencil]
    pub fn lap5<T: Real>(u: In<T>, out: Out<T>, inv_h2: T) {
        out = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u) * inv_h2;
    }

    /// 2D 9-point (Mehrstellen) Laplacian, written with unrolled loops.
    #[stencil]
    pub fn lap9<T: Real>(u: In<T>, out: Out<T>, inv_h2: T) {
        let mut edges: T = 0.0;
        let mut corners: T = 0.0;
        for dj in -1..=1 {
            for di in -1..=1 {
                if (di + dj) % 2 != 0 {
                    edges += u[(di, dj)];
                } else if di != 0 {
                    corners += u[(di, dj)];
                }
            }
        }
        out = (4.0 * edges + corners - 20.0 * u) * inv_h2 / 6.0;
    }

    /// 3D 7-point Laplacian.
    #[stencil]
    pub fn lap7<T: Real>(u: In<T>, out: Out<T>, inv_h2: T) {
        let sum = u[(-1, 0, 0)]
            + u[(1, 0, 0)]
            + u[(0, -1, 0)]
            + u[(0, 1, 0)]
            + u[(0, 0, -1)]
            + u[(0, 0, 1)];
        out = (sum - 6.0 * u) * inv_h2;
    }

    /// Weighted-Jacobi sweep for -lap(u) = f.
    #[stencil]
    pub fn jacobi<T: Real>(u: In<T>, f: In<T>, out: Out<T>, h2: T, omega: T) {
        let r = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] + h2 * f) * 0.25;
        out = u + omega * (r - u);
    }

    /// First-order upwind advection step.
    #[stencil]
    pub fn upwind<T: Real>(q: In<T>, vx: In<T>, vy: In<T>, out: Out<T>, dt_dx: T) {
        let fx = if vx > 0.0 {
            vx * (q - q[(-1, 0)])
        } else {
            vx * (q[(1, 0)] - q)
        };
        let fy = if vy > 0.0 {
            vy * (q - q[(0, -1)])
        } else {
            vy * (q[(0, 1)] - q)
        };
        out = q - dt_dx * (fx + fy);
    }

    /// The generalised minmod limiter (Kurganov-Petrova, theta in [1, 2]).
    #[stencil_fn]
    pub fn minmod3<T: Real>(a: T, b: T, c: T) -> T {
        if a > 0.0 && b > 0.0 && c > 0.0 {
            a.min(b).min(c)
        } else if a < 0.0 && b < 0.0 && c < 0.0 {
            a.max(b).max(c)
        } else {
            0.0
        }
    }

    /// Limited linear reconstruction: the values at a cell's two faces.
    #[stencil]
    pub fn reconstruct<T: Real>(q: In<T>, west: Out<T>, east: Out<T>, theta: T) {
        let slope = minmod3(
            theta * (q - q[-1]),
            0.5 * (q[1] - q[-1]),
            theta * (q[1] - q),
        );
        west = q - 0.5 * slope;
        east = q + 0.5 * slope;
    }

    /// Largest shallow-water wave speed over wet cells (the CFL time step).
    #[stencil(dims = 2)]
    pub fn cfl<T: Real>(h: In<T>, hu: In<T>, hv: In<T>, speed: Max<T>, g: T, dry: T) {
        if h > dry {
            let c = (g * h).sqrt();
            speed.reduce(((hu / h).abs() + c).max((hv / h).abs() + c));
        }
    }

    /// Largest magnitude (the benchmark's max-reduction).
    #[stencil(dims = 2)]
    pub fn maxabs<T: Real>(u: In<T>, largest: Max<T>) {
        largest.reduce(u.abs());
    }

    /// Total mass and smallest depth.
    #[stencil(dims = 2)]
    pub fn mass<T: Real>(h: In<T>, total: Sum<T>, lowest: Min<T>, cell_area: T) {
        total.reduce(h * cell_area);
        lowest.reduce(h);
    }

    /// Every math intrinsic once (inputs in [0.5, 2]).
    #[stencil(dims = 1)]
    pub fn intrinsics<T: Real>(a: In<T>, b: In<T>, out: Out<T>) {
        let x = a.exp().ln() + a.powf(b) + sign(a - 1.0) * copysign(b, a - 1.2);
        let y = fma(a, b, 0.5) + (a * 3.0).floor() + sqrt(b) + (a - b).abs();
        let z = a.powi(3) - powi(b, -2) + (a * b).powi(0) + b.powi(13);
        out = x + y + z + min(a, b) - max(a, b) + exp(-30.0 * b) + ln(b * 1e-3);
    }

    /// Powers of two and the base-2 and base-10 logarithms (inputs in [0.5, 2]).
    #[stencil(dims = 1)]
    pub fn binary_logs<T: Real>(a: In<T>, b: In<T>, out: Out<T>) {
        out = (a * 3.0).exp2() + b.log2() - log10(a * b) + exp2(-40.0 * b);
    }

    /// The hyperbolic functions and their inverses, `hypot` and `cbrt` (inputs in [-3, 3]).
    #[stencil(dims = 1)]
    pub fn hyperbolic<T: Real>(a: In<T>, b: In<T>, out: Out<T>) {
        out = a.sinh() + cosh(b) - (a * b).tanh()
            + sinh(30.0 * a) * 1e-12
            + hypot(a, b)
            + (a - b).cbrt()
            + asinh(a)
            + (0.3 * b).atanh()
            + acosh(1.0 + a * a);
    }

    /// The trigonometric functions and their inverses (inputs in [0.5, 2]; the sine of
    /// arguments beyond the first reduction's range too). In 1D: one entry per precision,
    /// where a 2D kernel's tile variants would repeat this much inline arithmetic up to 16
    /// times per entry (`tiled_sine` covers the variants).
    #[stencil(dims = 1)]
    pub fn trigonometric<T: Real>(a: In<T>, b: In<T>, out: Out<T>) {
        out = a.sin()
            + cos(3.0 * b)
            + (a * 0.7).tan()
            + sin(1e7 * a) * 1e-3
            + asin(0.5 * b)
            + acos(0.5 * a)
            + atan(a - b)
            + atan2(a - 1.0, b - 1.2);
    }

    /// The sine of arguments beyond the first reduction's range, in 2D: its tile variants
    /// each use the second reduction's constant table, which their merged PTX holds once.
    #[stencil(dims = 2)]
    pub fn tiled_sine<T: Real>(a: In<T>, out: Out<T>) {
        out = sin(1e7 * a);
    }

    /// A search with `break` and `continue`: the distance of the first of the next four
    /// points above 1.6, skipping distance 2 (inputs in [0.5, 2]).
    #[stencil(dims = 1)]
    pub fn search<T: Real>(a: In<T>, out: Out<T>) {
        let mut found = 0.0;
        let mut d = 0.0;
        for k in 1..=4 {
            d += 1.0;
            if k == 2 {
                continue;
            }
            if a[k] > 1.6 {
                found = d;
                break;
            }
        }
        out = found + 0.1 * d;
    }

    /// Two values in order: a helper returning a tuple.
    #[stencil_fn]
    pub fn order<T: Real>(a: T, b: T) -> (T, T) {
        if a < b {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// The spread of the two neighbours, through `order` and destructuring `let`s (inputs in
    /// [0.5, 2]).
    #[stencil(dims = 1)]
    pub fn spread<T: Real>(a: In<T>, out: Out<T>) {
        let (lo, hi) = order(a[-1], a[1]);
        let (mut s, _) = (lo * 2.0, hi);
        s += hi;
        out = hi - lo + 0.25 * s;
    }

    /// A central difference along an offset the caller passes (a tuple parameter).
    #[stencil_fn]
    pub fn central<T: Real>(u: In<T>, d: (i64, i64)) -> T {
        u[d] - u[-d]
    }

    /// Central differences along x and, two cells apart, along y, through `central` (2D,
    /// inferred from the offset parameter).
    #[stencil]
    pub fn differences<T: Real>(u: In<T>, out: Out<T>) {
        out = central(u, (1, 0)) + 0.5 * central(u, (0, 2));
    }

    /// The Laplacian written once for any dimension: per axis, through `ndims` and `unit`.
    #[stencil_fn]
    pub fn laplacian<T: Real>(u: In<T>) -> T {
        let mut s = 0.0;
        for a in 0..ndims() {
            s += u[unit(a)] + u[-unit(a)] - 2.0 * u;
        }
        s
    }

    /// The dimension-generic Laplacian in 2D.
    #[stencil(dims = 2)]
    pub fn generic_lap_2d<T: Real>(u: In<T>, out: Out<T>) {
        out = laplacian(u);
    }

    /// The same helper in 3D.
    #[stencil(dims = 3)]
    pub fn generic_lap_3d<T: Real>(u: In<T>, out: Out<T>) {
        out = laplacian(u);
    }

    /// The Laplacian weighted per axis, `sum over a of k_a (u(x + e_a) - 2 u(x) + u(x - e_a))`.
    #[stencil_fn]
    pub fn weighted_laplacian<T: Real>(u: In<T>, k: Axes<T>) -> T {
        let mut s = 0.0;
        for a in 0..ndims() {
            s += k[a] * (u[unit(a)] - 2.0 * u + u[-unit(a)]);
        }
        s
    }

    /// Anisotropic diffusion, one definition for 2D and 3D: a step of `u_t = sum k_a u_aa`
    /// with one conductivity per axis.
    #[stencil(dims = [2, 3])]
    pub fn diffuse<T: Real>(u: In<T>, out: Out<T>, k: Axes<T>, dt: T) {
        out = u + dt * weighted_laplacian(u, k);
    }

    /// Cell-centred restriction (a `Fine` field of `2n` points): the coarse cell averages its four children.
    #[stencil]
    pub fn restrict_cells<T: Real>(fine: Fine<T>, coarse: Out<T>) {
        coarse = 0.25 * (fine + fine[(1, 0)] + fine[(0, 1)] + fine[(1, 1)]);
    }

    /// Cell-centred bilinear prolongation (a `Coarse` field of `n / 2` points): 9/16 of the parent, 3/16 of each parent
    /// neighbour on the child's side, 1/16 of the diagonal one.
    #[stencil]
    pub fn prolong_cells<T: Real>(coarse: Coarse<T>, fine: Out<T>) {
        let ei = index(0) % 2 == 0;
        let ej = index(1) % 2 == 0;
        let cx = if ei { coarse[(-1, 0)] } else { coarse[(1, 0)] };
        let cy = if ej { coarse[(0, -1)] } else { coarse[(0, 1)] };
        let cxy = if ei {
            if ej {
                coarse[(-1, -1)]
            } else {
                coarse[(-1, 1)]
            }
        } else if ej {
            coarse[(1, -1)]
        } else {
            coarse[(1, 1)]
        };
        fine = 0.5625 * coarse + 0.1875 * (cx + cy) + 0.0625 * cxy;
    }

    /// Vertex-centred bilinear prolongation (a `Coarse` field of `(n + 1) / 2` nodes): a
    /// fine node at an even index takes the coarse node it lies on, an odd one the mean
    /// of the two around it; the first and last node along x are 0. Its parity and edge
    /// tests make the CPU run the middle of a row in pairs (`kernels_gen::back::edges`).
    #[stencil]
    pub fn prolong_nodes<T: Real>(coarse: Coarse<T>, fine: Out<T>) {
        let x_odd = index(0) % 2 == 1;
        let low = if x_odd {
            0.5 * (coarse + coarse[(1, 0)])
        } else {
            coarse
        };
        let high = if x_odd {
            0.5 * (coarse[(0, 1)] + coarse[(1, 1)])
        } else {
            coarse[(0, 1)]
        };
        let wy = if index(1) % 2 != 0 { 0.5 } else { 0.0 };
        fine = if index(0) == 0 || index(0) == extent(0) - 1 {
            0.0
        } else {
            low + wy * (high - low)
        };
    }

    /// Powers `a^b`, and `a^(4/3)` as a friction law takes it (the CPU's f32 `powf` is the
    /// device's arithmetic: the two agree bit for bit).
    #[stencil(dims = 1)]
    pub fn powers<T: Real>(a: In<T>, b: In<T>, p: Out<T>, q: Out<T>) {
        p = a.powf(b);
        q = a.powf(4.0 / 3.0);
    }

    /// Rounding to integers (inputs with halves and negative values).
    #[stencil(dims = 1)]
    pub fn rounding<T: Real>(a: In<T>, down: Out<T>, up: Out<T>, zero: Out<T>, near: Out<T>) {
        down = a.floor();
        up = ceil(a);
        zero = a.trunc();
        near = round(a);
    }

    /// Costly work only some points need, under `if`s that the compiler turns into
    /// branches: two outputs sharing an edge's square roots and divisions, a nested
    /// data-dependent arm, and two selects on one condition where one arm needs the other
    /// select (which keeps that condition's work unguarded).
    #[stencil(dims = 2)]
    pub fn guarded<T: Real>(
        u: In<T>,
        v: In<T>,
        a: Out<T>,
        b: Out<T>,
        c: Out<T>,
        largest: Max<T>,
        k: T,
    ) {
        let edge = index(0) == 0 || index(1) == extent(1) - 1;
        let s = (u * u + v * v + k).sqrt();
        let shared = (s + k) / (u.abs() + 1.0);
        let first = if edge {
            shared * (s / (v.abs() + 2.0)).sqrt()
        } else {
            u[(1, 0)]
        };
        let second = if edge {
            shared.powf(1.5) / (s + 1.0)
        } else {
            v[(0, 1)]
        };
        let deep = if u > 1.2 {
            if v > 1.0 {
                (u / (v + 1.0)).sqrt() / (u + v) + (u + 2.0).ln()
            } else {
                u * v
            }
        } else {
            -u
        };
        let south = index(1) == 0;
        let third = if south {
            (v / (u + 3.0)).sqrt() / (u + 0.5)
        } else {
            u[(0, -1)]
        };
        let fourth = if south {
            (third + 1.0).sqrt() / (third * third + 2.0)
        } else {
            v
        };
        a = first + deep;
        b = second + fourth;
        c = third;
        largest.reduce(first.abs() + fourth);
    }

    /// Cell indices, coordinates and integer arithmetic: a red-black pattern.
    #[stencil(dims = 2)]
    pub fn checker<T: Real>(u: In<T>, out: Out<T>, x0: T, dx: T) {
        let red = (index(0) + index(1)) % 2 == 0;
        let x = coord(0, x0, dx);
        out = if red {
            u * x
        } else {
            u + (extent(1) - index(1)) as T
        };
    }

    /// Edge tests of every form of index `i` along an axis of `n` points, each adding its
    /// own power of two.
    #[stencil_fn]
    pub fn edge_weight<T: Real>(i: i64, n: i64) -> T {
        let a = if i == 0 { 1.0 } else { 0.0 };
        let b = if i == 1 { 2.0 } else { 0.0 };
        let c = if i == n - 1 { 4.0 } else { 0.0 };
        let d = if n - 2 == i { 8.0 } else { 0.0 };
        let e = if i < 2 { 16.0 } else { 0.0 };
        let f = if i >= n - 2 { 32.0 } else { 0.0 };
        let g = if 1 >= i { 64.0 } else { 0.0 };
        let h = if i > n - 3 { 128.0 } else { 0.0 };
        let p = if i != 0 { 256.0 } else { 0.0 };
        let q = if i <= n - 3 { 512.0 } else { 0.0 };
        a + b + c + d + e + f + g + h + p + q
    }

    /// The edge tests of [`edge_weight`] along axis 0: the CPU runs a row's middle points
    /// with such tests decided, which must change nothing.
    #[stencil(dims = 2)]
    pub fn edge_tests<T: Real>(u: In<T>, out: Out<T>, total: Sum<T>) {
        let w = edge_weight(index(0), extent(0));
        out = u * w;
        total.reduce(w);
    }

    /// The edge tests of [`edge_weight`] along axis 1, beside one along axis 0 (which gives
    /// the CPU's rows their middle loop): the CPU runs the middle points of the rows at
    /// least two from both ends of axis 1 with such tests decided
    /// (`tests/tests/conformance/row_edges.rs`).
    #[stencil(dims = 2)]
    pub fn row_edge_tests<T: Real>(u: In<T>, out: Out<T>) {
        let w = edge_weight(index(1), extent(1));
        let x = if index(0) == 0 { 1024.0 } else { 0.0 };
        out = u * (w + x);
    }

    /// The upwind flux of `q`, carried at the speed `c` averaged onto the face between a
    /// cell and its neighbour `d`, with the face's speed; no flux through the domain's
    /// high walls.
    #[stencil_fn]
    pub fn face_flux<T: Real>(q: In<T>, c: In<T>, d: (i64, i64)) -> (T, T) {
        let speed = 0.5 * (c + c[d]);
        let flux = if speed > 0.0 { speed * q } else { speed * q[d] };
        let wall = index(0) + d[0] == extent(0) || index(1) + d[1] == extent(1);
        (if wall { 0.0 } else { flux }, speed.abs())
    }

    /// The difference of `f` at the point and one step back along `d`.
    #[stencil_fn]
    pub fn backward<T: Real>(f: In<T>, d: (i64, i64)) -> T {
        f - f[-d]
    }

    /// A conservative update from staged face fluxes (each face's flux computed once and
    /// read by the cells on both sides), the fastest face and a staged value of the
    /// indices: `stage` on every path.
    #[stencil]
    pub fn staged_update<T: Real>(q: In<T>, c: In<T>, out: Out<T>, dt: T, fastest: Max<T>) {
        let (fx, sx) = stage(face_flux(q, c, (1, 0)));
        let (fy, sy) = stage(face_flux(q, c, (0, 1)));
        let ramp = stage(q * (index(0) + 2 * index(1)) as T);
        out = q - dt * (backward(fx, (1, 0)) + fy - fy[(0, -1)])
            + 1e-3 * (ramp[(1, 1)] - ramp[(-1, 0)]);
        fastest.reduce(sx.max(sx[(-1, 0)]).max(sy[(0, -1)]));
    }

    /// A 1D diffusion step from staged differences, with the total change in magnitude.
    #[stencil]
    pub fn staged_smooth<T: Real>(u: In<T>, out: Out<T>, nu: T, change: Sum<T>) {
        let d = stage(u[1] - u);
        out = u + nu * (d - d[-1]);
        change.reduce((d - d[-1]).abs());
    }

    /// The 3D Laplacian in two steps: the forward differences along each axis staged, then
    /// their backward differences.
    #[stencil(dims = 3)]
    pub fn staged_lap3<T: Real>(u: In<T>, out: Out<T>, inv_h2: T) {
        let (gx, gy, gz) = stage((u[(1, 0, 0)] - u, u[(0, 1, 0)] - u, u[(0, 0, 1)] - u));
        out = (gx - gx[(-1, 0, 0)] + gy - gy[(0, -1, 0)] + gz - gz[(0, 0, -1)]) * inv_h2;
    }
}

/// What the macro embedded for one kernel.
#[derive(Clone, Copy, Debug)]
pub struct Compiled {
    /// Kernel name.
    pub name: &'static str,
    /// Number of dimensions.
    pub dims: usize,
    /// IR text.
    pub ir: &'static str,
    /// Source text.
    pub source: &'static str,
    /// PTX with T = f32, and its entry.
    pub ptx_f32: (&'static str, &'static str),
    /// PTX with T = f64, and its entry.
    pub ptx_f64: (&'static str, &'static str),
}

macro_rules! registry {
    ($($($k:ident)::+),* $(,)?) => {
        /// Every kernel of the suite (one entry per dimension of a kernel defined for
        /// several).
        pub const ALL: &[Compiled] = &[$(Compiled {
            name: suite::$($k)::+::NAME,
            dims: suite::$($k)::+::DIMS,
            ir: suite::$($k)::+::IR,
            source: suite::$($k)::+::SOURCE,
            ptx_f32: (suite::$($k)::+::PTX_F32, suite::$($k)::+::ENTRY_F32),
            ptx_f64: (suite::$($k)::+::PTX_F64, suite::$($k)::+::ENTRY_F64),
        }),*];
    };
}

registry!(
    lap5,
    lap9,
    lap7,
    jacobi,
    upwind,
    reconstruct,
    cfl,
    maxabs,
    mass,
    intrinsics,
    rounding,
    binary_logs,
    hyperbolic,
    trigonometric,
    tiled_sine,
    search,
    spread,
    differences,
    generic_lap_2d,
    generic_lap_3d,
    diffuse::d2,
    diffuse::d3,
    checker,
    guarded,
    staged_update,
    staged_smooth,
    staged_lap3
);

/// The kernels whose cost is moving memory: they must not touch local memory.
pub const BANDWIDTH_BOUND: &[&str] = &["lap5", "lap9", "lap7", "jacobi", "upwind", "reconstruct"];
