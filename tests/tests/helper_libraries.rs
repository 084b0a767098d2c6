//! Helper libraries (`#[stencil_helpers]`) shared by `#[stencils]` modules: a kernel that
//! imports its helpers (from a library that itself imports another) compiles to the same
//! IR as the kernel written with the helpers beside it, and runs to the same values.

use stencil_runtime::prelude::*;
use stencil_tests::harness::{random_field, rng, values};

/// Differences along any axis, for any dimension.
#[stencil_helpers]
mod differences {
    /// `u(x + e_a) - u(x)`
    #[stencil_fn]
    fn forward<T: Real>(u: In<T>, a: i64) -> T {
        u[unit(a)] - u
    }

    /// `u(x) - u(x - e_a)`
    #[stencil_fn]
    fn backward<T: Real>(u: In<T>, a: i64) -> T {
        u - u[-unit(a)]
    }
}

/// Limited slopes, built on the differences.
#[stencil_helpers(helpers = differences)]
mod limiters {
    #[stencil_fn]
    fn minmod<T: Real>(a: T, b: T) -> T {
        if a * b <= 0.0 {
            0.0
        } else if a.abs() < b.abs() {
            a
        } else {
            b
        }
    }

    /// The minmod slope of `u` along axis `a` and the two one-sided differences.
    #[stencil_fn]
    fn slope<T: Real>(u: In<T>, a: i64) -> (T, T, T) {
        let (f, b) = (forward(u, a), backward(u, a));
        (minmod(f, b), f, b)
    }
}

/// Kernels that import both libraries.
#[stencils(helpers = [differences, limiters])]
mod imported {
    /// The sum over axes of the limited slopes and the spread of the differences.
    #[stencil(dims = [2, 3])]
    pub fn slopes<T: Real>(u: In<T>, s: Out<T>, spread: Out<T>) {
        let mut sum = 0.0;
        let mut most = 0.0;
        for a in 0..ndims() {
            let (m, f, b) = slope(u, a);
            sum += m;
            most = most.max((f - b).abs());
        }
        s = sum;
        spread = most;
    }
}

/// Kernels that import the library of limiters only: what it imports comes with it.
#[stencils(helpers = limiters)]
mod through_limiters {
    #[stencil(dims = 2)]
    pub fn first_slope<T: Real>(u: In<T>, s: Out<T>) {
        let (m, _, _) = slope(u, 0);
        s = m + forward(u, 1);
    }
}

/// The same kernels with the helpers beside them.
#[stencils]
mod inline {
    #[stencil_fn]
    fn forward<T: Real>(u: In<T>, a: i64) -> T {
        u[unit(a)] - u
    }

    #[stencil_fn]
    fn backward<T: Real>(u: In<T>, a: i64) -> T {
        u - u[-unit(a)]
    }

    #[stencil_fn]
    fn minmod<T: Real>(a: T, b: T) -> T {
        if a * b <= 0.0 {
            0.0
        } else if a.abs() < b.abs() {
            a
        } else {
            b
        }
    }

    #[stencil_fn]
    fn slope<T: Real>(u: In<T>, a: i64) -> (T, T, T) {
        let (f, b) = (forward(u, a), backward(u, a));
        (minmod(f, b), f, b)
    }

    #[stencil(dims = [2, 3])]
    pub fn slopes<T: Real>(u: In<T>, s: Out<T>, spread: Out<T>) {
        let mut sum = 0.0;
        let mut most = 0.0;
        for a in 0..ndims() {
            let (m, f, b) = slope(u, a);
            sum += m;
            most = most.max((f - b).abs());
        }
        s = sum;
        spread = most;
    }

    #[stencil(dims = 2)]
    pub fn first_slope<T: Real>(u: In<T>, s: Out<T>) {
        let (m, _, _) = slope(u, 0);
        s = m + forward(u, 1);
    }
}

#[test]
fn imported_helpers_give_the_same_ir_as_helpers_beside_the_kernel() {
    assert_eq!(imported::slopes::d2::IR, inline::slopes::d2::IR);
    assert_eq!(imported::slopes::d3::IR, inline::slopes::d3::IR);
    assert_eq!(through_limiters::first_slope::IR, inline::first_slope::IR);
    // The source kept for tools names the imported helpers too.
    for helper in ["fn forward", "fn backward", "fn minmod", "fn slope"] {
        assert!(
            imported::slopes::SOURCE.contains(helper),
            "{helper} missing from the kept source"
        );
    }
}

/// A `slopes` kernel's launcher in f64.
type Slopes = fn(&Backend, &Field<f64>, &mut Field<f64>, &mut Field<f64>) -> Result<(), Error>;

#[test]
fn imported_helpers_run_as_helpers_beside_the_kernel() -> Result<(), Error> {
    let cpu = Backend::Cpu;
    let mut r = rng("helper libraries");
    for extent in [&[40, 30][..], &[12, 10, 9][..]] {
        let u = random_field::<f64>(&mut r, extent, 1, -1.0, 1.0);
        let run = |slopes: Slopes| {
            let mut s = Field::<f64>::zeros_on(&cpu, extent, 0)?;
            let mut spread = Field::<f64>::zeros_on(&cpu, extent, 0)?;
            slopes(&cpu, &u, &mut s, &mut spread)?;
            Ok::<_, Error>((values(&s), values(&spread)))
        };
        let (a, b) = (run(imported::slopes::launch)?, run(inline::slopes::launch)?);
        assert_eq!(a, b, "{extent:?}");
        assert!(a.0.iter().any(|&v| v != 0.0) && a.1.iter().any(|&v| v != 0.0));
    }
    Ok(())
}
