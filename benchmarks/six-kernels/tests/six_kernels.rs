//! Each of the six kernels against the same sums in Rust on the CPU, and (where a CUDA
//! device is present) the device against the CPU, in both precisions.

use six_kernels::kernels;
use stencil_runtime::prelude::*;

/// A smooth, positive, nowhere-constant value at a point.
fn value(p: [isize; 3]) -> f64 {
    let [i, j, k] = p.map(|x| x as f64);
    1.5 + (0.37 * i + 0.11 * j * j).sin() * (0.23 * j - 0.05 * k).cos() + 0.01 * k
}

/// Extents small enough for the sums in Rust: 2D, 3D.
const SMALL: ([usize; 2], [usize; 3]) = ([37, 29], [13, 11, 9]);

/// Extents with more points than a large GPU holds threads, so that launches use the
/// kernels' vector and several-point tile variants.
const LARGE: ([usize; 2], [usize; 3]) = ([601, 503], [71, 67, 73]);

/// The kernels' outputs on `backend`, at precision `T`, over the extents `(n2, n3)`, as f64
/// interiors (Sobel's largest value last).
fn run_all<T: Real>(backend: &Backend, (n2, n3): ([usize; 2], [usize; 3])) -> Vec<Vec<f64>> {
    let field = |n: &[usize], halo: usize, shift: f64| {
        Field::<T>::from_fn(n, halo, |p| T::from_f64(value(p) + shift))
            .to(backend)
            .expect("copy to the backend")
    };
    let out = |n: &[usize]| Field::<T>::zeros_on(backend, n, 0).expect("an output field");
    let read = |f: &Field<T>| -> Vec<f64> {
        f.to_host()
            .and_then(|h| h.interior())
            .expect("read back")
            .into_iter()
            .map(|v| v.as_f64())
            .collect()
    };
    let (u, k, prev) = (field(&n2, 2, 0.0), field(&n2, 1, 0.5), field(&n2, 0, -0.25));
    let u3 = field(&n3, 1, 0.0);
    let t = |x: f64| T::from_f64(x);
    let mut results = Vec::new();
    let mut o = out(&n2);
    kernels::heat_step::launch(backend, &u, &mut o, t(0.2)).expect("heat_step");
    results.push(read(&o));
    kernels::limited_advection::launch(backend, &u, &mut o, t(0.4)).expect("limited_advection");
    results.push(read(&o));
    let largest = kernels::sobel::launch(backend, &u, &mut o).expect("sobel");
    results.push(read(&o));
    kernels::harmonic_diffusion::launch(backend, &u, &k, &mut o, t(0.1))
        .expect("harmonic_diffusion");
    results.push(read(&o));
    let mut o3 = out(&n3);
    kernels::box27::launch(backend, &u3, &mut o3).expect("box27");
    results.push(read(&o3));
    kernels::leapfrog::launch(backend, &u, &prev, &mut o, t(0.3)).expect("leapfrog");
    results.push(read(&o));
    results.push(vec![largest.as_f64()]);
    results
}

/// The same sums in Rust, in f64.
fn reference() -> Vec<Vec<f64>> {
    let n2 = SMALL.0.map(|n| n as isize);
    let n3 = SMALL.1.map(|n| n as isize);
    let u = |i: isize, j: isize| value([i, j, 0]);
    let k = |i: isize, j: isize| value([i, j, 0]) + 0.5;
    let prev = |i: isize, j: isize| value([i, j, 0]) - 0.25;
    let over2 = |f: &dyn Fn(isize, isize) -> f64| -> Vec<f64> {
        (0..n2[1])
            .flat_map(|j| (0..n2[0]).map(move |i| (i, j)))
            .map(|(i, j)| f(i, j))
            .collect()
    };
    let lap =
        |i: isize, j: isize| u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4.0 * u(i, j);
    // Minmod as sign times magnitude: the smaller magnitude where the signs agree, else 0.
    let minmod = |a: f64, b: f64| 0.5 * (a.signum() + b.signum()) * a.abs().min(b.abs());
    let sobel = |i: isize, j: isize| {
        let gx = u(i + 1, j - 1) + 2.0 * u(i + 1, j) + u(i + 1, j + 1)
            - u(i - 1, j - 1)
            - 2.0 * u(i - 1, j)
            - u(i - 1, j + 1);
        let gy = u(i - 1, j + 1) + 2.0 * u(i, j + 1) + u(i + 1, j + 1)
            - u(i - 1, j - 1)
            - 2.0 * u(i, j - 1)
            - u(i + 1, j - 1);
        (gx * gx + gy * gy).sqrt()
    };
    let harmonic = |a: f64, b: f64| 2.0 * a * b / (a + b);
    let mut results = vec![
        over2(&|i, j| u(i, j) + 0.2 * lap(i, j)),
        over2(&|i, j| {
            let r = 0.4;
            let s = minmod(u(i, j) - u(i - 1, j), u(i + 1, j) - u(i, j));
            let sw = minmod(u(i - 1, j) - u(i - 2, j), u(i, j) - u(i - 1, j));
            let east = u(i, j) + 0.5 * (1.0 - r) * s;
            let west = u(i - 1, j) + 0.5 * (1.0 - r) * sw;
            u(i, j) - r * (east - west)
        }),
        over2(&sobel),
        over2(&|i, j| {
            let flux = harmonic(k(i, j), k(i + 1, j)) * (u(i + 1, j) - u(i, j))
                - harmonic(k(i, j), k(i - 1, j)) * (u(i, j) - u(i - 1, j))
                + harmonic(k(i, j), k(i, j + 1)) * (u(i, j + 1) - u(i, j))
                - harmonic(k(i, j), k(i, j - 1)) * (u(i, j) - u(i, j - 1));
            u(i, j) + 0.1 * flux
        }),
    ];
    let mut boxed = Vec::new();
    for z in 0..n3[2] {
        for y in 0..n3[1] {
            for x in 0..n3[0] {
                let mut s = 0.0;
                for dz in -1..=1 {
                    for dy in -1..=1 {
                        for dx in -1..=1 {
                            s += value([x + dx, y + dy, z + dz]);
                        }
                    }
                }
                boxed.push(s / 27.0);
            }
        }
    }
    results.push(boxed);
    results.push(over2(&|i, j| 2.0 * u(i, j) - prev(i, j) + 0.3 * lap(i, j)));
    let largest = results[2].iter().fold(f64::MIN, |a, &b| a.max(b));
    results.push(vec![largest]);
    results
}

const NAMES: [&str; 7] = [
    "heat_step",
    "limited_advection",
    "sobel",
    "harmonic_diffusion",
    "box27",
    "leapfrog",
    "sobel's largest value",
];

/// Asserts that `got` matches `want` within `tol`, relative to the largest magnitude.
fn assert_close(got: &[Vec<f64>], want: &[Vec<f64>], tol: f64, what: &str) {
    for ((g, w), name) in got.iter().zip(want).zip(NAMES) {
        assert_eq!(g.len(), w.len(), "{name}: {what}: point count");
        for (p, (a, b)) in g.iter().zip(w).enumerate() {
            assert!(
                (a - b).abs() <= tol * b.abs().max(1.0),
                "{name}: {what}: point {p}: {a} against {b}"
            );
        }
    }
}

#[test]
fn cpu_matches_the_sums_in_rust() {
    let want = reference();
    assert_close(
        &run_all::<f64>(&Backend::Cpu, SMALL),
        &want,
        1e-12,
        "CPU f64",
    );
    assert_close(
        &run_all::<f32>(&Backend::Cpu, SMALL),
        &want,
        2e-5,
        "CPU f32",
    );
}

#[test]
fn gpu_matches_the_cpu() {
    let gpu = match Backend::cuda(0) {
        Ok(b) => b,
        Err(why) => {
            println!("SKIPPED: this test needs a CUDA device: {why}");
            return;
        }
    };
    for size in [SMALL, LARGE] {
        let cpu64 = run_all::<f64>(&Backend::Cpu, size);
        let gpu64 = run_all::<f64>(&gpu, size);
        assert_close(&gpu64, &cpu64, 1e-12, "GPU f64 against CPU f64");
        let cpu32 = run_all::<f32>(&Backend::Cpu, size);
        let gpu32 = run_all::<f32>(&gpu, size);
        assert_close(&gpu32, &cpu32, 1e-5, "GPU f32 against CPU f32");
    }
}
