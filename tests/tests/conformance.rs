//! Every kernel of the suite, in f32 and f64, on random inputs: the generated Rust (CPU
//! path), the host-JIT LLVM lowering (the code that becomes PTX) and the reference
//! interpreter agree (f64 to 1e-12, f32 to 1e-5 relative).

use stencil_runtime::{Backend, Field, Real};
use stencil_tests::dispatch;
use stencil_tests::for_precisions;
use stencil_tests::harness::{
    assert_close, assert_same_bits, bits, kernel_ir, kernel_ir_of_dims, poisoned, random_field,
    rng, run, tolerance, values, Path,
};
use stencil_tests::kernels::{suite, ALL};

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
    // On x86-64 the CPU path above ran the kernel's AVX copy where the machine has it;
    // its plain copy must give the same bits.
    static SAID: std::sync::Once = std::sync::Once::new();
    if !stencil_runtime::cpu::wide_vectors() {
        SAID.call_once(|| {
            println!("no AVX copy runs here: the plain rows are compared with themselves")
        });
    }
    let mut plain_out: Vec<Field<T>> = (0..n_out).map(|_| poisoned(out_extent)).collect();
    let plain_red = stencil_runtime::cpu::on_plain_rows(|| cpu(&mut plain_out));
    let plain_pairs = plain_out
        .iter()
        .zip(&cpu_out)
        .map(|(p, c)| (bits(p), bits(c)));
    let reduced_bits = |r: &[f64]| r.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    let red_pair = (reduced_bits(&plain_red), reduced_bits(&cpu_red));
    let pairs: Vec<_> = plain_pairs.chain([red_pair]).collect();
    assert_same_bits(&format!("{name} {:?} plain rows", T::PRECISION), &pairs);
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

/// A suite kernel checked on random inputs by [`check_case`]: every field of one extent.
struct RandomCase {
    /// The seed of the inputs' random generator.
    seed: &'static str,
    /// The kernel's name (as [`dispatch::launch`] knows it).
    name: &'static str,
    /// The extent of every input and output field.
    extent: &'static [usize],
    /// Each input field's halo and the range `[lo, hi)` of its values, in order.
    inputs: &'static [(usize, f64, f64)],
    /// How many fields the kernel writes.
    outputs: usize,
    /// The kernel's scalars.
    scalars: &'static [f64],
}

/// The suite kernels checked on random inputs.
#[rustfmt::skip]
const RANDOM_CASES: &[RandomCase] = &[
    RandomCase { seed: "lap5", name: "lap5", extent: &[37, 23], inputs: &[(1, -1.0, 1.0)], outputs: 1, scalars: &[3.0] },
    RandomCase { seed: "lap9", name: "lap9", extent: &[29, 31], inputs: &[(1, -1.0, 1.0)], outputs: 1, scalars: &[2.0] },
    RandomCase { seed: "lap7", name: "lap7", extent: &[13, 9, 11], inputs: &[(1, -1.0, 1.0)], outputs: 1, scalars: &[1.5] },
    RandomCase { seed: "jacobi", name: "jacobi", extent: &[40, 17], inputs: &[(1, -1.0, 1.0), (0, -1.0, 1.0)], outputs: 1, scalars: &[0.01, 2.0 / 3.0] },
    RandomCase { seed: "upwind", name: "upwind", extent: &[33, 21], inputs: &[(1, 0.0, 1.0), (0, -1.0, 1.0), (0, -1.0, 1.0)], outputs: 1, scalars: &[0.4] },
    RandomCase { seed: "reconstruct", name: "reconstruct", extent: &[301], inputs: &[(1, -1.0, 1.0)], outputs: 2, scalars: &[1.3] },
    // Some cells dry (h below the threshold) so that the `if` matters.
    RandomCase { seed: "cfl", name: "cfl", extent: &[45, 38], inputs: &[(0, -0.2, 2.0), (0, -1.0, 1.0), (0, -1.0, 1.0)], outputs: 0, scalars: &[9.81, 1e-3] },
    RandomCase { seed: "maxabs", name: "maxabs", extent: &[77, 41], inputs: &[(0, -3.0, 2.0)], outputs: 0, scalars: &[] },
    RandomCase { seed: "mass", name: "mass", extent: &[64, 50], inputs: &[(0, 0.0, 2.0)], outputs: 0, scalars: &[0.25] },
    RandomCase { seed: "intrinsics", name: "intrinsics", extent: &[997], inputs: &[(0, 0.5, 2.0), (0, 0.5, 2.0)], outputs: 1, scalars: &[] },
    RandomCase { seed: "hyperbolic suite", name: "hyperbolic", extent: &[997], inputs: &[(0, -3.0, 3.0), (0, -3.0, 3.0)], outputs: 1, scalars: &[] },
    RandomCase { seed: "trigonometric suite", name: "trigonometric", extent: &[1189], inputs: &[(0, 0.5, 2.0), (0, 0.5, 2.0)], outputs: 1, scalars: &[] },
    RandomCase { seed: "tiled sine", name: "tiled_sine", extent: &[41, 29], inputs: &[(0, 0.5, 2.0)], outputs: 1, scalars: &[] },
    RandomCase { seed: "search suite", name: "search", extent: &[997], inputs: &[(4, 0.5, 2.0)], outputs: 1, scalars: &[] },
    RandomCase { seed: "spread suite", name: "spread", extent: &[997], inputs: &[(1, 0.5, 2.0)], outputs: 1, scalars: &[] },
    RandomCase { seed: "differences suite", name: "differences", extent: &[61, 37], inputs: &[(2, 0.5, 2.0)], outputs: 1, scalars: &[] },
    RandomCase { seed: "binary_logs", name: "binary_logs", extent: &[997], inputs: &[(0, 0.5, 2.0), (0, 0.5, 2.0)], outputs: 1, scalars: &[] },
    RandomCase { seed: "guarded", name: "guarded", extent: &[29, 17], inputs: &[(1, 0.5, 2.0), (1, 0.5, 2.0)], outputs: 3, scalars: &[0.7] },
    RandomCase { seed: "checker", name: "checker", extent: &[19, 12], inputs: &[(0, -1.0, 1.0)], outputs: 1, scalars: &[-0.5, 0.125] },
    RandomCase { seed: "staged_update", name: "staged_update", extent: &[37, 29], inputs: &[(2, -1.0, 1.0), (2, -1.0, 1.0)], outputs: 1, scalars: &[0.3] },
    RandomCase { seed: "staged_smooth", name: "staged_smooth", extent: &[1001], inputs: &[(1, -1.0, 1.0)], outputs: 1, scalars: &[0.25] },
    RandomCase { seed: "staged_lap3", name: "staged_lap3", extent: &[13, 11, 9], inputs: &[(1, -1.0, 1.0)], outputs: 1, scalars: &[1.5] },
];

/// The inputs of case `c`: each drawn in turn from the generator seeded `c.seed`.
fn draw<T: Real>(c: &RandomCase) -> Vec<Field<T>> {
    let mut r = rng(c.seed);
    c.inputs
        .iter()
        .map(|&(halo, lo, hi)| random_field::<T>(&mut r, c.extent, halo, lo, hi))
        .collect()
}

/// The case of kernel `name` in [`RANDOM_CASES`].
fn case_of(name: &str) -> &'static RandomCase {
    RANDOM_CASES
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no random case for kernel {name}"))
}

/// The source of suite kernel `name`.
fn source_of(name: &str) -> &'static str {
    ALL.iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("{name} not in the suite"))
        .source
}

/// [`check`]s case `c` on its inputs, the CPU path being the kernel's typed `launch`.
fn check_case<T: Real>(c: &RandomCase) {
    let inputs = draw::<T>(c);
    let refs: Vec<&Field<T>> = inputs.iter().collect();
    check(
        c.name,
        source_of(c.name),
        &refs,
        c.extent,
        c.outputs,
        c.scalars,
        |o| {
            dispatch::launch(c.name, &Backend::Cpu, &refs, o, c.scalars)
                .unwrap_or_else(|e| panic!("{} on the CPU: {e}", c.name))
        },
    );
}

/// Asserts that `out` holds `want(at, p)` at each point `p = [i, j, k]` of its extent (1D to
/// 3D), to within `bound(want)`; `at(q)` reads `u` at point `q`.
fn assert_pointwise<T: Real>(
    u: &Field<T>,
    out: &Field<T>,
    want: impl Fn(&dyn Fn([isize; 3]) -> f64, [isize; 3]) -> f64,
    bound: impl Fn(f64) -> f64,
) {
    let n = out.extent();
    let extent = [0, 1, 2].map(|a| n.get(a).copied().unwrap_or(1) as isize);
    let at = |q: [isize; 3]| u.get(q).unwrap().as_f64();
    for k in 0..extent[2] {
        for j in 0..extent[1] {
            for i in 0..extent[0] {
                let p = [i, j, k];
                let want = want(&at, p);
                let got = out.get(p).unwrap().as_f64();
                assert!(
                    (got - want).abs() <= bound(want),
                    "{p:?}: {got} against {want}"
                );
            }
        }
    }
}

/// The sum over the first `dims` axes `a` of `term(a, hi, lo)`, `hi` and `lo` the
/// neighbours of `p` one step up and one step down along `a`.
fn axis_sum(
    dims: usize,
    p: [isize; 3],
    term: impl Fn(usize, [isize; 3], [isize; 3]) -> f64,
) -> f64 {
    let mut s = 0.0;
    for a in 0..dims {
        let (mut hi, mut lo) = (p, p);
        hi[a] += 1;
        lo[a] -= 1;
        s += term(a, hi, lo);
    }
    s
}

/// A 2D and a 3D grid (23 x 17, 13 x 11 x 9), each with a field on it (halo 1, values in
/// `[0.5, 2)`), drawn in turn from the generator seeded `seed`.
fn fields_in_2d_and_3d<T: Real>(seed: &str) -> Vec<(Vec<usize>, Field<T>)> {
    let mut r = rng(seed);
    [vec![23usize, 17], vec![13, 11, 9]]
        .into_iter()
        .map(|n| {
            let u = random_field::<T>(&mut r, &n, 1, 0.5, 2.0);
            (n, u)
        })
        .collect()
}

/// Every kernel of [`RANDOM_CASES`]: the CPU, the interpreter and the host JIT agree.
#[test]
fn suite_kernels_on_random_inputs() {
    for c in RANDOM_CASES {
        for_precisions!(T => {
            check_case::<T>(c);
        });
    }
}

/// [`check`]s kernel `name` of `source` (one input, one output, no scalars) on each extent
/// of `extents` in turn, its input (no halo) drawn in `[0.5, 1.5)` from one generator
/// seeded `name`; `cpu` launches it on the CPU and returns the reductions.
fn check_on_extents<T: Real, const D: usize>(
    name: &str,
    source: &str,
    extents: impl IntoIterator<Item = [usize; D]>,
    cpu: impl Fn(&Field<T>, &mut Field<T>) -> Vec<f64>,
) {
    let mut r = rng(name);
    for n in extents {
        let u = random_field::<T>(&mut r, &n, 0, 0.5, 1.5);
        check(name, source, &[&u], &n, 1, &[], |o| cpu(&u, &mut o[0]));
    }
}

/// Runs the kernel of [`RANDOM_CASES`] named `name` (one input, one output, no scalars)
/// on the CPU on the case's input and asserts its output is `want` to within `bound` (as
/// [`assert_pointwise`]).
fn assert_case_output<T: Real>(
    name: &str,
    want: impl Fn(&dyn Fn([isize; 3]) -> f64, [isize; 3]) -> f64,
    bound: impl Fn(f64) -> f64,
) {
    let c = case_of(name);
    let u = &draw::<T>(c)[0];
    let mut out = [Field::<T>::zeros(c.extent, 0).unwrap()];
    dispatch::launch(name, &Backend::Cpu, &[u], &mut out, &[]).unwrap();
    assert_pointwise(u, &out[0], want, bound);
}

/// Tuples through a helper and destructuring `let`s, against the same in Rust.
#[test]
fn spread() {
    for_precisions!(T => {
        let spread = |at: &dyn Fn([isize; 3]) -> f64, [i, _, _]: [isize; 3]| {
            let (l, r) = (at([i - 1, 0, 0]), at([i + 1, 0, 0]));
            let (lo, hi) = (l.min(r), l.max(r));
            hi - lo + 0.25 * (lo * 2.0 + hi)
        };
        assert_case_output::<T>("spread", spread, |want| 1e-5 * want.abs());
    });
}

/// Offsets passed to a helper as tuples (and negated there), against the same in Rust.
#[test]
fn differences() {
    for_precisions!(T => {
        let differences = |at: &dyn Fn([isize; 3]) -> f64, [i, j, _]: [isize; 3]| {
            at([i + 1, j, 0]) - at([i - 1, j, 0]) + 0.5 * (at([i, j + 2, 0]) - at([i, j - 2, 0]))
        };
        assert_case_output::<T>("differences", differences, |_| 1e-5);
    });
}

/// One Laplacian helper written per axis (`ndims`, `unit`) for a 2D and a 3D kernel,
/// against the 5- and 7-point sums in Rust.
#[test]
fn generic_laplacian() {
    for_precisions!(T => {
        for (n, u) in fields_in_2d_and_3d::<T>("generic laplacian") {
            let dims = n.len();
            let name = if dims == 2 { "generic_lap_2d" } else { "generic_lap_3d" };
            let source = source_of(name);
            let launch = |o: &mut [Field<T>]| dispatch::launch(name, &Backend::Cpu, &[&u], o, &[]).unwrap();
            check(name, source, &[&u], &n, 1, &[], launch);
            let mut out = [Field::<T>::zeros(&n, 0).unwrap()];
            launch(&mut out);
            let laplacian = |at: &dyn Fn([isize; 3]) -> f64, p| {
                axis_sum(dims, p, |_, hi, lo| at(hi) + at(lo) - 2.0 * at(p))
            };
            assert_pointwise(&u, &out[0], laplacian, |_| 1e-5);
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
        for (n, u) in fields_in_2d_and_3d::<T>("diffuse") {
            let dims = n.len();
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
            let diffused = |at: &dyn Fn([isize; 3]) -> f64, p| {
                at(p) + dt * axis_sum(dims, p, |a, hi, lo| k[a] * (at(hi) - 2.0 * at(p) + at(lo)))
            };
            assert_pointwise(&u, &out, diffused, |want| 1e-5 * want.abs().max(1.0));
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

/// [`check`]s the grid transfer `name` of `source` (one input, one output, no scalars)
/// from `input` onto extent `to`, then returns its output there (with halo `halo`) from
/// its CPU launch `cpu`.
fn checked_transfer<T: Real>(
    name: &str,
    source: &str,
    input: &Field<T>,
    to: &[usize],
    halo: usize,
    cpu: impl Fn(&Field<T>, &mut Field<T>),
) -> Field<T> {
    check(name, source, &[input], to, 1, &[], |o| {
        cpu(input, &mut o[0]);
        vec![]
    });
    let mut out = Field::zeros(to, halo).unwrap();
    cpu(input, &mut out);
    out
}

/// Asserts that `out` holds `want(i, j)` at each point `(i, j)` of `points`, to within `tol`.
fn assert_at_points<T: Real>(
    out: &Field<T>,
    points: [(isize, isize); 3],
    want: impl Fn(isize, isize) -> f64,
    tol: f64,
) {
    for (i, j) in points {
        let want = want(i, j);
        let got = out.get([i, j, 0]).unwrap().as_f64();
        assert!(
            (got - want).abs() <= tol,
            "({i}, {j}): {got} against {want}"
        );
    }
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
        let coarse = checked_transfer("restrict_cells", suite::restrict_cells::SOURCE, &fine, &coarse_n, 1, |f, o| {
            suite::restrict_cells::launch(&Backend::Cpu, f, o).unwrap()
        });
        let children = |i: isize, j: isize| {
            let f = |a: isize, b: isize| fine.get([2 * i + a, 2 * j + b, 0]).unwrap().as_f64();
            0.25 * (f(0, 0) + f(1, 0) + f(0, 1) + f(1, 1))
        };
        assert_at_points(&coarse, [(0, 0), (5, 7), (17, 13)], children, 1e-6);
        let linear = Field::<T>::from_fn(&coarse_n, 1, |[i, j, _]| {
            T::from_f64(0.5 + 2.0 * i as f64 - 0.75 * j as f64)
        });
        let out = checked_transfer("prolong_cells", suite::prolong_cells::SOURCE, &linear, &fine_n, 0, |c, o| {
            suite::prolong_cells::launch(&Backend::Cpu, c, o).unwrap()
        });
        // Child centres sit a quarter of a coarse cell from the parent's.
        let still_linear = |i: isize, j: isize| {
            let x = (i as f64 - 0.5) / 2.0;
            let y = (j as f64 - 0.5) / 2.0;
            0.5 + 2.0 * x - 0.75 * y
        };
        assert_at_points(&out, [(2, 2), (9, 14), (33, 25)], still_linear, 1e-4);
    });
}

/// Edge tests along axis 0 on rows of every width from 1 to 9 and on a wide one: the
/// CPU's middle points (those at least 2 from either edge) run with the tests decided.
#[test]
fn edge_tests_on_rows_of_every_width() {
    for_precisions!(T => {
        let widths = (1..=9).chain([37]).map(|width| [width, 3]);
        check_on_extents::<T, 2>("edge_tests", suite::edge_tests::SOURCE, widths, |u, o| {
            vec![suite::edge_tests::launch(&Backend::Cpu, u, o).unwrap().as_f64()]
        });
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
