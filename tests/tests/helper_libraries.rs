//! Helper libraries (`#[stencil_helpers]`) shared by `#[stencils]` modules: a kernel that
//! imports its helpers (from a library that itself imports another) compiles to the IR of
//! the source the macro keeps, with the helpers beside the kernel, and computes what the
//! helpers say (checked against the same sums in Rust).

use stencil_runtime::prelude::*;
use stencil_tests::harness::{kernel_ir_of_dims, poisoned, random_field, rng, run, values, Path};

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

#[test]
fn imported_helpers_give_the_same_ir_as_helpers_beside_the_kernel() {
    // The kept source has the imported helpers beside the kernels, as one module.
    for helper in ["fn forward", "fn backward", "fn minmod", "fn slope"] {
        assert!(
            imported::slopes::SOURCE.contains(helper),
            "{helper} missing from the kept source"
        );
    }
    let beside = |source, name, dims| kernel_ir_of_dims(source, name, dims).to_string();
    assert_eq!(
        imported::slopes::d2::IR,
        beside(imported::slopes::SOURCE, "slopes", 2)
    );
    assert_eq!(
        imported::slopes::d3::IR,
        beside(imported::slopes::SOURCE, "slopes", 3)
    );
    let first = through_limiters::first_slope::SOURCE;
    assert_eq!(
        through_limiters::first_slope::IR,
        beside(first, "first_slope", 2)
    );
}

/// `slopes` computed in Rust: at each point (in the order of `Field::interior`) the sum
/// over axes of the minmod of the one-sided differences, and their largest spread.
fn slopes_in_rust(u: &Field<f64>, extent: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let at = |p: [isize; 3]| u.get(p).expect("inside the halo");
    let minmod = |a: f64, b: f64| {
        if a * b <= 0.0 {
            0.0
        } else if a.abs() < b.abs() {
            a
        } else {
            b
        }
    };
    let size = |a: usize| extent.get(a).copied().unwrap_or(1) as isize;
    let (mut sums, mut spreads) = (Vec::new(), Vec::new());
    for k in 0..size(2) {
        for j in 0..size(1) {
            for i in 0..size(0) {
                let p = [i, j, k];
                let (mut sum, mut most) = (0.0, 0.0f64);
                for a in 0..extent.len() {
                    let (mut up, mut down) = (p, p);
                    up[a] += 1;
                    down[a] -= 1;
                    let (f, b) = (at(up) - at(p), at(p) - at(down));
                    sum += minmod(f, b);
                    most = most.max((f - b).abs());
                }
                sums.push(sum);
                spreads.push(most);
            }
        }
    }
    (sums, spreads)
}

#[test]
fn imported_helpers_compute_what_they_say() -> Result<(), Error> {
    let cpu = Backend::Cpu;
    let mut r = rng("helper libraries");
    for extent in [&[40, 30][..], &[12, 10, 9][..]] {
        let u = random_field::<f64>(&mut r, extent, 1, -1.0, 1.0);
        let mut got: Vec<Field<f64>> = (0..2).map(|_| poisoned(extent)).collect();
        let [s, spread] = &mut got[..] else {
            unreachable!()
        };
        imported::slopes::launch(&cpu, &u, s, spread)?;
        let (sums, spreads) = slopes_in_rust(&u, extent);
        assert_eq!(values(&got[0]), sums, "{extent:?}: slopes");
        assert_eq!(values(&got[1]), spreads, "{extent:?}: spreads");
        assert!(sums.iter().any(|&v| v != 0.0), "{extent:?}: all zero");
        // The interpreter, on the source the macro keeps, agrees.
        let k = kernel_ir_of_dims(imported::slopes::SOURCE, "slopes", extent.len());
        let mut want: Vec<Field<f64>> = (0..2).map(|_| poisoned(extent)).collect();
        run(Path::Interpreter, &k, &[&u], &mut want, &[]);
        assert_eq!(values(&want[0]), sums, "{extent:?}: interpreter");
    }
    Ok(())
}
