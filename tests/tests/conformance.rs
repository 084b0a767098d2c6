//! Every kernel of the suite, in f32 and f64, on random inputs: the generated Rust (CPU
//! path), the host-JIT LLVM lowering (the code that becomes PTX) and the reference
//! interpreter agree (f64 to 1e-12, f32 to 1e-5 relative).

use stencil_runtime::{Backend, Field, Real};
use stencil_tests::for_precisions;
use stencil_tests::harness::{
    assert_close, kernel_ir, kernel_ir_of_dims, poisoned, random_field, rng, run, tolerance,
    values, Path,
};
use stencil_tests::kernels::suite;

/// Runs the CPU path through `launch`, then both other paths, and compares outputs and
/// reductions.
fn check<T: Real>(
    name: &str,
    source: &str,
    inputs: &[&Field<T>],
    out_extent: &[usize],
    n_out: usize,
    scalars: &[f64],
    cpu: impl Fn(&mut [Field<T>]) -> Vec<f64>,
) {
    check_ir(
        &kernel_ir(source, name),
        inputs,
        out_extent,
        n_out,
        scalars,
        cpu,
    );
}

/// [`check`] of the checked kernel `k`.
fn check_ir<T: Real>(
    k: &kernels_gen::ir::Kernel,
    inputs: &[&Field<T>],
    out_extent: &[usize],
    n_out: usize,
    scalars: &[f64],
    cpu: impl Fn(&mut [Field<T>]) -> Vec<f64>,
) {
    let name = &k.name;
    let tol = tolerance::<T>();
    let mut cpu_out: Vec<Field<T>> = (0..n_out).map(|_| poisoned(out_extent)).collect();
    let cpu_red = cpu(&mut cpu_out);
    for path in [Path::Interpreter, Path::HostJit] {
        let mut out: Vec<Field<T>> = (0..n_out).map(|_| poisoned(out_extent)).collect();
        let red = run(path, k, inputs, &mut out, scalars);
        let what = format!("{name} {:?} {path:?}", T::PRECISION);
        for (o, (a, b)) in out.iter().zip(&cpu_out).enumerate() {
            assert_close(&format!("{what} output {o}"), &values(a), &values(b), tol);
        }
        assert_close(&format!("{what} reductions"), &red, &cpu_red, tol);
    }
}

#[test]
fn lap5() {
    for_precisions!(T => {
        let mut r = rng("lap5");
        let n = [37, 23];
        let u = random_field::<T>(&mut r, &n, 1, -1.0, 1.0);
        check("lap5", suite::lap5::SOURCE, &[&u], &n, 1, &[3.0], |o| {
            suite::lap5::launch(&Backend::Cpu, &u, &mut o[0], 3.0).unwrap();
            vec![]
        });
    });
}

#[test]
fn lap9() {
    for_precisions!(T => {
        let mut r = rng("lap9");
        let n = [29, 31];
        let u = random_field::<T>(&mut r, &n, 1, -1.0, 1.0);
        check("lap9", suite::lap9::SOURCE, &[&u], &n, 1, &[2.0], |o| {
            suite::lap9::launch(&Backend::Cpu, &u, &mut o[0], 2.0).unwrap();
            vec![]
        });
    });
}

#[test]
fn lap7_3d() {
    for_precisions!(T => {
        let mut r = rng("lap7");
        let n = [13, 9, 11];
        let u = random_field::<T>(&mut r, &n, 1, -1.0, 1.0);
        check("lap7", suite::lap7::SOURCE, &[&u], &n, 1, &[1.5], |o| {
            suite::lap7::launch(&Backend::Cpu, &u, &mut o[0], 1.5).unwrap();
            vec![]
        });
    });
}

#[test]
fn jacobi() {
    for_precisions!(T => {
        let mut r = rng("jacobi");
        let n = [40, 17];
        let u = random_field::<T>(&mut r, &n, 1, -1.0, 1.0);
        let f = random_field::<T>(&mut r, &n, 0, -1.0, 1.0);
        check("jacobi", suite::jacobi::SOURCE, &[&u, &f], &n, 1, &[0.01, 2.0 / 3.0], |o| {
            let omega = T::from_f64(2.0 / 3.0);
            suite::jacobi::launch(&Backend::Cpu, &u, &f, &mut o[0], T::from_f64(0.01), omega).unwrap();
            vec![]
        });
    });
}

#[test]
fn upwind() {
    for_precisions!(T => {
        let mut r = rng("upwind");
        let n = [33, 21];
        let q = random_field::<T>(&mut r, &n, 1, 0.0, 1.0);
        let vx = random_field::<T>(&mut r, &n, 0, -1.0, 1.0);
        let vy = random_field::<T>(&mut r, &n, 0, -1.0, 1.0);
        check("upwind", suite::upwind::SOURCE, &[&q, &vx, &vy], &n, 1, &[0.4], |o| {
            suite::upwind::launch(&Backend::Cpu, &q, &vx, &vy, &mut o[0], T::from_f64(0.4)).unwrap();
            vec![]
        });
    });
}

#[test]
fn minmod_reconstruction() {
    for_precisions!(T => {
        let mut r = rng("reconstruct");
        let n = [301];
        let q = random_field::<T>(&mut r, &n, 1, -1.0, 1.0);
        check("reconstruct", suite::reconstruct::SOURCE, &[&q], &n, 2, &[1.3], |o| {
            let (a, b) = o.split_at_mut(1);
            suite::reconstruct::launch(&Backend::Cpu, &q, &mut a[0], &mut b[0], T::from_f64(1.3)).unwrap();
            vec![]
        });
    });
}

#[test]
fn cfl_max_reduction() {
    for_precisions!(T => {
        let mut r = rng("cfl");
        let n = [45, 38];
        // Some cells dry (h below the threshold) so that the `if` matters.
        let h = random_field::<T>(&mut r, &n, 0, -0.2, 2.0);
        let hu = random_field::<T>(&mut r, &n, 0, -1.0, 1.0);
        let hv = random_field::<T>(&mut r, &n, 0, -1.0, 1.0);
        check("cfl", suite::cfl::SOURCE, &[&h, &hu, &hv], &n, 0, &[9.81, 1e-3], |_| {
            let s = suite::cfl::launch(&Backend::Cpu, &h, &hu, &hv, T::from_f64(9.81), T::from_f64(1e-3)).unwrap();
            vec![s.as_f64()]
        });
    });
}

#[test]
fn max_abs_reduction() {
    for_precisions!(T => {
        let mut r = rng("maxabs");
        let n = [77, 41];
        let u = random_field::<T>(&mut r, &n, 0, -3.0, 2.0);
        check("maxabs", suite::maxabs::SOURCE, &[&u], &n, 0, &[], |_| {
            vec![suite::maxabs::launch(&Backend::Cpu, &u).unwrap().as_f64()]
        });
    });
}

#[test]
fn mass_sum_and_min_reduction() {
    for_precisions!(T => {
        let mut r = rng("mass");
        let n = [64, 50];
        let h = random_field::<T>(&mut r, &n, 0, 0.0, 2.0);
        check("mass", suite::mass::SOURCE, &[&h], &n, 0, &[0.25], |_| {
            let (total, lowest) = suite::mass::launch(&Backend::Cpu, &h, T::from_f64(0.25)).unwrap();
            vec![total.as_f64(), lowest.as_f64()]
        });
    });
}

#[test]
fn intrinsics() {
    for_precisions!(T => {
        let mut r = rng("intrinsics");
        let n = [997];
        let a = random_field::<T>(&mut r, &n, 0, 0.5, 2.0);
        let b = random_field::<T>(&mut r, &n, 0, 0.5, 2.0);
        check("intrinsics", suite::intrinsics::SOURCE, &[&a, &b], &n, 1, &[], |o| {
            suite::intrinsics::launch(&Backend::Cpu, &a, &b, &mut o[0]).unwrap();
            vec![]
        });
    });
}

#[test]
fn hyperbolic() {
    for_precisions!(T => {
        let mut r = rng("hyperbolic suite");
        let n = [997];
        let a = random_field::<T>(&mut r, &n, 0, -3.0, 3.0);
        let b = random_field::<T>(&mut r, &n, 0, -3.0, 3.0);
        check("hyperbolic", suite::hyperbolic::SOURCE, &[&a, &b], &n, 1, &[], |o| {
            suite::hyperbolic::launch(&Backend::Cpu, &a, &b, &mut o[0]).unwrap();
            vec![]
        });
    });
}

#[test]
fn trigonometric() {
    for_precisions!(T => {
        let mut r = rng("trigonometric suite");
        let n = [997];
        let a = random_field::<T>(&mut r, &n, 0, 0.5, 2.0);
        let b = random_field::<T>(&mut r, &n, 0, 0.5, 2.0);
        check("trigonometric", suite::trigonometric::SOURCE, &[&a, &b], &n, 1, &[], |o| {
            suite::trigonometric::launch(&Backend::Cpu, &a, &b, &mut o[0]).unwrap();
            vec![]
        });
    });
}

#[test]
fn search() {
    for_precisions!(T => {
        let mut r = rng("search suite");
        let n = [997];
        let a = random_field::<T>(&mut r, &n, 4, 0.5, 2.0);
        check("search", suite::search::SOURCE, &[&a], &n, 1, &[], |o| {
            suite::search::launch(&Backend::Cpu, &a, &mut o[0]).unwrap();
            vec![]
        });
    });
}

/// Tuples through a helper and destructuring `let`s, against the same in Rust.
#[test]
fn spread() {
    for_precisions!(T => {
        let mut r = rng("spread suite");
        let n = [997];
        let a = random_field::<T>(&mut r, &n, 1, 0.5, 2.0);
        check("spread", suite::spread::SOURCE, &[&a], &n, 1, &[], |o| {
            suite::spread::launch(&Backend::Cpu, &a, &mut o[0]).unwrap();
            vec![]
        });
        let mut out = Field::<T>::zeros(&n, 0).unwrap();
        suite::spread::launch(&Backend::Cpu, &a, &mut out).unwrap();
        for i in 0..n[0] as isize {
            let at = |k: isize| a.get([i + k, 0, 0]).unwrap().as_f64();
            let (lo, hi) = (at(-1).min(at(1)), at(-1).max(at(1)));
            let want = hi - lo + 0.25 * (lo * 2.0 + hi);
            let got = out.get([i, 0, 0]).unwrap().as_f64();
            assert!((got - want).abs() <= 1e-5 * want.abs(), "{i}: {got} against {want}");
        }
    });
}

/// Offsets passed to a helper as tuples (and negated there), against the same in Rust.
#[test]
fn differences() {
    for_precisions!(T => {
        let mut r = rng("differences suite");
        let n = [61, 37];
        let u = random_field::<T>(&mut r, &n, 2, 0.5, 2.0);
        check("differences", suite::differences::SOURCE, &[&u], &n, 1, &[], |o| {
            suite::differences::launch(&Backend::Cpu, &u, &mut o[0]).unwrap();
            vec![]
        });
        let mut out = Field::<T>::zeros(&n, 0).unwrap();
        suite::differences::launch(&Backend::Cpu, &u, &mut out).unwrap();
        for j in 0..n[1] as isize {
            for i in 0..n[0] as isize {
                let at = |di: isize, dj: isize| u.get([i + di, j + dj, 0]).unwrap().as_f64();
                let want = at(1, 0) - at(-1, 0) + 0.5 * (at(0, 2) - at(0, -2));
                let got = out.get([i, j, 0]).unwrap().as_f64();
                assert!((got - want).abs() <= 1e-5, "({i}, {j}): {got} against {want}");
            }
        }
    });
}

/// One Laplacian helper written per axis (`ndims`, `unit`) for a 2D and a 3D kernel,
/// against the 5- and 7-point sums in Rust.
#[test]
fn generic_laplacian() {
    for_precisions!(T => {
        let mut r = rng("generic laplacian");
        for n in [vec![23usize, 17], vec![13, 11, 9]] {
            let u = random_field::<T>(&mut r, &n, 1, 0.5, 2.0);
            let (name, source) = if n.len() == 2 {
                ("generic_lap_2d", suite::generic_lap_2d::SOURCE)
            } else {
                ("generic_lap_3d", suite::generic_lap_3d::SOURCE)
            };
            let launch = |o: &mut Field<T>| {
                if n.len() == 2 {
                    suite::generic_lap_2d::launch(&Backend::Cpu, &u, o).unwrap()
                } else {
                    suite::generic_lap_3d::launch(&Backend::Cpu, &u, o).unwrap()
                }
            };
            check(name, source, &[&u], &n, 1, &[], |o| {
                launch(&mut o[0]);
                vec![]
            });
            let mut out = Field::<T>::zeros(&n, 0).unwrap();
            launch(&mut out);
            let dims = n.len();
            let extent = [n[0], n[1], n.get(2).copied().unwrap_or(1)];
            for k in 0..extent[2] as isize {
                for j in 0..extent[1] as isize {
                    for i in 0..extent[0] as isize {
                        let p = [i, j, k];
                        let at = |q: [isize; 3]| u.get(q).unwrap().as_f64();
                        let mut want = 0.0;
                        for a in 0..dims {
                            let (mut hi, mut lo) = (p, p);
                            hi[a] += 1;
                            lo[a] -= 1;
                            want += at(hi) + at(lo) - 2.0 * at(p);
                        }
                        let got = out.get(p).unwrap().as_f64();
                        assert!((got - want).abs() <= 1e-5, "{p:?}: {got} against {want}");
                    }
                }
            }
        }
    });
}

/// One anisotropic diffusion kernel defined for 2D and 3D (`dims = [2, 3]`, one
/// conductivity per axis as `Axes<T>`): the launcher picks the kernel of the field's
/// dimension; both agree with the other paths and with the sum written in Rust, and a
/// wrong number of conductivities or a 1D field is a typed error.
#[test]
fn one_definition_for_two_and_three_dimensions() {
    for_precisions!(T => {
        let mut r = rng("diffuse");
        for n in [vec![23usize, 17], vec![13, 11, 9]] {
            let dims = n.len();
            let u = random_field::<T>(&mut r, &n, 1, 0.5, 2.0);
            let k: Vec<f64> = [0.5, 2.0, 1.25][..dims].to_vec();
            let kt: Vec<T> = k.iter().map(|&x| T::from_f64(x)).collect();
            let dt = 0.125;
            let mut scalars = k.clone();
            scalars.push(dt);
            let source = suite::diffuse::SOURCE;
            let k_ir = kernel_ir_of_dims(source, "diffuse", dims);
            assert_eq!(k_ir.dims as usize, dims);
            check_ir(&k_ir, &[&u], &n, 1, &scalars, |o| {
                suite::diffuse::launch(&Backend::Cpu, &u, &mut o[0], &kt, T::from_f64(dt)).unwrap();
                vec![]
            });
            let mut out = Field::<T>::zeros(&n, 0).unwrap();
            suite::diffuse::launch(&Backend::Cpu, &u, &mut out, &kt, T::from_f64(dt)).unwrap();
            let extent = [n[0], n[1], n.get(2).copied().unwrap_or(1)];
            for kk in 0..extent[2] as isize {
                for j in 0..extent[1] as isize {
                    for i in 0..extent[0] as isize {
                        let p = [i, j, kk];
                        let at = |q: [isize; 3]| u.get(q).unwrap().as_f64();
                        let mut s = 0.0;
                        for a in 0..dims {
                            let (mut hi, mut lo) = (p, p);
                            hi[a] += 1;
                            lo[a] -= 1;
                            s += k[a] * (at(hi) - 2.0 * at(p) + at(lo));
                        }
                        let want = at(p) + dt * s;
                        let got = out.get(p).unwrap().as_f64();
                        assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "{p:?}: {got} against {want}");
                    }
                }
            }
            // Two conductivities for a 3D field, or three for a 2D one: a typed error.
            let wrong: Vec<T> = vec![T::from_f64(1.0); 5 - dims];
            let e = suite::diffuse::launch(&Backend::Cpu, &u, &mut out, &wrong, T::from_f64(dt)).unwrap_err();
            assert!(e.to_string().contains("one value per axis"), "{e}");
        }
        let line = Field::<T>::zeros(&[9], 1).unwrap();
        let mut out = Field::<T>::zeros(&[9], 0).unwrap();
        let e = suite::diffuse::launch(&Backend::Cpu, &line, &mut out, &[T::from_f64(1.0)], T::from_f64(0.1)).unwrap_err();
        assert!(e.to_string().contains("defined for [2, 3] dimensions"), "{e}");
    });
}

/// Cell-centred grid transfers (`Fine` fields of `2n` points, `Coarse` of `n / 2`): the
/// paths agree, restriction averages the four children, prolongation keeps a linear
/// function linear away from the edges.
#[test]
fn cell_centred_transfers() {
    for_precisions!(T => {
        let mut r = rng("cell transfers");
        let (fine_n, coarse_n) = ([36usize, 28], [18usize, 14]);
        let fine = random_field::<T>(&mut r, &fine_n, 1, -1.0, 1.0);
        let restrict = |o: &mut Field<T>| suite::restrict_cells::launch(&Backend::Cpu, &fine, o).unwrap();
        check("restrict_cells", suite::restrict_cells::SOURCE, &[&fine], &coarse_n, 1, &[], |o| {
            restrict(&mut o[0]);
            vec![]
        });
        let mut coarse = Field::<T>::zeros(&coarse_n, 1).unwrap();
        restrict(&mut coarse);
        for (i, j) in [(0isize, 0isize), (5, 7), (17, 13)] {
            let f = |a: isize, b: isize| fine.get([2 * i + a, 2 * j + b, 0]).unwrap().as_f64();
            let want = 0.25 * (f(0, 0) + f(1, 0) + f(0, 1) + f(1, 1));
            let got = coarse.get([i, j, 0]).unwrap().as_f64();
            assert!((got - want).abs() <= 1e-6, "({i}, {j}): {got} against {want}");
        }
        let linear = Field::<T>::from_fn(&coarse_n, 1, |[i, j, _]| {
            T::from_f64(0.5 + 2.0 * i as f64 - 0.75 * j as f64)
        });
        let prolong = |o: &mut Field<T>| suite::prolong_cells::launch(&Backend::Cpu, &linear, o).unwrap();
        check("prolong_cells", suite::prolong_cells::SOURCE, &[&linear], &fine_n, 1, &[], |o| {
            prolong(&mut o[0]);
            vec![]
        });
        let mut out = Field::<T>::zeros(&fine_n, 0).unwrap();
        prolong(&mut out);
        for (i, j) in [(2isize, 2isize), (9, 14), (33, 25)] {
            // Child centres sit a quarter of a coarse cell from the parent's.
            let x = (i as f64 - 0.5) / 2.0;
            let y = (j as f64 - 0.5) / 2.0;
            let want = 0.5 + 2.0 * x - 0.75 * y;
            let got = out.get([i, j, 0]).unwrap().as_f64();
            assert!((got - want).abs() <= 1e-4, "({i}, {j}): {got} against {want}");
        }
    });
}

#[test]
fn binary_logs() {
    for_precisions!(T => {
        let mut r = rng("binary_logs");
        let n = [997];
        let a = random_field::<T>(&mut r, &n, 0, 0.5, 2.0);
        let b = random_field::<T>(&mut r, &n, 0, 0.5, 2.0);
        check("binary_logs", suite::binary_logs::SOURCE, &[&a, &b], &n, 1, &[], |o| {
            suite::binary_logs::launch(&Backend::Cpu, &a, &b, &mut o[0]).unwrap();
            vec![]
        });
    });
}

#[test]
fn guarded_arms() {
    for_precisions!(T => {
        let mut r = rng("guarded");
        let n = [29, 17];
        let u = random_field::<T>(&mut r, &n, 1, 0.5, 2.0);
        let v = random_field::<T>(&mut r, &n, 1, 0.5, 2.0);
        check("guarded", suite::guarded::SOURCE, &[&u, &v], &n, 3, &[0.7], |o| {
            let [a, b, c] = o else { unreachable!() };
            let m = suite::guarded::launch(&Backend::Cpu, &u, &v, a, b, c, T::from_f64(0.7)).unwrap();
            vec![m.as_f64()]
        });
    });
}

#[test]
fn indices_and_integers() {
    for_precisions!(T => {
        let mut r = rng("checker");
        let n = [19, 12];
        let u = random_field::<T>(&mut r, &n, 0, -1.0, 1.0);
        check("checker", suite::checker::SOURCE, &[&u], &n, 1, &[-0.5, 0.125], |o| {
            suite::checker::launch(&Backend::Cpu, &u, &mut o[0], T::from_f64(-0.5), T::from_f64(0.125)).unwrap();
            vec![]
        });
    });
}

/// Edge tests along axis 0 on rows of every width from 1 to 9 and on a wide one: the
/// CPU's middle points (those at least 2 from either edge) run with the tests decided.
#[test]
fn edge_tests_on_rows_of_every_width() {
    for_precisions!(T => {
        let mut r = rng("edge_tests");
        for width in (1..=9).chain([37]) {
            let n = [width, 3];
            let u = random_field::<T>(&mut r, &n, 0, 0.5, 1.5);
            check("edge_tests", suite::edge_tests::SOURCE, &[&u], &n, 1, &[], |o| {
                let total = suite::edge_tests::launch(&Backend::Cpu, &u, &mut o[0]).unwrap();
                vec![total.as_f64()]
            });
        }
    });
}

/// A kernel weighing by the parity of the index along x and y, reading a `Coarse` field:
/// its middle points run in pairs (even, then odd) on the CPU, with the lone first and last
/// points of the pairs' stretch, and rows of even and odd `j` apart; rows of every width
/// from 1 to 12, and 37, grids 1 to 37 rows high, agree with the other paths.
#[test]
fn parity_pairs_on_rows_of_every_width() {
    for_precisions!(T => {
        let mut r = rng("parity_pairs");
        for (width, height) in (1usize..=12).map(|w| (w, 5)).chain([(37, 1), (37, 2), (37, 8), (9, 37)]) {
            let n = [width, height];
            let coarse_n = [width.div_ceil(2), height.div_ceil(2)];
            let coarse = random_field::<T>(&mut r, &coarse_n, 1, -1.0, 1.0);
            check("prolong_nodes", suite::prolong_nodes::SOURCE, &[&coarse], &n, 1, &[], |o| {
                suite::prolong_nodes::launch(&Backend::Cpu, &coarse, &mut o[0]).unwrap();
                vec![]
            });
        }
    });
}

/// Two selects on one condition where one's arm is the other select: the compiler may not
/// join both in one branch (the second's phi would need the first's before it exists).
/// The host JIT builds and verifies the module and agrees with the interpreter.
#[test]
fn a_select_on_a_select_of_the_same_condition() {
    let source = "#[stencil(dims = 2)]
        fn chained<T: Real>(u: In<T>, a: Out<T>, b: Out<T>) {
            let e = index(0) == 0;
            let p = if e { (u + 1.0).sqrt() / (u + 2.0) } else { u };
            let q = if e { (u + 3.0).sqrt() / (u + 4.0) } else { p };
            a = p;
            b = q;
        }";
    let k = kernel_ir(source, "chained");
    let n = [9, 7];
    let mut r = rng("chained");
    let u = random_field::<f64>(&mut r, &n, 0, 0.5, 2.0);
    let mut outs: Vec<Vec<Vec<f64>>> = Vec::new();
    for path in [Path::Interpreter, Path::HostJit] {
        let mut out: Vec<Field<f64>> = (0..2).map(|_| poisoned(&n)).collect();
        run(path, &k, &[&u], &mut out, &[]);
        outs.push(out.iter().map(values).collect());
    }
    for (o, (jit, interp)) in outs[1].iter().zip(&outs[0]).enumerate() {
        assert_close(&format!("output {o}"), jit, interp, 1e-12);
    }
}

/// Conway's Game of Life on a field of bytes, and a field of booleans and one of `i32`:
/// integer and boolean fields are read as `i64` and `bool` values, written back wrapped;
/// the CPU path against the rules written in Rust.
#[path = "conformance/integer_fields.rs"]
mod integer_fields;

/// Edge tests along axes 1 and 2, which the CPU decides for interior rows.
#[path = "conformance/row_edges.rs"]
mod row_edges;
