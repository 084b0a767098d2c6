//! Kernels that take parameter groups (`#[stencil_group]`), from a helper library and from
//! their own module, beside the same kernels with every value written out.

use stencil_runtime::prelude::*;

/// A library with a group and a helper that takes one.
#[stencil_helpers]
pub mod waves {
    /// A damped wave's constants and how its west and east sides behave.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Wave<T> {
        /// The speed.
        pub c: T,
        /// The damping rate.
        pub damping: T,
        /// The west side: 0 mirrors the point inside, 1 holds `wall`.
        pub west: i64,
        /// The east side, alike.
        pub east: i64,
        /// The value a holding side gives.
        pub wall: T,
    }

    /// `u` one point along x in direction `step` (-1 or 1), or past the grid's edge the
    /// value of that side (`west` or `east`: 0 mirrors the point inside, 1 holds `wall`).
    #[stencil_fn]
    pub fn beside<T: Real>(u: In<T>, step: i64, west: i64, east: i64, wall: T) -> T {
        let i = index(0) + step;
        if i < 0 {
            if west == 1 {
                wall
            } else {
                u
            }
        } else if i >= extent(0) {
            if east == 1 {
                wall
            } else {
                u
            }
        } else if step < 0 {
            u[(-1, 0)]
        } else {
            u[(1, 0)]
        }
    }

    /// The damped wave's change at a point.
    #[stencil_fn]
    pub fn change<T: Real>(u: In<T>, w: Wave<T>) -> T {
        let lap =
            beside(u, -1, w.west, w.east, w.wall) - 2.0 * u + beside(u, 1, w.west, w.east, w.wall);
        w.c * w.c * lap - w.damping * u
    }
}

/// Kernels with groups and the same kernels written out.
#[stencils(helpers = [waves])]
pub mod grouped {
    use super::waves::Wave;

    /// How a step is taken: a group of the module itself, without a type parameter.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Steps {
        /// The time step.
        pub dt: f64,
        /// Whether to add the change (else only the damping).
        pub full: bool,
    }

    /// One explicit step of the damped wave.
    #[stencil]
    pub fn step<T: Real>(u: In<T>, out: Out<T>, w: Wave<T>, s: Steps) {
        let du = if s.full { change(u, w) } else { -w.damping * u };
        out = u + (s.dt as T) * du;
    }

    /// A kernel whose parameters have the names of the launcher's own variables (`l`,
    /// `n`, `domain`, `r`, `cuda`, `values`): they must not shadow each other.
    #[stencil(dims = 2)]
    pub fn named_like_locals<T: Real>(
        u: In<T>,
        out: Out<T>,
        l: T,
        n: i64,
        domain: T,
        r: T,
        cuda: T,
        values: T,
    ) {
        out = l * u + (n as T) * domain + r * cuda - values;
    }

    /// The damping alone, in a kernel whose type parameter is not named `T` (the
    /// launcher still takes `&Wave<T>`).
    #[stencil]
    pub fn damped<R: Real>(u: In<R>, out: Out<R>, w: Wave<R>) {
        out = u[(0, 0)] - w.damping * u;
    }

    /// A forcing added to a step only in the instances made for `forced`.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Forcing<T> {
        /// The forcing's strength.
        pub amplitude: T,
        /// The point along x it acts from.
        pub from: i64,
    }

    /// [`step`] with a forcing group that exists only in the `forced = true` instance.
    #[stencil(consts(forced = [false, true]))]
    pub fn step_forced<T: Real>(
        u: In<T>,
        out: Out<T>,
        w: Wave<T>,
        s: Steps,
        #[when(forced)] f: Forcing<T>,
        forced: bool,
    ) {
        let du = if s.full { change(u, w) } else { -w.damping * u };
        let push = if forced {
            if index(0) >= f.from {
                f.amplitude
            } else {
                0.0
            }
        } else {
            0.0
        };
        out = u + (s.dt as T) * (du + push);
    }

    /// [`step`] with every value passed alone.
    #[stencil]
    pub fn step_written_out<T: Real>(
        u: In<T>,
        out: Out<T>,
        c: T,
        damping: T,
        west: i64,
        east: i64,
        wall: T,
        dt: f64,
        full: bool,
    ) {
        let du = if full {
            let lap = beside(u, -1, west, east, wall) - 2.0 * u + beside(u, 1, west, east, wall);
            c * c * lap - damping * u
        } else {
            -damping * u
        };
        out = u + (dt as T) * du;
    }
}

/// A group with a member per axis, in a kernel for 2D and 3D.
#[stencils]
pub mod per_axis {
    /// Anisotropic diffusion's constants: a conductivity per axis and the time step.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Diffusion<T> {
        /// The conductivity along each axis.
        pub k: Axes<T>,
        /// The time step.
        pub dt: T,
        /// The lowest index along each axis that is updated (points below keep `u`).
        pub from: Axes<i64>,
    }

    /// One explicit diffusion step with the conductivities of `d`.
    #[stencil(dims = [2, 3])]
    pub fn diffuse<T: Real>(u: In<T>, out: Out<T>, d: Diffusion<T>) {
        let mut s: T = 0.0;
        let mut inside = true;
        for a in 0..ndims() {
            s += d.k[a] * (u[unit(a)] - 2.0 * u + u[-unit(a)]);
            inside = inside && index(a) >= d.from[a];
        }
        out = if inside { u + d.dt * s } else { u };
    }

    /// [`diffuse`] with every value passed alone.
    #[stencil(dims = [2, 3])]
    pub fn diffuse_written_out<T: Real>(u: In<T>, out: Out<T>, k: Axes<T>, dt: T, from: Axes<i64>) {
        let mut s: T = 0.0;
        let mut inside = true;
        for a in 0..ndims() {
            s += k[a] * (u[unit(a)] - 2.0 * u + u[-unit(a)]);
            inside = inside && index(a) >= from[a];
        }
        out = if inside { u + dt * s } else { u };
    }
}

/// Groups taken as fields: a pair of fields passed as one parameter (`In`, `Out`,
/// `InOut`), to a helper by name or built at the call from other fields or staged values.
#[stencils]
pub mod of_fields {
    /// Two fields that travel together.
    #[stencil_group]
    #[derive(Clone, Copy, Debug)]
    pub struct Pair<T> {
        /// The first field.
        pub a: T,
        /// The second field.
        pub b: T,
    }

    /// Each field of `p` moved by the centred difference of the other across it.
    #[stencil_fn]
    fn mix<T: Real>(p: In<Pair<T>>, k: T) -> (T, T) {
        (
            p.a + k * (p.b[(1, 0)] - p.b[(-1, 0)]),
            p.b - k * (p.a[(0, 1)] - p.a[(0, -1)]),
        )
    }

    /// The sum of the pair at the point.
    #[stencil_fn]
    fn total<T: Real>(p: In<Pair<T>>) -> T {
        p.a + p.b
    }

    /// `to` from `from` by [`mix`]; `acc` gains the first part of [`mix`] of a pair
    /// built from `from`'s fields swapped, and its second field becomes its total
    /// times `k`.
    #[stencil(dims = 2)]
    pub fn exchange<T: Real>(from: In<Pair<T>>, to: Out<Pair<T>>, acc: InOut<Pair<T>>, k: T) {
        (to.a, to.b) = mix(from, k);
        let (c, _) = mix(
            Pair {
                b: from.a,
                a: from.b,
            },
            0.5 * k,
        );
        let t = total(acc);
        acc.a = acc.a + c;
        acc.b = t * k;
    }

    /// [`exchange`] with every field passed alone.
    #[stencil(dims = 2)]
    pub fn exchange_written_out<T: Real>(
        from_a: In<T>,
        from_b: In<T>,
        to_a: Out<T>,
        to_b: Out<T>,
        acc_a: InOut<T>,
        acc_b: InOut<T>,
        k: T,
    ) {
        to_a = from_a + k * (from_b[(1, 0)] - from_b[(-1, 0)]);
        to_b = from_b - k * (from_a[(0, 1)] - from_a[(0, -1)]);
        let c = from_b + (0.5 * k) * (from_a[(1, 0)] - from_a[(-1, 0)]);
        let t = acc_a + acc_b;
        acc_a = acc_a + c;
        acc_b = t * k;
    }

    /// The sum of the pair's Laplacians, on 2D and 3D grids (`dims = [2, 3]`: the
    /// launchers pick the definition by the dimension of `to`'s fields).
    #[stencil(dims = [2, 3])]
    pub fn laplacians<T: Real>(p: In<Pair<T>>, to: Out<Pair<T>>) {
        let mut la: T = 0.0;
        let mut lb: T = 0.0;
        for a in 0..ndims() {
            la += p.a[unit(a)] - 2.0 * p.a + p.a[-unit(a)];
            lb += p.b[unit(a)] - 2.0 * p.b + p.b[-unit(a)];
        }
        to.a = la;
        to.b = la + lb;
    }

    /// `to.a = from.a + from.b`, plus `extra`'s fields in the instance made for `more`
    /// (a group of fields under `#[when]`, in a kernel with constants).
    #[stencil(dims = 2, consts(more = [false, true]))]
    pub fn summed<T: Real>(
        from: In<Pair<T>>,
        #[when(more)] extra: In<Pair<T>>,
        to: Out<Pair<T>>,
        more: bool,
    ) {
        let base = from.a + from.b;
        to.a = if more {
            base + extra.a[(1, 0)] + extra.b
        } else {
            base
        };
        to.b = base;
    }

    /// The differences to the east and north neighbours.
    #[stencil_fn]
    fn ahead<T: Real>(u: In<T>) -> (T, T) {
        (u[(1, 0)] - u, u[(0, 1)] - u)
    }

    /// [`mix`] of a pair built from two staged values: `u`'s differences ahead.
    #[stencil(dims = 2)]
    pub fn staged_pair<T: Real>(u: In<T>, to: Out<Pair<T>>, k: T) {
        let (east, north) = stage(ahead(u));
        (to.a, to.b) = mix(Pair { a: east, b: north }, k);
    }

    /// [`staged_pair`] written out on `u`.
    #[stencil(dims = 2)]
    pub fn staged_pair_written_out<T: Real>(u: In<T>, to_a: Out<T>, to_b: Out<T>, k: T) {
        let east = u[(1, 0)] - u;
        let north = u[(0, 1)] - u;
        to_a = east + k * ((u[(1, 1)] - u[(1, 0)]) - (u[(-1, 1)] - u[(-1, 0)]));
        to_b = north - k * ((u[(1, 1)] - u[(0, 1)]) - (u[(1, -1)] - u[(0, -1)]));
    }
}
