//! The generated CPU loops vectorise: this test reads its own machine code (with `objdump`)
//! (it lives in this crate because the workspace builds it as release builds are, optimised
//! and without debug checks, in test builds too) and checks that the row loops of a 5-point
//! Jacobi sweep, a 3D 7-point Laplacian and a CFL-style max reduction, defined here (a
//! kernel's CPU code is compiled in the crate that defines it, so the test's kernels are
//! compiled as this crate is), contain packed SIMD arithmetic in f32 (`..ps`) and in f64
//! (`..pd`), beside the results agreeing with a plain loop. Skips with a printed reason
//! where `objdump` is missing or the target is not x86-64.

use std::collections::HashMap;
use std::process::Command;
use stencil_runtime::prelude::*;

#[stencils]
mod vector_check {
    /// One weighted-Jacobi sweep for `-lap(u) = f`, `h2 = h^2`.
    #[stencil(dims = 2)]
    pub fn vec_jacobi<T: Real>(u: In<T>, f: In<T>, out: Out<T>, h2: T, omega: T) {
        let r = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] + h2 * f) * 0.25;
        out = u + omega * (r - u);
    }

    /// The 3D 7-point Laplacian, written per axis.
    #[stencil(dims = 3)]
    pub fn vec_lap7<T: Real>(u: In<T>, out: Out<T>, inv_h2: T) {
        let mut s = -6.0 * u;
        for a in 0..ndims() {
            s += u[-unit(a)] + u[unit(a)];
        }
        out = s * inv_h2;
    }

    /// The largest wave speed `|u| + sqrt(g h)` (a CFL maximum).
    #[stencil(dims = 2)]
    pub fn vec_speed<T: Real>(h: In<T>, u: In<T>, fastest: Max<T>, g: T) {
        fastest.reduce(u.abs() + (g * h.max(0.0)).sqrt());
    }
}

/// The value of a host field at `p`.
fn value<T: Real>(f: &Field<T>, p: [isize; 3]) -> T {
    f.get(p).expect("a point of the field")
}

/// Runs every kernel once in `T` on the CPU, so that its `cpu::<T>` is in the binary, and
/// checks the results against plain loops.
fn run<T: Real>() {
    let b = Backend::Cpu;
    let n = 64;
    let val = |p: [isize; 3]| T::from_f64(((p[0] * 7 + p[1] * 3 + p[2] * 5) % 13) as f64 * 0.25);
    let u = Field::<T>::from_fn(&[n, n], 1, val);
    let f = Field::<T>::from_fn(&[n, n], 0, val);
    let mut out = Field::<T>::zeros_on(&b, &[n, n], 0).unwrap();
    let (h2, omega) = (T::from_f64(0.5), T::from_f64(0.8));
    vector_check::vec_jacobi::launch(&b, &u, &f, &mut out, h2, omega).unwrap();
    let quarter = T::from_f64(0.25);
    for j in 0..n as isize {
        for i in 0..n as isize {
            let at = |di: isize, dj: isize| value(&u, [i + di, j + dj, 0]);
            let r =
                (at(-1, 0) + at(1, 0) + at(0, -1) + at(0, 1) + h2 * value(&f, [i, j, 0])) * quarter;
            let want = at(0, 0) + omega * (r - at(0, 0));
            assert_eq!(value(&out, [i, j, 0]), want, "jacobi at ({i}, {j})");
        }
    }
    let m = 16;
    let u3 = Field::<T>::from_fn(&[m, m, m], 1, val);
    let mut out3 = Field::<T>::zeros_on(&b, &[m, m, m], 0).unwrap();
    vector_check::vec_lap7::launch(&b, &u3, &mut out3, T::one()).unwrap();
    assert!(out3.interior().unwrap().iter().all(|x| x.is_finite()));
    let h = Field::<T>::from_fn(&[n, n], 0, val);
    let fastest = vector_check::vec_speed::launch(&b, &h, &f, T::from_f64(9.81)).unwrap();
    let want = (0..n as isize)
        .flat_map(|j| (0..n as isize).map(move |i| [i, j, 0]))
        .map(|p| {
            let depth = Real::max(value(&h, p), T::zero());
            Real::abs(value(&f, p)) + Real::sqrt(T::from_f64(9.81) * depth)
        })
        .fold(T::from_f64(f64::NEG_INFINITY), Real::max);
    assert_eq!(fastest, want);
}

/// The functions of a disassembly (`objdump -d -C`), by address: name and body.
fn functions(asm: &str) -> HashMap<&str, (&str, &str)> {
    asm.split("\n\n")
        .filter_map(|f| {
            let head = f.lines().next()?;
            let (addr, rest) = head.split_once(" <")?;
            let name = rest.strip_suffix(">:")?;
            Some((addr.trim_start_matches('0'), (name, f)))
        })
        .collect()
}

/// The bodies of the functions whose name contains `kernel` and, three calls deep, of the
/// runtime's row drivers (`stencil_runtime::cpu::...`) and iterator folds they call
/// directly: instances of generic functions for this kernel's row closure, which the row
/// loops are inlined into.
fn kernel_code<'a>(funcs: &HashMap<&'a str, (&'a str, &'a str)>, kernel: &str) -> Vec<&'a str> {
    let mut found: Vec<&str> = funcs
        .values()
        .filter(|(name, _)| name.contains(kernel))
        .map(|&(_, body)| body)
        .collect();
    let mut from = 0;
    for _ in 0..3 {
        let callees: Vec<&str> = found[from..]
            .iter()
            .flat_map(|body| body.lines())
            .filter_map(|l| {
                let (_, target) = l.split_once("call ")?;
                let addr = target.split_whitespace().next()?;
                let &(name, body) = funcs.get(addr.trim_start_matches('0'))?;
                let driver = ["stencil_runtime::cpu::", "<core::iter::"]
                    .iter()
                    .any(|p| name.starts_with(p));
                driver.then_some(body)
            })
            .filter(|body| !found.contains(body))
            .collect();
        from = found.len();
        found.extend(callees);
    }
    found
}

/// Whether some function of `bodies` has a packed arithmetic instruction of suffix `s`.
fn packed(bodies: &[&str], suffix: &str) -> bool {
    let ops = ["add", "sub", "mul", "max", "sqrt"];
    bodies.iter().any(|f| {
        f.lines().any(|l| {
            l.split_whitespace().any(|w| {
                let w = w.strip_prefix('v').unwrap_or(w);
                ops.iter().any(|op| w == format!("{op}{suffix}"))
            })
        })
    })
}

#[test]
fn generated_cpu_loops_use_packed_simd_in_f32_and_f64() {
    run::<f32>();
    run::<f64>();
    if !cfg!(target_arch = "x86_64") {
        println!("SKIPPED: the packed-instruction check reads x86-64 machine code");
        return;
    }
    let exe = std::env::current_exe().expect("the test's own path");
    let out = match Command::new("objdump")
        .args(["-d", "-C", "--no-show-raw-insn"])
        .arg(&exe)
        .output()
    {
        Ok(o) if o.status.success() => o,
        _ => {
            println!("SKIPPED: objdump (binutils) is not available to read the machine code");
            return;
        }
    };
    let asm = String::from_utf8_lossy(&out.stdout);
    let funcs = functions(&asm);
    if !funcs
        .values()
        .any(|(name, _)| name.starts_with("cpu_vector::"))
    {
        println!("SKIPPED: the test binary has no symbols (stripped) to find the kernels by");
        return;
    }
    for kernel in ["vec_jacobi", "vec_lap7", "vec_speed"] {
        let bodies = kernel_code(&funcs, kernel);
        assert!(!bodies.is_empty(), "no CPU code of `{kernel}` found");
        assert!(
            packed(&bodies, "ps"),
            "`{kernel}` in f32 has no packed (..ps) arithmetic"
        );
        assert!(
            packed(&bodies, "pd"),
            "`{kernel}` in f64 has no packed (..pd) arithmetic"
        );
    }
}
