//! The device's `powf` for f32 results, in plain Rust, for the CPU's generated kernels.
//!
//! The GPU evaluates transcendentals with straight-line arithmetic (`kernels-gen`'s
//! `llvm::math`): a range reduction and a polynomial, no branches, no calls. The C
//! library's `powf` is a call per point on the CPU, which also keeps the loop around it
//! scalar (a shallow-water update spent a quarter of its time there). This is the same
//! arithmetic, operation for operation, as the device's `pow` for a result rounded to f32
//! (evaluated in f64 with series cut for an f32 result, `Accuracy::Single`): inlined into
//! a kernel it vectorises, and the CPU gives the device's values bit for bit. Integers
//! and floats are converted through the bits of `2^52 + 2^51` rather than with casts
//! (exact for the small integers here, and what AVX can do four at a time).

use std::f64::consts::{LOG2_E, SQRT_2};

/// ln 2 split so that `k * LN2_HI` is exact for |k| < 2^11 (fdlibm's constants).
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// `2^52 + 2^51`: an integral f64 of magnitude below 2^51 added to it lands in the low
/// bits of the sum's mantissa.
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// `1/n!` for n in 0..9: the Taylor series of `e^r` for `|r| <= ln2/2` to `r^8/8!`
/// (remainder below 2.1e-10 relative), built as the device's generator builds it.
const EXP_COEFFS: [f64; 9] = {
    let mut c = [1.0f64; 9];
    let mut n = 1;
    while n < 9 {
        c[n] = c[n - 1] / n as f64;
        n += 1;
    }
    c
};

/// `2 / (2n + 1)` for n in 1..7: `ln(m) = 2 atanh(s)` to `s^13` (remainder below 5e-13).
const LN_COEFFS: [f64; 6] = {
    let mut c = [0.0f64; 6];
    let mut n = 1;
    while n < 7 {
        c[n - 1] = 2.0 / (2 * n + 1) as f64;
        n += 1;
    }
    c
};

/// Horner evaluation of `sum coeffs[i] x^i`, one fused multiply-add per term:
/// `horner!(x, coeffs, top; top - 1, .., 0)`. Written out, not as a loop: a loop over the
/// table left inside a kernel's row when LLVM's loop vectoriser comes to it (without
/// ThinLTO, in the `iterate` profile, it is unrolled only later) makes the row an outer
/// loop, which the vectoriser passes by.
macro_rules! horner {
    ($x:expr, $coeffs:expr, $top:literal; $($i:literal),+) => {{
        let mut acc = $coeffs[$top];
        $(acc = acc.mul_add($x, $coeffs[$i]);)+
        acc
    }};
}

/// The integral `x` (|x| < 2^51) as an integer.
#[inline(always)]
fn to_int(x: f64) -> i64 {
    (x + ROUNDER).to_bits() as i64 - ROUNDER.to_bits() as i64
}

/// The integer `k` (|k| < 2^51) as an f64.
#[inline(always)]
fn to_float(k: i64) -> f64 {
    f64::from_bits((ROUNDER.to_bits() as i64 + k) as u64) - ROUNDER
}

/// `2^k` for `k` in [-1022, 1023], from its bits.
#[inline(always)]
fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) << 52) as u64)
}

/// `e^x`: `2^k e^r` with `k` the integer nearest `x log2(e)` and `r = x - k ln 2`.
#[inline(always)]
fn exp(x: f64) -> f64 {
    // Clamped so that k stays in range (NaN becomes the upper bound, restored below).
    let xc = if x < -746.0 { -746.0 } else { x };
    let xc = if xc < 710.0 { xc } else { 710.0 };
    let kf = (xc * LOG2_E + 0.5).floor();
    let k = to_int(kf);
    let r = (xc - kf * LN2_HI) - kf * LN2_LO;
    let p = horner!(r, EXP_COEFFS, 8; 7, 6, 5, 4, 3, 2, 1, 0);
    // `p 2^k` as two factors, so that every k of the clamped range stays representable.
    let k1 = k >> 1;
    let y = p * pow2(k1) * pow2(k - k1);
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `ln x`: `x = 2^e m` with `m` in [sqrt(2)/2, sqrt(2)] (subnormals scaled first),
/// `e ln 2 + ln m`, with the special values of a logarithm.
#[inline(always)]
fn ln(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny {
        x * 18_014_398_509_481_984.0
    } else {
        x
    }; // 2^54
    let adjust: i64 = if tiny { -54 } else { 0 };
    let bits = xs.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023 + adjust;
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let big = m > SQRT_2;
    let m = if big { m * 0.5 } else { m };
    let e = if big { e + 1 } else { e };
    // ln(m) = 2 atanh(s), s = f / (2 + f), written as fdlibm does: the exact f carries
    // the result, the rounding errors stay in the small correction.
    let f = m - 1.0;
    let s = f / (f + 2.0);
    let z = s * s;
    let r = z * horner!(z, LN_COEFFS, 5; 4, 3, 2, 1, 0);
    let hfsq = f * f * 0.5;
    let lnm = f - (hfsq - s * (hfsq + r));
    let ef = to_float(e);
    let y = ef * LN2_HI + (lnm + ef * LN2_LO);
    let y = if x == f64::INFINITY { x } else { y };
    let y = if x == 0.0 { f64::NEG_INFINITY } else { y };
    // Below zero or NaN.
    if x < 0.0 || x.is_nan() {
        f64::NAN
    } else {
        y
    }
}

/// `x^y` for an f32 result, as the device computes it: `e^(y ln x)` in f64 (1 where `y`
/// is 0 or `x` is 1), to be rounded to f32 by the caller.
#[inline(always)]
pub(super) fn pow_for_f32(x: f64, y: f64) -> f64 {
    let r = exp(y * ln(x));
    if y == 0.0 || x == 1.0 {
        1.0
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_pass_through_the_rounder_exactly() {
        for k in [-1100i64, -54, -1, 0, 1, 2, 1023, 1100] {
            assert_eq!(to_int(k as f64), k);
            assert_eq!(to_float(k), k as f64);
        }
    }

    #[test]
    fn pow_rounds_to_the_nearest_f32_almost_always() {
        let mut off = 0;
        let mut checked = 0;
        for i in 0..20_000u32 {
            let x = 1e-20f64 * 1.0123f64.powi(i as i32 % 4000 + 1);
            let y = -3.0 + 6.0 * f64::from(i) / 20_000.0;
            let (x, y) = (x as f32, y as f32);
            let want = (f64::from(x)).powf(f64::from(y)) as f32;
            if !want.is_finite() || want == 0.0 {
                continue;
            }
            let got = pow_for_f32(f64::from(x), f64::from(y)) as f32;
            let ulps = got.to_bits().abs_diff(want.to_bits());
            assert!(ulps <= 1, "{x}^{y}: {got} against {want}");
            off += usize::from(ulps == 1);
            checked += 1;
        }
        assert!(
            checked > 15_000 && off * 1000 < checked,
            "{off} of {checked}"
        );
    }

    #[test]
    fn special_values_are_those_of_the_device() {
        let p = |x: f64, y: f64| pow_for_f32(x, y);
        assert_eq!(p(2.0, 0.0), 1.0);
        assert_eq!(p(1.0, f64::NAN), 1.0);
        assert_eq!(p(0.0, 2.0), 0.0);
        assert_eq!(p(0.0, -1.0), f64::INFINITY);
        assert!(p(f64::NAN, 2.0).is_nan());
        assert!(p(-2.0, 0.5).is_nan());
        assert_eq!(p(f64::INFINITY, 1.0), f64::INFINITY);
        assert_eq!(p(4.0, 0.5) as f32, 2.0);
    }
}
