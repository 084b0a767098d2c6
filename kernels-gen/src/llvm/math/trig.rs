//! `sin`, `cos` and `tan`: the argument reduced to `y0 + y1` in about [-pi/4, pi/4] and a
//! quadrant, then fdlibm's kernels (as in musl). Both reductions are straight-line and both
//! run; a select keeps the one that is exact for the argument:
//!
//! - up to 2^20 pi/2, Cody and Waite's: `x - n pi/2` with pi/2 in three 33-bit pieces and
//!   a tail, so that `n` times each piece is exact (fdlibm's medium reduction, at its last
//!   level);
//! - beyond, Payne and Hanek's in integers: the 53-bit significand times a 192-bit window
//!   of the bits of 2/pi (chosen by the exponent from a table), kept modulo 4 to 2^-126, so
//!   that even the arguments nearest a multiple of pi/2 keep their digits.

use super::{Fv, Math, R};
use inkwell::values::IntValue;
use inkwell::{FloatPredicate, IntPredicate};

/// pi/2 in three pieces of 33 bits and the tails after each (fdlibm's constants).
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_1T: f64 = 6.077_100_506_506_192e-11;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_2T: f64 = 2.022_266_248_795_950_6e-21;
const PIO2_3: f64 = 2.022_266_248_711_166_5e-21;
const PIO2_3T: f64 = 8.478_427_660_368_9e-32;

/// pi/2 rounded, and what it misses.
pub(super) const PIO2_HI: f64 = std::f64::consts::FRAC_PI_2;
pub(super) const PIO2_LO: f64 = 6.123_233_995_736_766e-17;

/// Up to here the medium reduction is exact: 2^20 pi/2.
const MEDIUM_LIMIT: f64 = 1_647_099.325_507_691_5;

/// The bits of 2/pi after the binary point, 64 to a word, after one word of zeros (the
/// integer part, so that the window of every exponent starts inside the table). Computed
/// with mpmath at 1600 bits: `floor(frac(2/pi * 2^(64 k)) ... )` word by word.
pub(super) const TWO_OVER_PI: [u64; 23] = [
    0,
    0xA2F9_836E_4E44_1529,
    0xFC27_57D1_F534_DDC0,
    0xDB62_9599_3C43_9041,
    0xFE51_63AB_DEBB_C561,
    0xB724_6E3A_424D_D2E0,
    0x0649_2EEA_09D1_921C,
    0xFE1D_EB1C_B129_A73E,
    0xE882_35F5_2EBB_4484,
    0xE99C_7026_B45F_7E41,
    0x3991_D639_8353_39F4,
    0x9C84_5F8B_BDF9_283B,
    0x1FF8_97FF_DE05_980F,
    0xEF2F_118B_5A0A_6D1F,
    0x6D36_7ECF_27CB_09B7,
    0x4F46_3F66_9E5F_EA2D,
    0x7527_BAC7_EBE5_F17B,
    0x3D07_39F7_8A52_92EA,
    0x6BFB_5FB1_1F8D_5D08,
    0x5603_3046_FC7B_6BAB,
    0xF0CF_BC20_9AF4_361D,
    0xA9E3_9161_5EE6_1B08,
    0x6599_855F_14A0_6840,
];

/// fdlibm's sine kernel: sin(x) ~ x + S1 x^3 + ... + S6 x^13 on [-pi/4, pi/4].
const S: [f64; 6] = [
    -0.16666666666666632,
    0.00833333333332249,
    -1.984_126_982_985_795e-4,
    2.755_731_370_707_007e-6,
    -2.505_076_025_340_686_3e-8,
    1.58969099521155e-10,
];

/// fdlibm's cosine kernel: cos(x) ~ 1 - x^2/2 + C1 x^4 + ... + C6 x^14.
const C: [f64; 6] = [
    0.0416666666666666,
    -1.388_888_888_887_411e-3,
    2.480_158_728_947_673e-5,
    -2.755_731_435_139_066_3e-7,
    2.087_572_321_298_175e-9,
    -1.135_964_755_778_819_5e-11,
];

/// fdlibm's tangent kernel: tan(x) ~ x + T0 x^3 + ... + T12 x^27 on [0, 0.6744].
const T: [f64; 13] = [
    0.3333333333333341,
    0.13333333333320124,
    0.05396825397622605,
    0.021869488294859542,
    8.863_239_823_599_3e-3,
    3.592_079_107_591_312_4e-3,
    1.456_209_454_325_290_3e-3,
    5.880_412_408_202_641e-4,
    2.464_631_348_184_699e-4,
    7.817_944_429_395_571e-5,
    7.140_724_913_826_082e-5,
    -1.855_863_748_552_754_6e-5,
    2.590_730_518_636_337e-5,
];

/// Above this the tangent kernel works on pi/4 - x (fdlibm's 0x3FE59428).
const TAN_FOLD: f64 = 0.674_331_665_039_062_5;

/// A reduced argument `x = n pi/2 + y0 + y1`: `(n, y0, y1)`.
type Reduced<'ctx> = (IntValue<'ctx>, Fv<'ctx>, Fv<'ctx>);

/// Which of the three functions.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(in crate::llvm) enum Trig {
    Sin,
    Cos,
    Tan,
}

impl<'ctx> Math<'_, 'ctx> {
    /// `sin`, `cos` or `tan` of `x` in f64 (NaN at infinities and NaN).
    pub fn trig(&self, x: Fv<'ctx>, which: Trig) -> R<Fv<'ctx>> {
        let b = self.b;
        let (n, y0, y1) = self.reduce_half_pi(x)?;
        let quadrant = b.build_and(n, self.i(3), "")?;
        let odd = self.is_odd(n)?;
        let y = match which {
            Trig::Tan => {
                // Below 2^-27 tan(x) rounds to x (which keeps the sign of a zero).
                let t = self.tan_kernel(y0, y1, odd)?;
                let tiny = b.build_float_compare(
                    FloatPredicate::OLT,
                    self.abs(x)?,
                    self.c(2f64.powi(-27)),
                    "",
                )?;
                b.build_select(tiny, x, t, "")?.into_float_value()
            }
            Trig::Sin | Trig::Cos => {
                let s = self.sin_kernel(y0, y1)?;
                let c = self.cos_kernel(y0, y1)?;
                // sin: s, c, -s, -c by quadrant; cos: c, -s, -c, s.
                let shift = if which == Trig::Cos { 1 } else { 0 };
                let q =
                    b.build_and(b.build_int_add(quadrant, self.i(shift), "")?, self.i(3), "")?;
                let pick_c = self.is_odd(q)?;
                let v = b.build_select(pick_c, c, s, "")?.into_float_value();
                let negate = b.build_int_compare(IntPredicate::UGE, q, self.i(2), "")?;
                b.build_select(negate, b.build_float_neg(v, "")?, v, "")?
                    .into_float_value()
            }
        };
        // Infinities and NaN give NaN (x - x); zeros keep their sign through the kernels.
        let finite =
            b.build_float_compare(FloatPredicate::OLT, self.abs(x)?, self.c(f64::INFINITY), "")?;
        let nan = b.build_float_sub(x, x, "")?;
        Ok(b.build_select(finite, y, nan, "")?.into_float_value())
    }

    /// Whether the integer `n` is odd.
    fn is_odd(&self, n: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let b = self.b;
        let low_bit = b.build_and(n, self.i(1), "")?;
        Ok(b.build_int_compare(IntPredicate::NE, low_bit, self.i(0), "")?)
    }

    /// `x = n pi/2 + y0 + y1` with `|y0 + y1|` at most about pi/4, for finite `x`.
    fn reduce_half_pi(&self, x: Fv<'ctx>) -> R<Reduced<'ctx>> {
        let b = self.b;
        let (n_medium, m0, m1) = self.reduce_medium(x)?;
        let (n_large, l0, l1) = self.reduce_large(x)?;
        let large =
            b.build_float_compare(FloatPredicate::OGE, self.abs(x)?, self.c(MEDIUM_LIMIT), "")?;
        let n = b
            .build_select(large, n_large, n_medium, "")?
            .into_int_value();
        let y0 = b.build_select(large, l0, m0, "")?.into_float_value();
        let y1 = b.build_select(large, l1, m1, "")?.into_float_value();
        Ok((n, y0, y1))
    }

    /// Cody and Waite's reduction with pi/2 in three 33-bit pieces: `n` below 2^20 times
    /// each piece is exact, and the rounding of each difference is carried in `w`.
    fn reduce_medium(&self, x: Fv<'ctx>) -> R<Reduced<'ctx>> {
        let b = self.b;
        let (nf, n) =
            self.nearest_int(b.build_float_mul(x, self.c(std::f64::consts::FRAC_2_PI), "")?)?;
        let mul = |v: f64| b.build_float_mul(nf, self.c(v), "");
        let mut r = b.build_float_sub(x, mul(PIO2_1)?, "")?;
        let mut w = mul(PIO2_1T)?;
        for (piece, tail) in [(PIO2_2, PIO2_2T), (PIO2_3, PIO2_3T)] {
            let t = r;
            let step = mul(piece)?;
            r = b.build_float_sub(t, step, "")?;
            // w = n tail - ((t - r) - n piece)
            let lost = b.build_float_sub(b.build_float_sub(t, r, "")?, step, "")?;
            w = b.build_float_sub(mul(tail)?, lost, "")?;
        }
        let y0 = b.build_float_sub(r, w, "")?;
        let y1 = b.build_float_sub(b.build_float_sub(r, y0, "")?, w, "")?;
        Ok((n, y0, y1))
    }

    /// Payne and Hanek's reduction: `|x| = M 2^E` (`M` of 53 bits), `M` times the 192 bits
    /// of 2/pi from weight `2^(1-E)` on (the bits before them make multiples of 4), as
    /// fixed point with two integer bits and 126 fraction bits; the nearest integer is the
    /// quadrant, the fraction (at least 2^-61 for any double) times pi/2 the remainder.
    fn reduce_large(&self, x: Fv<'ctx>) -> R<Reduced<'ctx>> {
        let b = self.b;
        let i64t = self.lib.ctx.i64_type();
        let i128t = self.lib.ctx.i128_type();
        let wide = |v: u128| i128t.const_int_arbitrary_precision(&[v as u64, (v >> 64) as u64]);
        let bits = b.build_bit_cast(self.abs(x)?, i64t, "")?.into_int_value();
        let e = b.build_and(
            b.build_right_shift(bits, self.i(52), false, "")?,
            self.i(0x7ff),
            "",
        )?;
        let m = b.build_or(
            b.build_and(bits, self.i((1 << 52) - 1), "")?,
            self.i(1 << 52),
            "",
        )?;
        // x = M 2^E with E = e - 1075; the window starts at bit E - 2 of the fraction, bit
        // E + 62 of the table (its first word is the zero integer part), clamped for the
        // arguments this path does not serve.
        let start = b.build_int_sub(e, self.i(1075 - 62), "")?;
        let low = b.build_int_compare(IntPredicate::SLT, start, self.i(0), "")?;
        let start = b.build_select(low, self.i(0), start, "")?.into_int_value();
        let word = b.build_right_shift(start, self.i(6), false, "")?;
        let shift = b.build_and(start, self.i(63), "")?;
        let table = self.two_over_pi();
        let load = |k: u64| -> R<IntValue<'ctx>> {
            let at = b.build_int_add(word, self.i(k as i64), "")?;
            // SAFETY (of the IR): `word` is at most 1033 / 64 = 16 and the table has 23
            // words, so `word + 3` is inside it.
            let ptr = unsafe { b.build_in_bounds_gep(table, &[i64t.const_zero(), at], "")? };
            Ok(b.build_load(ptr, "")?.into_int_value())
        };
        let t = [load(0)?, load(1)?, load(2)?, load(3)?];
        let mut window = Vec::new();
        for k in 0..3 {
            window.push(self.funnel_left(t[k], t[k + 1], shift)?);
        }
        let m128 = b.build_int_z_extend(m, i128t, "")?;
        let product = |w: IntValue<'ctx>| -> R<IntValue<'ctx>> {
            Ok(b.build_int_mul(m128, b.build_int_z_extend(w, i128t, "")?, "")?)
        };
        // (M W) >> 64 modulo 2^128, W = w0 2^128 + w1 2^64 + w2.
        let high = b.build_left_shift(product(window[0])?, wide(64), "")?;
        let low_part = b.build_right_shift(product(window[2])?, wide(64), false, "")?;
        let r = b.build_int_add(
            b.build_int_add(high, product(window[1])?, "")?,
            low_part,
            "",
        )?;
        // Round to the nearest quadrant: the top two bits after adding one half.
        let rounded = b.build_int_add(r, wide(1 << 125), "")?;
        let n = b.build_int_truncate(
            b.build_right_shift(rounded, wide(126), false, "")?,
            i64t,
            "",
        )?;
        let frac = b.build_int_sub(
            b.build_and(rounded, wide((1 << 126) - 1), "")?,
            wide(1 << 125),
            "",
        )?;
        // |frac| as a double-double: normalised, the top 53 bits and the next 64.
        let negative = b.build_int_compare(IntPredicate::SLT, frac, wide(0), "")?;
        let magnitude = b
            .build_select(negative, b.build_int_neg(frac, "")?, frac, "")?
            .into_int_value();
        let lz = self.leading_zeros_128(magnitude)?;
        let lz = b.build_select(
            b.build_int_compare(IntPredicate::UGT, lz, wide(127), "")?,
            wide(127),
            lz,
            "",
        )?;
        let normal = b.build_left_shift(magnitude, lz.into_int_value(), "")?;
        let top =
            b.build_int_truncate(b.build_right_shift(normal, wide(64), false, "")?, i64t, "")?;
        let bottom = b.build_int_truncate(normal, i64t, "")?;
        let hi_bits = b.build_and(top, self.i(!0x7ff), "")?;
        let lo_bits = b.build_or(
            b.build_left_shift(b.build_and(top, self.i(0x7ff), "")?, self.i(53), "")?,
            b.build_right_shift(bottom, self.i(11), false, "")?,
            "",
        )?;
        let f64t = self.lib.ctx.f64_type();
        let lz64 = b.build_int_truncate(lz.into_int_value(), i64t, "")?;
        // magnitude 2^-126 = (hi_bits 2^64 + lo_bits 2^11) 2^(-lz - 126)
        let k_hi = b.build_int_sub(self.i(-62), lz64, "")?;
        let k_lo = b.build_int_sub(self.i(-115), lz64, "")?;
        let hi = self.times_pow2(b.build_unsigned_int_to_float(hi_bits, f64t, "")?, k_hi)?;
        let lo = self.times_pow2(b.build_unsigned_int_to_float(lo_bits, f64t, "")?, k_lo)?;
        // (hi + lo) pi/2 as y0 + y1.
        let p = b.build_float_mul(hi, self.c(PIO2_HI), "")?;
        let err = self.fma(hi, self.c(PIO2_HI), b.build_float_neg(p, "")?)?;
        let tail = self.fma(hi, self.c(PIO2_LO), self.fma(lo, self.c(PIO2_HI), err)?)?;
        let y0 = b.build_float_add(p, tail, "")?;
        let y1 = b.build_float_sub(tail, b.build_float_sub(y0, p, "")?, "")?;
        // The signs: of the fraction, then of x.
        let flip = b.build_xor(
            negative,
            b.build_float_compare(FloatPredicate::OLT, x, self.c(0.0), "")?,
            "",
        )?;
        let y0 = b.build_select(flip, b.build_float_neg(y0, "")?, y0, "")?;
        let y1 = b.build_select(flip, b.build_float_neg(y1, "")?, y1, "")?;
        let x_negative = b.build_float_compare(FloatPredicate::OLT, x, self.c(0.0), "")?;
        let n = b.build_select(x_negative, b.build_int_neg(n, "")?, n, "")?;
        Ok((
            n.into_int_value(),
            y0.into_float_value(),
            y1.into_float_value(),
        ))
    }

    /// `(hi << s) | (lo >> (64 - s))` for `s` in [0, 63] (`hi` alone at 0).
    fn funnel_left(
        &self,
        hi: IntValue<'ctx>,
        lo: IntValue<'ctx>,
        s: IntValue<'ctx>,
    ) -> R<IntValue<'ctx>> {
        let b = self.b;
        let up = b.build_left_shift(hi, s, "")?;
        // lo >> (64 - s) as (lo >> 1) >> (63 - s): no shift by 64.
        let down = b.build_right_shift(
            b.build_right_shift(lo, self.i(1), false, "")?,
            b.build_int_sub(self.i(63), s, "")?,
            false,
            "",
        )?;
        Ok(b.build_or(up, down, "")?)
    }

    /// fdlibm's `__kernel_sin(x, y, 1)`.
    fn sin_kernel(&self, x: Fv<'ctx>, y: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let z = b.build_float_mul(x, x, "")?;
        let v = b.build_float_mul(z, x, "")?;
        let r = self.horner(z, &S[1..])?;
        // x - ((z (y/2 - v r) - y) - v S1)
        let inner = b.build_float_sub(
            b.build_float_mul(y, self.c(0.5), "")?,
            b.build_float_mul(v, r, "")?,
            "",
        )?;
        let t = b.build_float_sub(b.build_float_mul(z, inner, "")?, y, "")?;
        let t = b.build_float_sub(t, b.build_float_mul(v, self.c(S[0]), "")?, "")?;
        Ok(b.build_float_sub(x, t, "")?)
    }

    /// musl's `__cos(x, y)`: `w + (((1 - w) - z/2) + (z r - x y))`, `w = 1 - z/2`.
    fn cos_kernel(&self, x: Fv<'ctx>, y: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let z = b.build_float_mul(x, x, "")?;
        let r = b.build_float_mul(z, self.horner(z, &C)?, "")?;
        let hz = b.build_float_mul(z, self.c(0.5), "")?;
        let w = b.build_float_sub(self.c(1.0), hz, "")?;
        let lost = b.build_float_sub(b.build_float_sub(self.c(1.0), w, "")?, hz, "")?;
        let small = b.build_float_sub(
            b.build_float_mul(z, r, "")?,
            b.build_float_mul(x, y, "")?,
            "",
        )?;
        Ok(b.build_float_add(w, b.build_float_add(lost, small, "")?, "")?)
    }

    /// fdlibm's `__kernel_tan(x, y, k)`: `tan` for an even quadrant, `-1/tan` for an odd
    /// one; above [`TAN_FOLD`] it works on `pi/4 - x`.
    fn tan_kernel(&self, x: Fv<'ctx>, y: Fv<'ctx>, odd: IntValue<'ctx>) -> R<Fv<'ctx>> {
        const PIO4: f64 = std::f64::consts::FRAC_PI_4;
        const PIO4_LO: f64 = 3.061_616_997_868_383e-17;
        let b = self.b;
        let neg = |v: Fv<'ctx>| b.build_float_neg(v, "");
        let sel = |c, t: Fv<'ctx>, f: Fv<'ctx>| -> R<Fv<'ctx>> {
            Ok(b.build_select(c, t, f, "")?.into_float_value())
        };
        let x_negative = b.build_float_compare(FloatPredicate::OLT, x, self.c(0.0), "")?;
        let fold =
            b.build_float_compare(FloatPredicate::OGE, self.abs(x)?, self.c(TAN_FOLD), "")?;
        // Folded: x' = (pi/4 - |x|) + (pi/4 lo - y sign(x)), y' = 0.
        let (ax, ay) = (sel(x_negative, neg(x)?, x)?, sel(x_negative, neg(y)?, y)?);
        let folded = b.build_float_add(
            b.build_float_sub(self.c(PIO4), ax, "")?,
            b.build_float_sub(self.c(PIO4_LO), ay, "")?,
            "",
        )?;
        let x = sel(fold, folded, x)?;
        let y = sel(fold, self.c(0.0), y)?;
        let z = b.build_float_mul(x, x, "")?;
        let w = b.build_float_mul(z, z, "")?;
        let odd_terms: Vec<f64> = T.iter().skip(1).step_by(2).copied().collect();
        let even_terms: Vec<f64> = T.iter().skip(2).step_by(2).copied().collect();
        let r = self.horner(w, &odd_terms)?;
        let v = b.build_float_mul(z, self.horner(w, &even_terms)?, "")?;
        let s = b.build_float_mul(z, x, "")?;
        // r = y + z (s (r + v) + y) + T0 s
        let r = b.build_float_add(
            y,
            b.build_float_mul(
                z,
                b.build_float_add(
                    b.build_float_mul(s, b.build_float_add(r, v, "")?, "")?,
                    y,
                    "",
                )?,
                "",
            )?,
            "",
        )?;
        let r = b.build_float_add(r, b.build_float_mul(self.c(T[0]), s, "")?, "")?;
        let w = b.build_float_add(x, r, "")?;
        // Folded: sign(x) (k - 2 (x - (w^2 / (w + k) - r))), k = 1 or -1.
        let k = sel(odd, self.c(-1.0), self.c(1.0))?;
        let q = b.build_float_sub(self.square_over_sum(w, w, k)?, r, "")?;
        let f = b.build_float_sub(
            k,
            b.build_float_mul(self.c(2.0), b.build_float_sub(x, q, "")?, "")?,
            "",
        )?;
        let folded_result = sel(x_negative, neg(f)?, f)?;
        // Not folded, odd: -1/(x + r) with the low words cleared for a correction.
        let zh = self.high_word(w)?;
        let v = b.build_float_sub(r, b.build_float_sub(zh, x, "")?, "")?;
        let a = b.build_float_div(self.c(-1.0), w, "")?;
        let t = self.high_word(a)?;
        let s = b.build_float_add(self.c(1.0), b.build_float_mul(t, zh, "")?, "")?;
        let inverse = b.build_float_add(
            t,
            b.build_float_mul(
                a,
                b.build_float_add(s, b.build_float_mul(t, v, "")?, "")?,
                "",
            )?,
            "",
        )?;
        let plain = sel(odd, inverse, w)?;
        sel(fold, folded_result, plain)
    }
}
