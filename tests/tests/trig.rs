//! The trigonometric functions as the device runs them (the host JIT runs the same inline
//! arithmetic the PTX does) against Rust's std: within one ulp in f64 (two for `tan`),
//! almost always correctly rounded in f32, over their whole domains: arguments near zero,
//! near multiples of pi/2, up to 1e6 (the first reduction) and up to the largest finite
//! numbers (the second), and the special values.

use stencil_runtime::{Field, Real};
use stencil_tests::for_precisions;
use stencil_tests::harness::{
    assert_ulps, kernel_ir, poisoned, random_field, rng, run, values, Path,
};

/// One kernel computing every function of one argument, and `atan2`.
const SOURCE: &str = "#[stencil(dims = 1)]
    fn t<T: Real>(a: In<T>, b: In<T>, s: Out<T>, c: Out<T>, t: Out<T>,
                  asn: Out<T>, acs: Out<T>, at: Out<T>, at2: Out<T>) {
        s = a.sin();
        c = cos(a);
        t = a.tan();
        asn = b.asin();
        acs = acos(b);
        at = a.atan();
        at2 = atan2(a, b);
    }";

/// The functions of Rust's std, in the kernel's output order.
const STD: [fn(f64, f64) -> f64; 7] = [
    |a, _| a.sin(),
    |a, _| a.cos(),
    |a, _| a.tan(),
    |_, b| b.asin(),
    |_, b| b.acos(),
    |a, _| a.atan(),
    |a, b| a.atan2(b),
];
const NAMES: [&str; 7] = ["sin", "cos", "tan", "asin", "acos", "atan", "atan2"];

/// Runs the kernel on `a` and `b` (host JIT), the seven outputs' values.
fn evaluate<T: Real>(a: &Field<T>, b: &Field<T>) -> Vec<Vec<f64>> {
    let k = kernel_ir(SOURCE, "t");
    let n = a.interior().expect("readable").len();
    let mut out: Vec<Field<T>> = (0..7).map(|_| poisoned(&[n])).collect();
    run(Path::HostJit, &k, &[a, b], &mut out, &[]);
    out.iter().map(values).collect()
}

/// Every function over random arguments of every magnitude: `a` from 1e-300 (1e-40 in
/// f32) to the largest finite numbers, both signs, `b` in [-1, 1] with its tails near
/// -1, 0 and 1.
#[test]
fn trigonometric_functions_are_accurate() {
    let n = 60_000;
    let mut r = rng("trig");
    for_precisions!(T => {
        let single = T::PRECISION == stencil_runtime::Precision::F32;
        let (low, high) = if single { (-40.0, 38.5) } else { (-300.0, 308.2) };
        let e = random_field::<T>(&mut r, &[n], 0, low, high);
        let u = random_field::<T>(&mut r, &[n], 0, -1.0, 1.0);
        let get = |f: &Field<T>, i: usize| f.get([i as isize, 0, 0]).map_or(0.0, |v| v.as_f64());
        // A third of `a` within a few units of pi/2 multiples below 1e6, a third below
        // 10, the rest over every magnitude.
        let a = Field::from_fn(&[n], 0, |p| {
            let i = p[0] as usize;
            let (x, s) = (get(&e, i), get(&u, i));
            let v = match i % 3 {
                0 => (s * 1e6).round() * std::f64::consts::FRAC_PI_2 + s * 1e-3,
                1 => 10.0 * s,
                _ => 10f64.powf(x) * s.signum(),
            };
            T::from_f64(v)
        });
        let b = Field::from_fn(&[n], 0, |p| {
            let s = get(&u, p[0] as usize);
            // Near the ends and the middle: 1 - s^8 or s^5.
            let v = if p[0] % 2 == 0 { s.signum() * (1.0 - s.powi(8)) } else { s.powi(5) };
            T::from_f64(v)
        });
        let got = evaluate(&a, &b);
        let (a, b) = (values(&a), values(&b));
        for (k, f) in STD.iter().enumerate() {
            let ulps = if NAMES[k] == "tan" || NAMES[k] == "atan2" { 2 } else { 1 };
            assert_ulps::<T>(NAMES[k], &got[k], |i| f(a[i], b[i]), ulps);
        }
    });
}

/// Arguments next to multiples of pi/2 far out, where the reduction must keep 60 more
/// bits than the argument has: the argument known to come nearest a multiple of pi/2 of
/// all doubles (6381956970095103 2^797), huge ones, and the doubles nearest k pi/2 for
/// large k. The exact values were computed with mpmath at 4000 bits (`mp.sin(mpf(x))` and
/// so on, rounded to f64); Rust's std (the platform's libm) is 8 ulp off the first cosine.
#[test]
fn large_arguments_keep_their_digits() {
    // (x, sin x, cos x, tan x)
    const EXACT: [(f64, f64, f64, f64); 16] = [
        (
            5.319372648326541e255,
            1.0,
            -4.687165924254628e-19,
            -2.133485385753704e18,
        ),
        (
            1e22,
            -0.8522008497671888,
            0.523214785395139,
            -1.6287782256068988,
        ),
        (
            1e300,
            -0.8178819121159085,
            -0.5753861119575491,
            1.4214488238747245,
        ),
        (
            f64::MAX,
            0.004961954789184062,
            -0.9999876894265599,
            -0.004962015874444895,
        ),
        (
            4.71238898038469,
            -1.0,
            -1.8369701987210297e-16,
            5443746451065123.0,
        ),
        (
            -4.71238898038469,
            1.0,
            -1.8369701987210297e-16,
            -5443746451065123.0,
        ),
        (
            15707963.267948966,
            2.8102777124278216e-10,
            1.0,
            2.8102777124278216e-10,
        ),
        (
            -15707963.267948966,
            -2.8102777124278216e-10,
            1.0,
            -2.8102777124278216e-10,
        ),
        (
            1570796326794896.5,
            -0.11894902153438383,
            0.9929003627132044,
            -0.11979955492144566,
        ),
        (
            -1570796326794896.5,
            0.11894902153438383,
            0.9929003627132044,
            0.11979955492144566,
        ),
        (
            1.5707963267948967e20,
            0.2011466911576539,
            -0.9795611306275517,
            -0.20534368388912094,
        ),
        (
            -1.5707963267948967e20,
            -0.2011466911576539,
            -0.9795611306275517,
            0.20534368388912094,
        ),
        (
            1.5707963267948966e100,
            -0.9974471599292345,
            0.07140842491684053,
            -13.968199986077588,
        ),
        (
            -1.5707963267948966e100,
            0.9974471599292345,
            0.07140842491684053,
            13.968199986077588,
        ),
        (
            1.5707963267948964e250,
            -0.4500092665333554,
            0.893023885477937,
            -0.5039162712792561,
        ),
        (
            -1.5707963267948964e250,
            0.4500092665333554,
            0.893023885477937,
            0.5039162712792561,
        ),
    ];
    let a = Field::from_fn(&[EXACT.len()], 0, |p| EXACT[p[0] as usize].0);
    let b = Field::from_fn(&[EXACT.len()], 0, |_| 0.5f64);
    let got = evaluate(&a, &b);
    for (i, &(x, sin, cos, tan)) in EXACT.iter().enumerate() {
        for (k, want) in [sin, cos, tan].into_iter().enumerate() {
            let ulps = got[k][i].to_bits().abs_diff(want.to_bits());
            assert!(
                ulps <= if k == 2 { 2 } else { 1 },
                "{} at {x:e}: {} against {want} ({ulps} ulp)",
                NAMES[k],
                got[k][i]
            );
        }
    }
}

/// Zeros keep their sign, infinities and NaN give NaN (sin, cos, tan), beyond [-1, 1]
/// asin and acos give NaN, and atan2 takes Rust's values at zeros and infinities.
#[test]
fn special_values_are_rusts() {
    let inf = f64::INFINITY;
    let xs = [0.0, -0.0, inf, -inf, f64::NAN, 1.0, -1.0, 2.0, -3.0];
    let mut pairs = Vec::new();
    for &a in &xs {
        for &b in &xs {
            pairs.push((a, b));
        }
    }
    for_precisions!(T => {
        let a = Field::from_fn(&[pairs.len()], 0, |p| T::from_f64(pairs[p[0] as usize].0));
        let b = Field::from_fn(&[pairs.len()], 0, |p| T::from_f64(pairs[p[0] as usize].1));
        let got = evaluate(&a, &b);
        for (k, f) in STD.iter().enumerate() {
            for (i, &(x, y)) in pairs.iter().enumerate() {
                let want = T::from_f64(f(x, y)).as_f64();
                let g = got[k][i];
                // Finite non-zero values are the accuracy tests' business.
                if want.is_finite() && want != 0.0 && g.is_finite() {
                    continue;
                }
                let same = g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan());
                assert!(same, "{} {:?} at ({x}, {y}): {g} against {want}", NAMES[k], T::PRECISION);
            }
        }
    });
}
