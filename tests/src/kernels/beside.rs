//! Kernels beside the suite's [`super::ALL`]: on fields of integers and booleans, and a
//! time step held on the backend (the suite-wide checks make fields of reals and pass
//! scalars from the host).

use stencil_runtime::prelude::*;

/// Kernels on fields of integers and booleans (not in [`super::ALL`]: the suite-wide checks
/// make fields of reals).
#[stencils]
pub mod life {
    /// One generation of Conway's Game of Life: a cell (1 alive, 0 dead) lives on with
    /// two or three live neighbours and is born with three.
    #[stencil]
    pub fn generation(cells: In<u8>, next: Out<u8>) {
        let mut around = 0;
        for dj in -1..=1 {
            for di in -1..=1 {
                if di != 0 || dj != 0 {
                    around += cells[(di, dj)];
                }
            }
        }
        next = if around == 3 || (cells == 1 && around == 2) {
            1
        } else {
            0
        };
    }

    /// The population, the largest live neighbourhood, whether any cell and whether every
    /// cell is alive: reductions of integers and booleans.
    #[stencil]
    pub fn census(cells: In<u8>, alive: Sum<i64>, most: Max<i64>, any: Max<bool>, all: Min<bool>) {
        let mut around = 0;
        for dj in -1..=1 {
            for di in -1..=1 {
                around += cells[(di, dj)];
            }
        }
        alive.reduce(cells);
        most.reduce(around);
        any.reduce(cells == 1);
        all.reduce(cells == 1);
    }

    /// Whether a cell is alive, as a boolean, and a count of `i32` that wraps.
    #[stencil]
    pub fn flags(cells: In<u8>, alive: Out<bool>, count: InOut<i32>) {
        alive = cells[(0, 0)] == 1;
        if cells == 1 {
            count = count + 2147483647;
        }
    }
}

/// Bit operations on fields of `i32` and `u8` (read as `i64`), a boolean `^`, and the
/// compound forms (not in [`super::ALL`], as [`life`]).
#[stencils]
pub mod bits {
    /// Mixes the bits of `a` and `b` into `mixed` and sets `odd` where `a` is odd or `b`
    /// is large, not both.
    #[stencil(dims = 2)]
    pub fn mix(a: In<i32>, b: In<u8>, mixed: Out<i32>, odd: Out<bool>) {
        let mut x = a ^ (b << 3);
        x &= 65535;
        x |= a >> 2;
        x ^= -(a << 40) >> 45;
        mixed = x;
        odd = ((a & 1) == 1) ^ (b > 100);
    }

    /// Narrow casts, written to reals so that nothing but the cast narrows: an integer
    /// beyond 32 bits wrapped to `i32` and `u8`, a real saturated to both.
    #[stencil(dims = 2)]
    pub fn narrow(
        a: In<i32>,
        r: In<f64>,
        wide: Out<f64>,
        byte: Out<f64>,
        saturated: Out<f64>,
        saturated_byte: Out<f64>,
    ) {
        let big = a * 4099 + (a << 20);
        wide = (big as i32) as f64;
        byte = (big as u8) as f64;
        saturated = (r as i32) as f64;
        saturated_byte = (r as u8) as f64;
    }
}

/// A time step decided on the backend: a reduction kept as a [`Value`], a one-point clock
/// that turns it into a step, and a relaxation that reads the step as a `Value<T>` (not in
/// [`super::ALL`], as [`life`]).
#[stencils]
pub mod held {
    /// The largest `|u|`.
    #[stencil(dims = 2)]
    pub fn largest<T: Real>(u: In<T>, top: Max<T>) {
        top.reduce(u.abs());
    }

    /// One point: `dt = min(c / top, limit)` (`limit` where `top` is 0, NaN where it is
    /// not a finite number above 0), and `time += dt` in f64.
    #[stencil(dims = 1)]
    pub fn clock<T: Real>(top: Value<T>, time: InOut<f64>, dt: Out<T>, c: f64, limit: f64) {
        let s = top as f64;
        let step = if s > 0.0 {
            (c / s).min(limit)
        } else if s == 0.0 {
            limit
        } else {
            0.0 / 0.0
        };
        time = time + step;
        dt = step as T;
    }

    /// `out = u + dt lap(u)`, with `dt` held on the backend.
    #[stencil]
    pub fn relax<T: Real>(u: In<T>, out: Out<T>, dt: Value<T>) {
        out = u + dt * (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u);
    }
}
