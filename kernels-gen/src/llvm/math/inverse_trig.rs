//! `atan`, `atan2`, `asin` and `acos` after fdlibm (as in musl), straight-line: every
//! interval's formula is evaluated and selects keep the one for the argument.

use super::trig::{PIO2_HI, PIO2_LO};
use super::{Fv, Math, R};
use inkwell::FloatPredicate;

/// atan(0.5), atan(1), atan(1.5), atan(inf) rounded, and what each misses.
const ATAN_HI: [f64; 4] = [
    0.4636476090008061,
    std::f64::consts::FRAC_PI_4,
    0.982793723247329,
    std::f64::consts::FRAC_PI_2,
];
const ATAN_LO: [f64; 4] = [
    2.269_877_745_296_168_7e-17,
    3.061_616_997_868_383e-17,
    1.390_331_103_123_099_8e-17,
    6.123_233_995_736_766e-17,
];

/// atan(t) ~ t - t (aT0 t^2 + aT1 t^4 + ... + aT10 t^22) for |t| below 7/16.
const AT: [f64; 11] = [
    0.3333333333333293,
    -0.19999999999876483,
    0.14285714272503466,
    -0.11111110405462356,
    0.09090887133436507,
    -0.0769187620504483,
    0.06661073137387531,
    -0.058335701337905735,
    0.049768779946159324,
    -0.036531572744216916,
    0.016285820115365782,
];

/// (asin(x) - x) / x^3 ~ z P(z) / Q(z), z = x^2, on [0, 0.5].
const PS: [f64; 6] = [
    0.16666666666666666,
    -0.3255658186224009,
    0.20121253213486293,
    -0.04005553450067941,
    7.915_349_942_898_145e-4,
    3.479_331_075_960_212e-5,
];
const QS: [f64; 5] = [
    1.0,
    -2.403_394_911_734_414,
    2.020_945_760_233_505_7,
    -0.6882839716054533,
    0.07703815055590194,
];

impl<'ctx> Math<'_, 'ctx> {
    /// Arc tangent in f64 (fdlibm's five intervals of `|x|`).
    pub fn atan(&self, x: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let a = self.abs(x)?;
        let one = self.c(1.0);
        // The reduced argument and the interval (0..3; below 7/16 none).
        let t0 = b.build_float_div(
            b.build_float_sub(b.build_float_mul(a, self.c(2.0), "")?, one, "")?,
            b.build_float_add(a, self.c(2.0), "")?,
            "",
        )?;
        let t1 = b.build_float_div(
            b.build_float_sub(a, one, "")?,
            b.build_float_add(a, one, "")?,
            "",
        )?;
        let t2 = b.build_float_div(
            b.build_float_sub(a, self.c(1.5), "")?,
            self.fma(a, self.c(1.5), one)?,
            "",
        )?;
        let t3 = b.build_float_div(self.c(-1.0), a, "")?;
        let (in0, in1, in2) = (
            self.below(a, 11.0 / 16.0)?,
            self.below(a, 19.0 / 16.0)?,
            self.below(a, 39.0 / 16.0)?,
        );
        let direct = self.below(a, 7.0 / 16.0)?;
        let t = self.select_f(in2, t2, t3)?;
        let t = self.select_f(in1, t1, t)?;
        let t = self.select_f(in0, t0, t)?;
        let t = self.select_f(direct, a, t)?;
        let pick = |table: &[f64; 4]| -> R<Fv<'ctx>> {
            let v = self.select_f(in2, self.c(table[2]), self.c(table[3]))?;
            let v = self.select_f(in1, self.c(table[1]), v)?;
            self.select_f(in0, self.c(table[0]), v)
        };
        let (hi, lo) = (pick(&ATAN_HI)?, pick(&ATAN_LO)?);
        let z = b.build_float_mul(t, t, "")?;
        let w = b.build_float_mul(z, z, "")?;
        let even: Vec<f64> = AT.iter().step_by(2).copied().collect();
        let odd: Vec<f64> = AT.iter().skip(1).step_by(2).copied().collect();
        let s1 = b.build_float_mul(z, self.horner(w, &even)?, "")?;
        let s2 = b.build_float_mul(w, self.horner(w, &odd)?, "")?;
        let ts = b.build_float_mul(t, b.build_float_add(s1, s2, "")?, "")?;
        let near = b.build_float_sub(t, ts, "")?;
        // hi - ((t (s1 + s2) - lo) - t)
        let far = b.build_float_sub(
            hi,
            b.build_float_sub(b.build_float_sub(ts, lo, "")?, t, "")?,
            "",
        )?;
        let y = self.select_f(direct, near, far)?;
        // NaN stays NaN through the formulas; the sign is x's.
        self.copysign(y, x)
    }

    /// `atan2(y, x)` in f64: the angle of `(x, y)`, fdlibm's special values (signed zeros,
    /// infinities) included.
    pub fn atan2(&self, y: Fv<'ctx>, x: Fv<'ctx>) -> R<Fv<'ctx>> {
        const PI: f64 = std::f64::consts::PI;
        const PI_LO: f64 = 1.224_646_799_147_353_2e-16;
        let b = self.b;
        let (ax, ay) = (self.abs(x)?, self.abs(y)?);
        let x_negative = {
            let bits = b
                .build_bit_cast(x, self.lib.ctx.i64_type(), "")?
                .into_int_value();
            b.build_int_compare(inkwell::IntPredicate::SLT, bits, self.i(0), "")?
        };
        let z = self.atan(b.build_float_div(ay, ax, "")?)?;
        // x < 0 (or -0): pi - (z - pi lo).
        let behind = b.build_float_sub(self.c(PI), b.build_float_sub(z, self.c(PI_LO), "")?, "")?;
        let r = self.select_f(x_negative, behind, z)?;
        // y = 0 (x = 0 too): 0 or pi.
        let y_zero = b.build_float_compare(FloatPredicate::OEQ, y, self.c(0.0), "")?;
        let r = self.select_f(
            y_zero,
            self.select_f(x_negative, self.c(PI), self.c(0.0))?,
            r,
        )?;
        // Both infinite: pi/4 or 3 pi/4.
        let both_inf = b.build_and(self.is_inf(ax)?, self.is_inf(ay)?, "")?;
        let corner = self.select_f(x_negative, self.c(0.75 * PI), self.c(0.25 * PI))?;
        let r = self.select_f(both_inf, corner, r)?;
        let r = self.copysign(r, y)?;
        let nan = b.build_float_compare(FloatPredicate::UNO, x, y, "")?;
        self.select_f(nan, b.build_float_add(x, y, "")?, r)
    }

    /// fdlibm's `R(z) = z P(z) / Q(z)`.
    fn asin_ratio(&self, z: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let p = b.build_float_mul(z, self.horner(z, &PS)?, "")?;
        let q = self.horner(z, &QS)?;
        Ok(b.build_float_div(p, q, "")?)
    }

    /// `s = sqrt(z)` as `f + c`: `f` its high word (so `f * f` is exact), `c` the rest,
    /// `(z - f^2) / (s + f)`.
    fn split_root(&self, z: Fv<'ctx>, s: Fv<'ctx>) -> R<(Fv<'ctx>, Fv<'ctx>)> {
        let b = self.b;
        let f = self.high_word(s)?;
        let c = b.build_float_div(
            b.build_float_sub(z, b.build_float_mul(f, f, "")?, "")?,
            b.build_float_add(s, f, "")?,
            "",
        )?;
        Ok((f, c))
    }

    /// `v` with the low 32 bits of its pattern cleared (exact products of halves).
    pub(super) fn high_word(&self, v: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let bits = b
            .build_bit_cast(v, self.lib.ctx.i64_type(), "")?
            .into_int_value();
        let high = b.build_and(bits, self.i(!0xffff_ffff), "")?;
        Ok(b.build_bit_cast(high, self.lib.ctx.f64_type(), "")?
            .into_float_value())
    }

    /// Arc sine in f64 (NaN beyond [-1, 1]).
    pub fn asin(&self, x: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let a = self.abs(x)?;
        let small = self.below(a, 0.5)?;
        let near = b.build_float_add(
            a,
            b.build_float_mul(a, self.asin_ratio(b.build_float_mul(a, a, "")?)?, "")?,
            "",
        )?;
        // asin(a) = pi/2 - 2 asin(sqrt((1 - a)/2)).
        let z = b.build_float_mul(b.build_float_sub(self.c(1.0), a, "")?, self.c(0.5), "")?;
        let s = self.sqrt(z)?;
        let r = self.asin_ratio(z)?;
        let two = self.c(2.0);
        // Above 0.975: pio2_hi - (2 (s + s r) - pio2_lo).
        let steep = b.build_float_sub(
            self.c(PIO2_HI),
            b.build_float_sub(
                b.build_float_mul(two, self.fma(s, r, s)?, "")?,
                self.c(PIO2_LO),
                "",
            )?,
            "",
        )?;
        // Else with s = f + c, f the high word of s.
        let (f, c) = self.split_root(z, s)?;
        let pio4_hi = self.c(0.5 * PIO2_HI);
        let mid = b.build_float_sub(
            pio4_hi,
            b.build_float_sub(
                b.build_float_sub(
                    b.build_float_mul(b.build_float_mul(two, s, "")?, r, "")?,
                    b.build_float_sub(self.c(PIO2_LO), b.build_float_mul(two, c, "")?, "")?,
                    "",
                )?,
                b.build_float_sub(pio4_hi, b.build_float_mul(two, f, "")?, "")?,
                "",
            )?,
            "",
        )?;
        let far = self.pick(a, 0.975, mid, steep)?;
        let y = self.select_f(small, near, far)?;
        self.copysign(y, x)
    }

    /// Arc cosine in f64 (NaN beyond [-1, 1]).
    pub fn acos(&self, x: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let a = self.abs(x)?;
        let (one, half, two) = (self.c(1.0), self.c(0.5), self.c(2.0));
        // |x| < 0.5: pio2_hi - (x - (pio2_lo - x R(x^2))).
        let rx = self.asin_ratio(b.build_float_mul(x, x, "")?)?;
        let near = b.build_float_sub(
            self.c(PIO2_HI),
            b.build_float_sub(
                x,
                b.build_float_sub(self.c(PIO2_LO), b.build_float_mul(x, rx, "")?, "")?,
                "",
            )?,
            "",
        )?;
        // x < -0.5: 2 (pio2_hi - (s + (R(z) s - pio2_lo))), z = (1 + x)/2, s = sqrt(z).
        let z = b.build_float_mul(b.build_float_sub(one, a, "")?, half, "")?;
        let s = self.sqrt(z)?;
        let r = self.asin_ratio(z)?;
        let w = b.build_float_sub(b.build_float_mul(r, s, "")?, self.c(PIO2_LO), "")?;
        let left = b.build_float_mul(
            two,
            b.build_float_sub(self.c(PIO2_HI), b.build_float_add(s, w, "")?, "")?,
            "",
        )?;
        // x > 0.5: 2 (f + (R(z) s + c)), s = f + c with f its high word.
        let (f, c) = self.split_root(z, s)?;
        let right = b.build_float_mul(
            two,
            b.build_float_add(
                f,
                b.build_float_add(b.build_float_mul(r, s, "")?, c, "")?,
                "",
            )?,
            "",
        )?;
        // At 1, c is 0/0: the result is 0.
        let at_one = b.build_float_compare(FloatPredicate::OEQ, x, one, "")?;
        let right = self.select_f(at_one, self.c(0.0), right)?;
        let x_negative = self.below(x, 0.0)?;
        let far = self.select_f(x_negative, left, right)?;
        self.pick(a, 0.5, near, far)
    }
}
