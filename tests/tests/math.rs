//! The language's math functions as the device runs them (the host JIT runs the same
//! inline arithmetic the PTX does) against Rust's std: rounding exact on every path,
//! transcendental functions within one or two ulp in f64 and almost always correctly
//! rounded in f32, over their whole domains, special values included.

use kernels_gen::ir::Kernel;
use rand::rngs::StdRng;
use stencil_runtime::{Backend, Field, Real};
use stencil_tests::for_precisions;
use stencil_tests::harness::{
    assert_ulps, kernel_ir, poisoned, random_field, rng, run, values, Path,
};
use stencil_tests::kernels::suite;

/// The values of the `outputs` fields kernel `k` writes on the host JIT from `inputs`, all
/// of one extent (the outputs poisoned first, so unwritten points show as NaN).
fn jit_values<T: Real>(k: &Kernel, inputs: &[&Field<T>], outputs: usize) -> Vec<Vec<f64>> {
    let n = inputs[0].extent();
    let mut out: Vec<Field<T>> = (0..outputs).map(|_| poisoned(n)).collect();
    run(Path::HostJit, k, inputs, &mut out, &[]);
    out.iter().map(values).collect()
}

/// The number of random inputs of each accuracy test.
const N: usize = 40_000;

/// `N`-point fields (no halo) of values drawn from `r` uniformly in each of `ranges`
/// (`[lo, hi)`), in turn.
fn uniform_fields<T: Real, const K: usize>(
    r: &mut StdRng,
    ranges: [(f64, f64); K],
) -> [Field<T>; K] {
    ranges.map(|(lo, hi)| random_field(r, &[N], 0, lo, hi))
}

/// A 1D field (no halo) of the values `xs`.
fn field_of<T: Real>(xs: &[f64]) -> Field<T> {
    Field::from_fn(&[xs.len()], 0, |p| T::from_f64(xs[p[0] as usize]))
}

/// The value of `f` at `p` as f64 (0 outside the field).
fn value_at<T: Real>(f: &Field<T>, p: [isize; 3]) -> f64 {
    f.get(p).map_or(0.0, |v| v.as_f64())
}

/// `mantissa * 10^e` with the sign of `s` at each point, `e` and `s` read from the fields
/// `exponent` and `sign`: numbers of every magnitude and both signs.
fn signed_powers<T: Real>(exponent: &Field<T>, sign: &Field<T>, mantissa: f64) -> Field<T> {
    Field::from_fn(exponent.extent(), 0, |p| {
        T::from_f64(10f64.powf(value_at(exponent, p)) * mantissa * value_at(sign, p).signum())
    })
}

/// Whether `got` is `want` to the bit, or both are NaN.
fn same_bits(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

/// `single` in f32, `double` in f64.
fn by_precision<T: Real, V>(single: V, double: V) -> V {
    if T::PRECISION == stencil_runtime::Precision::F32 {
        single
    } else {
        double
    }
}

/// `floor`, `ceil`, `trunc` and `round` on every path give exactly Rust's values, halves
/// and negative numbers included.
#[test]
fn rounding_is_exact_everywhere() {
    for_precisions!(T => {
        let mut r = rng("rounding");
        let n = [1001];
        // Quarters in [-6, 6] (exact halves among them), and some arbitrary values.
        let raw = random_field::<T>(&mut r, &n, 0, -6.0, 6.0);
        let a = Field::from_fn(&n, 0, |p| {
            let x = value_at(&raw, p);
            T::from_f64(if p[0] % 3 == 0 { x } else { (x * 4.0).round() / 4.0 })
        });
        let k = kernel_ir(suite::rounding::SOURCE, "rounding");
        let mut cpu: Vec<Field<T>> = (0..4).map(|_| poisoned(&n)).collect();
        {
            let [d, u, z, m] = &mut cpu[..] else { unreachable!() };
            suite::rounding::launch(&Backend::Cpu, &a, d, u, z, m).unwrap();
        }
        let x = values(&a);
        let exact: [fn(f64) -> f64; 4] = [f64::floor, f64::ceil, f64::trunc, f64::round];
        let mut halves = 0;
        for (o, f) in exact.iter().enumerate() {
            let want: Vec<f64> = x.iter().map(|&v| f(v)).collect();
            assert!(values(&cpu[o]) == want, "{:?} output {o} on the CPU", T::PRECISION);
            for path in [Path::Interpreter, Path::HostJit] {
                let mut out: Vec<Field<T>> = (0..4).map(|_| poisoned(&n)).collect();
                run(path, &k, &[&a], &mut out, &[]);
                assert!(values(&out[o]) == want, "{:?} output {o} on {path:?}", T::PRECISION);
            }
        }
        for &v in &x {
            halves += usize::from(v.fract().abs() == 0.5);
        }
        assert!(halves > 50, "{halves} halves checked");
    });
}

/// The language's own `exp`, `ln` and `powf` as the device runs them (the host JIT runs
/// the same arithmetic), in f32: evaluated in f64 with series cut for an f32 result, they
/// must round to the correctly rounded f32 value almost always and never be more than one
/// ulp from it (checked against Rust's f64 functions on inputs over many magnitudes).
#[test]
fn f32_transcendentals_round_correctly() {
    let source = "#[stencil(dims = 1)]
        fn transcendentals<T: Real>(a: In<T>, b: In<T>, c: In<T>, e: Out<T>, l: Out<T>, p: Out<T>) {
            e = a.exp();
            l = b.ln();
            p = b.powf(c);
        }";
    let k = kernel_ir(source, "transcendentals");
    let n = 20_000;
    let mut r = rng("transcendentals");
    // Exponents in [-80, 80] (`exp`), positive numbers from 1e-30 to 1e30 (`ln`), their
    // powers with exponents in [-1.2, 1.2] (`powf`, finite in f32).
    let a = random_field::<f32>(&mut r, &[n], 0, -80.0, 80.0);
    let scale = random_field::<f32>(&mut r, &[n], 0, -30.0, 30.0);
    let b = Field::from_fn(&[n], 0, |p| {
        10f32.powf(scale.get(p).unwrap_or(0.0)) * 1.000_123
    });
    let c = random_field::<f32>(&mut r, &[n], 0, -1.2, 1.2);
    let out = jit_values(&k, &[&a, &b, &c], 3);
    let (a, b, c) = (values(&a), values(&b), values(&c));
    let exact: [Box<dyn Fn(usize) -> f64>; 3] = [
        Box::new(|i| a[i].exp()),
        Box::new(|i| b[i].ln()),
        Box::new(|i| b[i].powf(c[i])),
    ];
    for (what, (got, exact)) in ["exp", "ln", "powf"].iter().zip(out.iter().zip(&exact)) {
        let (mut off, mut checked) = (0, 0);
        for (i, &g) in got.iter().enumerate() {
            let want = exact(i) as f32;
            if !want.is_finite() || want == 0.0 {
                continue;
            }
            let ulps = (g as f32).to_bits().abs_diff(want.to_bits());
            assert!(ulps <= 1, "{what} at input {i}: {g} against {want}");
            off += usize::from(ulps == 1);
            checked += 1;
        }
        println!("{what}: {off} of {checked} finite results one ulp off");
        assert!(
            checked * 2 > n,
            "{what}: only {checked} of {n} results are finite"
        );
        assert!(
            off * 1000 < checked,
            "{what}: {off} of {checked} results are not correctly rounded"
        );
    }
}

/// The CPU's f32 `powf` is the device's arithmetic, inlined (`Real::powf` for f32): its
/// values equal the host JIT's (what the PTX computes) bit for bit, on bases from 1e-30 to
/// 1e30 with zeros, ones, negative values and NaN among them, exponents in [-3, 3] with
/// zeros (a negative base gives NaN, or 1 at exponent 0, on both: checked as such); in f64 the CPU calls
/// the C library and stays within 1e-13 of the device.
#[test]
fn cpu_powers_are_the_devices_in_f32() {
    let n = 20_000;
    let mut r = rng("powers");
    let scale = values(&random_field::<f64>(&mut r, &[n], 0, -30.0, 30.0));
    let exponent = values(&random_field::<f64>(&mut r, &[n], 0, -3.0, 3.0));
    let base = |i: usize| match i % 97 {
        0 => 0.0,
        1 => 1.0,
        2 => -(10f64.powf(scale[i])),
        3 => f64::NAN,
        _ => 10f64.powf(scale[i]) * 1.000_123,
    };
    let power = |i: usize| {
        if i.is_multiple_of(89) {
            0.0
        } else {
            exponent[i]
        }
    };
    let k = kernel_ir(suite::powers::SOURCE, "powers");
    for_precisions!(T => {
        let a = field_of::<T>(&(0..n).map(base).collect::<Vec<_>>());
        let b = field_of::<T>(&(0..n).map(power).collect::<Vec<_>>());
        let mut cpu: Vec<Field<T>> = (0..2).map(|_| poisoned(&[n])).collect();
        {
            let [p, q] = &mut cpu[..] else { unreachable!() };
            suite::powers::launch(&Backend::Cpu, &a, &b, p, q).unwrap();
        }
        let jit = jit_values(&k, &[&a, &b], 2);
        let (bases, exponents) = (values(&a), values(&b));
        let single = by_precision::<T, _>(true, false);
        // A negative base gives NaN (`p = a^b`, `q = a^(4/3)`) on both paths, except 1 at
        // exponent 0; both cases are among the inputs.
        let negative: Vec<usize> = (0..n).filter(|&i| bases[i] < 0.0).collect();
        assert!(negative.iter().any(|&i| exponents[i] == 0.0));
        assert!(negative.iter().any(|&i| exponents[i] != 0.0));
        for (path, outputs) in [("cpu", cpu.iter().map(values).collect::<Vec<_>>()), ("device", jit.clone())] {
            for &i in &negative {
                let p = outputs[0][i];
                if exponents[i] == 0.0 {
                    assert_eq!(p, 1.0, "{path}: ({})^0 at {i}", bases[i]);
                } else {
                    assert!(p.is_nan(), "{path}: ({})^{} at {i} gave {p}", bases[i], exponents[i]);
                }
                assert!(outputs[1][i].is_nan(), "{path}: ({})^(4/3) at {i}", bases[i]);
            }
        }
        for (o, (c, j)) in cpu.iter().zip(&jit).enumerate() {
            let c = values(c);
            let mut finite = 0;
            for (i, (&c, &j)) in c.iter().zip(j).enumerate() {
                if c.is_nan() || j.is_nan() {
                    assert!(c.is_nan() && j.is_nan(), "output {o} at {i}: cpu {c}, device {j}");
                } else if single || !c.is_finite() {
                    assert_eq!(c.to_bits(), j.to_bits(), "output {o} at {i}: cpu {c}, device {j}");
                } else {
                    // In f64 the CPU calls the C library, the device its own series.
                    let rel = (c - j).abs() / c.abs().max(f64::MIN_POSITIVE);
                    assert!(rel < 1e-13, "output {o} at {i}: cpu {c}, device {j}");
                }
                finite += usize::from(c.is_finite() && c != 0.0);
            }
            assert!(finite * 2 > n, "output {o}: only {finite} finite results");
        }
    });
}

/// `sinh`, `cosh` and `tanh` as the device runs them: as `exp2_log2_log10_are_accurate`
/// (inputs spread over [-720, 720], a third of them within 25 of 0 and a third within
/// 1e-3).
#[test]
fn hyperbolic_functions_are_accurate() {
    let source = "#[stencil(dims = 1)]
        fn hyperbolic<T: Real>(a: In<T>, s: Out<T>, c: Out<T>, t: Out<T>) {
            s = a.sinh();
            c = cosh(a);
            t = a.tanh();
        }";
    let k = kernel_ir(source, "hyperbolic");
    let mut r = rng("hyperbolic");
    for_precisions!(T => {
        let [wide, mid, small] = uniform_fields::<T, 3>(&mut r, [(-720.0, 720.0), (-25.0, 25.0), (-1e-3, 1e-3)]);
        let a = Field::from_fn(&[N], 0, |p| {
            let pick = match p[0] % 3 {
                0 => &small,
                1 => &mid,
                _ => &wide,
            };
            T::from_f64(value_at(pick, p))
        });
        let out = jit_values(&k, &[&a], 3);
        let a = values(&a);
        let exact: [NamedFn; 3] =
            [("sinh", f64::sinh), ("cosh", f64::cosh), ("tanh", f64::tanh)];
        for ((what, f), got) in exact.iter().zip(&out) {
            assert_ulps::<T>(what, got, |i| f(a[i]), 2);
        }
    });
}

/// `hypot` as the device runs it: within two ulp of Rust's in f64 and almost always
/// equal to it in f32, for pairs of every magnitude (ratios up to 1e40, near the largest
/// and the smallest numbers, subnormal ones) and signs.
#[test]
fn hypot_is_accurate() {
    let source = "#[stencil(dims = 1)]
        fn h<T: Real>(a: In<T>, b: In<T>, out: Out<T>) {
            out = hypot(a, b);
        }";
    let k = kernel_ir(source, "h");
    let mut r = rng("hypot");
    for_precisions!(T => {
        let decades = by_precision::<T, _>(40.0, 310.0);
        let [ea, eb, sign] = uniform_fields::<T, 3>(&mut r, [(-decades, decades), (-20.0, 20.0), (-1.0, 1.0)]);
        let a = signed_powers(&ea, &sign, 1.234_567);
        // b within 1e20 of a either way (a third of them equal in magnitude).
        let b = Field::from_fn(&[N], 0, |p| {
            let x = value_at(&ea, p) + if p[0] % 3 == 0 { 0.0 } else { value_at(&eb, p) };
            T::from_f64(10f64.powf(x) * 0.987_654_3)
        });
        let out = jit_values(&k, &[&a, &b], 1);
        let (a, b) = (values(&a), values(&b));
        assert_ulps::<T>("hypot", &out[0], |i| a[i].hypot(b[i]), 1);
        // Special values: infinite if either is (even beside NaN), else NaN if either is.
        let xs = [f64::INFINITY, f64::NAN, 0.0, -0.0, 3.0, f64::NEG_INFINITY];
        let ys = [f64::NAN, 1.0, 0.0, 5.0, -4.0, 2.0];
        let special = &jit_values(&k, &[&field_of::<T>(&xs), &field_of(&ys)], 1)[0];
        let expect = [f64::INFINITY, f64::NAN, 0.0, 5.0, 5.0, f64::INFINITY];
        for (g, e) in special.iter().zip(expect) {
            assert!(g == &e || (g.is_nan() && e.is_nan()), "hypot special values: {special:?}");
        }
    });
}

/// `asinh`, `acosh` and `atanh` as the device runs them: as
/// `exp2_log2_log10_are_accurate`, within two ulp in f64, over their domains (from next
/// to their zero or pole to near the largest numbers).
#[test]
fn inverse_hyperbolic_functions_are_accurate() {
    let source = "#[stencil(dims = 1)]
        fn inverse<T: Real>(a: In<T>, b: In<T>, c: In<T>, s: Out<T>, h: Out<T>, t: Out<T>) {
            s = a.asinh();
            h = acosh(b);
            t = c.atanh();
        }";
    let k = kernel_ir(source, "inverse");
    let mut r = rng("inverse hyperbolic");
    for_precisions!(T => {
            let decades = by_precision::<T, _>(38.0, 300.0);
            let [e, f, sign] = uniform_fields::<T, 3>(&mut r, [(-decades, decades), (-12.0, 0.0), (-1.0, 1.0)]);
            // Any magnitude for asinh; 1 plus any magnitude for acosh; for atanh 1 minus
            // 10^-12..1 or magnitudes 10^-12..1, either sign.
            let a = signed_powers(&e, &sign, 1.234_567);
            let bb = Field::from_fn(&[N], 0, |p| T::from_f64(1.0 + 10f64.powf(value_at(&e, p)) * 0.876_543))
    ;
            let c = Field::from_fn(&[N], 0, |p| {
                let m = 10f64.powf(value_at(&f, p));
                let v = if p[0] % 2 == 0 { 1.0 - m } else { m * 0.987 };
                T::from_f64(v * value_at(&sign, p).signum())
            });
            let out = jit_values(&k, &[&a, &bb, &c], 3);
            let (a, bb, c) = (values(&a), values(&bb), values(&c));
            assert_ulps::<T>("asinh", &out[0], |i| a[i].asinh(), 2);
            // Rust's `acosh` is `ln(x + sqrt(x - 1) sqrt(x + 1))`, which loses digits next
        // to 1 (at 1 + 2^-52 half of them): there the reference is `ln_1p` of the same
        // sum written from `t = x - 1`.
        let acosh = |x: f64| {
            let t = x - 1.0;
            if t < 1.0 {
                (t + (t.mul_add(t, 2.0 * t)).sqrt()).ln_1p()
            } else {
                x.acosh()
            }
        };
        assert_ulps::<T>("acosh", &out[1], |i| acosh(bb[i]), 2);
            // Rust's `atanh` is `ln_1p(2x / (1 - x)) / 2`, which loses digits next to -1 (where
        // the argument is -1 plus a little): the reference is the odd extension of its
        // value at |x|.
        assert_ulps::<T>("atanh", &out[2], |i| c[i].abs().atanh().copysign(c[i]), 2);
        // Special values (zeros, infinities and NaN, from their poles and beyond their
        // domains too), against Rust's.
        let xs = [0.0, -0.0, 1.0, -1.0, 2.0, -3.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
        let field = field_of::<T>(&xs);
        let special = jit_values(&k, &[&field, &field, &field], 3);
        let fs: [fn(f64) -> f64; 3] = [f64::asinh, f64::acosh, f64::atanh];
        for (f, got) in fs.iter().zip(&special) {
            for (x, &g) in xs.iter().zip(got) {
                let want = T::from_f64(f(*x)).as_f64();
                if want.is_finite() && want != 0.0 {
                    continue;
                }
                assert!(same_bits(g, want), "{:?} at {x}: {g} against {want}", T::PRECISION);
            }
        }
        });
}

/// `cbrt` as the device runs it: within one ulp of Rust's in f64 and almost always equal
/// to it in f32, over every magnitude and both signs (subnormal numbers included), and
/// zero, infinity and NaN as themselves.
#[test]
fn cbrt_is_accurate() {
    let source = "#[stencil(dims = 1)]
        fn c<T: Real>(a: In<T>, out: Out<T>) {
            out = a.cbrt();
        }";
    let k = kernel_ir(source, "c");
    let mut r = rng("cbrt");
    for_precisions!(T => {
        let decades = by_precision::<T, _>(44.0, 320.0);
        let [e, sign] = uniform_fields::<T, 2>(&mut r, [(-decades, decades), (-1.0, 1.0)]);
        let a = signed_powers(&e, &sign, 1.234_567);
        let out = jit_values(&k, &[&a], 1);
        let a = values(&a);
        assert_ulps::<T>("cbrt", &out[0], |i| a[i].cbrt(), 1);
        let xs = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -8.0];
        let special = &jit_values(&k, &[&field_of::<T>(&xs)], 1)[0];
        let expect = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -2.0];
        for (&g, e) in special.iter().zip(expect) {
            assert!(same_bits(g, e), "cbrt special values: {special:?}");
        }
    });
}

/// A function of Rust's std with its name.
type NamedFn = (&'static str, fn(f64) -> f64);

/// A function's exact value at input `i`.
type Exact<'a> = Box<dyn Fn(usize) -> f64 + 'a>;

/// `exp2`, `log2` and `log10` as the device runs them (the host JIT runs the same
/// arithmetic): in f32 never more than one ulp from Rust's value and almost always
/// equal to it; in f64 within one ulp of Rust's value, with `exp` and `ln` alongside
/// (inputs over the whole range: huge and tiny, subnormal, and next to 1).
#[test]
fn exp2_log2_log10_are_accurate() {
    let source = "#[stencil(dims = 1)]
        fn logs<T: Real>(a: In<T>, b: In<T>, p: Out<T>, l2: Out<T>, l10: Out<T>, e: Out<T>, l: Out<T>) {
            p = a.exp2();
            l2 = b.log2();
            l10 = log10(b);
            e = (a * 0.69).exp();
            l = b.ln();
        }";
    let k = kernel_ir(source, "logs");
    let mut r = rng("logs");
    for_precisions!(T => {
        let (lo, hi, decades) = by_precision::<T, _>((-140.0, 125.0, 40.0), (-1070.0, 1020.0, 320.0));
        let [a, near, scale] = uniform_fields::<T, 3>(&mut r, [(lo, hi), (-1e-3, 1e-3), (-decades, decades)]);
        // A third of the inputs next to 1, the rest over every magnitude.
        let b = Field::from_fn(&[N], 0, |p| {
            let x = if p[0] % 3 == 0 {
                1.0 + value_at(&near, p)
            } else {
                10f64.powf(value_at(&scale, p)) * 1.000_123
            };
            T::from_f64(x)
        });
        let out = jit_values(&k, &[&a, &b], 5);
        let (a, b) = (values(&a), values(&b));
        let exact: [(&str, Exact); 5] = [
            ("exp2", Box::new(|i| a[i].exp2())),
            ("log2", Box::new(|i| b[i].log2())),
            ("log10", Box::new(|i| b[i].log10())),
            ("exp", Box::new(|i| (T::from_f64(a[i]) * T::from_f64(0.69)).as_f64().exp())),
            ("ln", Box::new(|i| b[i].ln())),
        ];
        for ((what, exact), got) in exact.iter().zip(&out) {
            assert_ulps::<T>(what, got, exact, 1);
        }
    });
}

/// `powi` with a constant exponent is binary powering: 13 = 0b1101 takes three squarings
/// and two products, a negative exponent one division more, exponent 0 gives 1; exact
/// where the powers are (small integers), within a few ulp of Rust's `powi` elsewhere.
#[test]
fn powi_is_binary_powering() {
    use kernels_gen::ir::{Binary, Node};
    let source = "#[stencil(dims = 1)]
        fn p<T: Real>(a: In<T>, p13: Out<T>, m2: Out<T>, p0: Out<T>) {
            p13 = a.powi(13);
            m2 = powi(a, -2);
            p0 = a.powi(0);
        }";
    let k = kernel_ir(source, "p");
    let count = |op| {
        k.nodes
            .iter()
            .filter(|n| matches!(n, Node::Binary(o, ..) if *o == op))
            .count()
    };
    // a^13: squarings a^2, a^4, a^8; products a * a^4, (a a^4) a^8. a^-2: 1 / a^2 (the
    // square shared with a^13's).
    assert_eq!(count(Binary::Mul), 5, "{:?}", k.nodes);
    assert_eq!(count(Binary::Div), 1, "{:?}", k.nodes);
    let mut r = rng("powi");
    for_precisions!(T => {
        let n = 1000;
        let a = random_field::<T>(&mut r, &[n], 0, -3.0, 3.0);
        let ints = Field::from_fn(&[n], 0, |p| T::from_f64((p[0] % 7) as f64 - 3.0));
        let eps = by_precision::<T, _>(f64::from(f32::EPSILON), f64::EPSILON);
        for (input, exact) in [(&a, false), (&ints, true)] {
            let out = jit_values(&k, &[input], 3);
            let x = values(input);
            let [p13, m2, p0] = [0, 1, 2].map(|o| &out[o]);
            for i in 0..n {
                let want13 = T::from_f64(x[i].powi(13)).as_f64();
                let want2 = T::from_f64(x[i].powi(-2)).as_f64();
                assert_eq!(p0[i], 1.0, "x^0 at {}", x[i]);
                if exact {
                    assert_eq!(p13[i], want13, "{}^13", x[i]);
                    if x[i] != 0.0 {
                        assert_eq!(m2[i], want2, "{}^-2", x[i]);
                    }
                } else {
                    let close = |g: f64, w: f64| (g - w).abs() <= 8.0 * eps * w.abs();
                    assert!(close(p13[i], want13), "{}^13: {} against {want13}", x[i], p13[i]);
                    assert!(close(m2[i], want2), "{}^-2: {} against {want2}", x[i], m2[i]);
                }
            }
        }
    });
}
