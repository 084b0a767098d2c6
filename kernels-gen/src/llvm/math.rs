//! Transcendental functions emitted inline as plain IEEE arithmetic.
//!
//! The NVPTX target has no `exp`/`log` instructions in double precision and no libm, and
//! shipping NVIDIA's libdevice would tie the build to a CUDA installation. These
//! straight-line versions (range reduction plus polynomial, no branches) are used on both
//! targets, so the host JIT runs exactly the arithmetic the GPU runs. Accuracy: within one
//! ulp of Rust's std in f64 over the whole range, including subnormal inputs and results
//! (`exp`, `exp2`, `ln`, `log2`, `log10`, `hypot`, `cbrt`, `sin`, `cos`, `asin`, `acos`,
//! `atan`, `atan2`; two for `tan`, `sinh`, `cosh`, `tanh` and their inverses; measured by
//! `tests/tests/math.rs` and `tests/tests/trig.rs`, [`Accuracy::Double`]);
//! where the result is rounded to f32 the series are shorter, with errors near 1e-10
//! relative, far below an f32 ulp ([`Accuracy::Single`]). Polynomials are evaluated with
//! fused multiply-adds.

mod hyperbolic;
mod inverse_hyperbolic;
mod inverse_trig;
mod trig;

pub(in crate::llvm) use trig::Trig;

use super::LlvmError;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FloatValue, FunctionValue, GlobalValue, IntValue,
    PointerValue,
};
use inkwell::FloatPredicate;

type R<T> = Result<T, LlvmError>;

/// A float value of the IR being built: an f64 in every function here but
/// [`MathLib::copysign`], which takes f32 as well.
type Fv<'ctx> = FloatValue<'ctx>;

/// ln 2 split so that `k * LN2_HI` is exact for |k| < 2^11 (fdlibm's constants).
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// How accurate a result must be: what it is rounded to in the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Accuracy {
    /// An f64 result: series to the last bit of f64.
    Double,
    /// A result rounded to f32: series to about 1e-10 relative.
    Single,
}

impl Accuracy {
    /// How far the Taylor series of `e^r`, `|r| <= ln2/2`, is taken: to `r^13/13!` for an
    /// f64 result, to `r^8/8!` for one rounded to f32 (the remainder below 2.1e-10
    /// relative), and one term further where the series starts at `r^2`.
    fn exp_terms(self) -> u32 {
        match self {
            Accuracy::Double => 14,
            Accuracy::Single => 9,
        }
    }
}

/// `1/n!` for `n` in `first..=last`, each from the one before by one division: the
/// coefficients of the Taylor series of `e^x`.
fn inverse_factorials(first: u32, last: u32) -> Vec<f64> {
    let mut c = 1.0f64;
    let mut coeffs = Vec::new();
    for n in 0..=last {
        if n > 0 {
            c /= n as f64;
        }
        if n >= first {
            coeffs.push(c);
        }
    }
    coeffs
}

/// The declarations the math functions of one module call: intrinsics and the table of
/// 2/pi.
pub(super) struct MathLib<'ctx> {
    ctx: &'ctx Context,
    floor: Option<FunctionValue<'ctx>>,
    fptosi_sat: Option<FunctionValue<'ctx>>,
    fma: Option<FunctionValue<'ctx>>,
    sqrt: Option<FunctionValue<'ctx>>,
    ctlz128: Option<FunctionValue<'ctx>>,
    /// The bits of 2/pi for the reduction of large arguments ([`trig`]).
    two_over_pi: GlobalValue<'ctx>,
}

impl<'ctx> MathLib<'ctx> {
    /// Declares what the math functions call in `module`.
    pub fn new(ctx: &'ctx Context, module: &Module<'ctx>) -> Self {
        let f64t = ctx.f64_type().into();
        let i64t = ctx.i64_type().into();
        let words = ctx.i64_type().array_type(trig::TWO_OVER_PI.len() as u32);
        // In the default address space: NVPTX moves such globals to its global space.
        let two_over_pi = module.add_global(words, None, "stencil_two_over_pi");
        let values: Vec<_> = trig::TWO_OVER_PI
            .iter()
            .map(|&w| ctx.i64_type().const_int(w, false))
            .collect();
        two_over_pi.set_initializer(&ctx.i64_type().const_array(&values));
        two_over_pi.set_constant(true);
        two_over_pi.set_linkage(inkwell::module::Linkage::Private);
        MathLib {
            ctx,
            floor: Intrinsic::find("llvm.floor").and_then(|i| i.get_declaration(module, &[f64t])),
            fptosi_sat: Intrinsic::find("llvm.fptosi.sat")
                .and_then(|i| i.get_declaration(module, &[i64t, f64t])),
            fma: Intrinsic::find("llvm.fma").and_then(|i| i.get_declaration(module, &[f64t])),
            sqrt: Intrinsic::find("llvm.sqrt").and_then(|i| i.get_declaration(module, &[f64t])),
            ctlz128: Intrinsic::find("llvm.ctlz")
                .and_then(|i| i.get_declaration(module, &[ctx.i128_type().into()])),
            two_over_pi,
        }
    }

    /// The math functions emitted by `b`, at its position, into this library's module.
    pub fn at<'a>(&'a self, b: &'a Builder<'ctx>) -> Math<'a, 'ctx> {
        Math { lib: self, b }
    }
}

/// Emits the math functions through one builder.
pub(super) struct Math<'a, 'ctx> {
    /// The module's declarations.
    lib: &'a MathLib<'ctx>,
    /// Where the code goes.
    b: &'a Builder<'ctx>,
}

impl<'ctx> Math<'_, 'ctx> {
    fn c(&self, v: f64) -> Fv<'ctx> {
        self.lib.ctx.f64_type().const_float(v)
    }

    fn i(&self, v: i64) -> IntValue<'ctx> {
        self.lib.ctx.i64_type().const_int(v as u64, true)
    }

    fn missing(what: &str) -> LlvmError {
        LlvmError::Invalid {
            kernel: String::new(),
            message: format!("intrinsic {what} is not available"),
        }
    }

    /// A call of the intrinsic `f`, declared as `name` (an error where it is not available).
    fn intrinsic(
        &self,
        f: Option<FunctionValue<'ctx>>,
        name: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> R<BasicValueEnum<'ctx>> {
        let f = f.ok_or_else(|| Self::missing(name))?;
        self.b
            .build_call(f, args, "")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| Self::missing(name))
    }

    /// The table of the bits of 2/pi.
    fn two_over_pi(&self) -> PointerValue<'ctx> {
        self.lib.two_over_pi.as_pointer_value()
    }

    /// `x` where it is NaN, else `y`: a function's NaN passes through.
    fn nan_or(&self, x: Fv<'ctx>, y: Fv<'ctx>) -> R<Fv<'ctx>> {
        let nan = self.b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
        self.select_f(nan, x, y)
    }

    /// `t` where `c`, else `f`.
    fn select_f(&self, c: IntValue<'ctx>, t: Fv<'ctx>, f: Fv<'ctx>) -> R<Fv<'ctx>> {
        Ok(self.b.build_select(c, t, f, "")?.into_float_value())
    }

    /// `t` where `x pred v`, else `f` (the comparison emitted after both values).
    fn select_if(
        &self,
        pred: FloatPredicate,
        x: Fv<'ctx>,
        v: f64,
        t: Fv<'ctx>,
        f: Fv<'ctx>,
    ) -> R<Fv<'ctx>> {
        let c = self.b.build_float_compare(pred, x, self.c(v), "")?;
        self.select_f(c, t, f)
    }

    /// `below` where `v < at`, else `above` (NaN `v` takes `above`).
    fn pick(&self, v: Fv<'ctx>, at: f64, below: Fv<'ctx>, above: Fv<'ctx>) -> R<Fv<'ctx>> {
        self.select_if(FloatPredicate::OLT, v, at, below, above)
    }

    /// Whether `v` is +infinity.
    fn is_inf(&self, v: Fv<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self
            .b
            .build_float_compare(FloatPredicate::OEQ, v, self.c(f64::INFINITY), "")?)
    }

    /// `y` with the sign of `x`, or `x` where it is NaN: how an odd function's result
    /// is finished.
    fn odd_result(&self, x: Fv<'ctx>, y: Fv<'ctx>) -> R<Fv<'ctx>> {
        let y = self.copysign(y, x)?;
        self.nan_or(x, y)
    }

    /// `t^2 / (u + v)`.
    fn square_over_sum(&self, t: Fv<'ctx>, u: Fv<'ctx>, v: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let square = b.build_float_mul(t, t, "")?;
        Ok(b.build_float_div(square, b.build_float_add(u, v, "")?, "")?)
    }

    /// Whether `x < v`.
    fn below(&self, x: Fv<'ctx>, v: f64) -> R<IntValue<'ctx>> {
        Ok(self
            .b
            .build_float_compare(FloatPredicate::OLT, x, self.c(v), "")?)
    }

    /// The leading zero bits of a 128-bit integer (128 for zero).
    fn leading_zeros_128(&self, v: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let no_poison = self.lib.ctx.bool_type().const_zero();
        let args = [v.into(), no_poison.into()];
        Ok(self
            .intrinsic(self.lib.ctlz128, "llvm.ctlz", &args)?
            .into_int_value())
    }

    /// Horner evaluation of `sum coeffs[i] * x^i`, one fused multiply-add per term.
    fn horner(&self, x: Fv<'ctx>, coeffs: &[f64]) -> R<Fv<'ctx>> {
        let mut acc = self.c(*coeffs.last().expect("non-empty"));
        for &c in coeffs.iter().rev().skip(1) {
            acc = self.fma(acc, x, self.c(c))?;
        }
        Ok(acc)
    }

    /// `x (hi + lo)` for a constant split in two doubles, the product of `hi` kept to
    /// twice the precision with a fused multiply-add.
    fn times_split(&self, x: Fv<'ctx>, hi: f64, lo: f64) -> R<Fv<'ctx>> {
        let b = self.b;
        let t = b.build_float_mul(x, self.c(hi), "")?;
        let err = self.fma(x, self.c(hi), b.build_float_neg(t, "")?)?;
        let tail = self.fma(x, self.c(lo), err)?;
        Ok(b.build_float_add(t, tail, "")?)
    }

    /// `2^k` for `k` in [-1022, 1023] built from its bits.
    fn pow2(&self, k: IntValue<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let biased = b.build_int_add(k, self.i(1023), "")?;
        let bits = b.build_left_shift(biased, self.i(52), "")?;
        Ok(b.build_bit_cast(bits, self.lib.ctx.f64_type(), "")?
            .into_float_value())
    }

    /// `e^x` in f64.
    pub fn exp(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        // Clamp so that k stays in range; results saturate to 0 and infinity naturally.
        let (r, k) = self.reduce_by_ln2(x, -746.0, 710.0)?;
        // Taylor series of e^r for |r| <= ln2/2.
        let coeffs = inverse_factorials(0, accuracy.exp_terms() - 1);
        let p = self.horner(r, &coeffs)?;
        let y = self.times_pow2(p, k)?;
        self.nan_or(x, y)
    }

    /// The integer nearest `v` (halves up), as a float and as an `i64`.
    fn nearest_int(&self, v: Fv<'ctx>) -> R<(Fv<'ctx>, IntValue<'ctx>)> {
        let half_up = self.b.build_float_add(v, self.c(0.5), "")?;
        let kf = self
            .intrinsic(self.lib.floor, "llvm.floor", &[half_up.into()])?
            .into_float_value();
        let k = self
            .intrinsic(self.lib.fptosi_sat, "llvm.fptosi.sat", &[kf.into()])?
            .into_int_value();
        Ok((kf, k))
    }

    /// `x` clamped to `[lo, hi]` (NaN becomes `hi`; callers restore it) as `k ln2 + r`:
    /// `k` the integer nearest `x / ln2` and `r = x - k ln2` (`|r| <= ln2/2`), with `ln2`
    /// in two parts so that `k` times the first is exact.
    fn reduce_by_ln2(&self, x: Fv<'ctx>, lo: f64, hi: f64) -> R<(Fv<'ctx>, IntValue<'ctx>)> {
        let b = self.b;
        let xc = self.clamp(x, lo, hi)?;
        let (kf, k) =
            self.nearest_int(b.build_float_mul(xc, self.c(std::f64::consts::LOG2_E), "")?)?;
        let r = b.build_float_sub(xc, b.build_float_mul(kf, self.c(LN2_HI), "")?, "")?;
        let r = b.build_float_sub(r, b.build_float_mul(kf, self.c(LN2_LO), "")?, "")?;
        Ok((r, k))
    }

    /// `y 2^k` as two factors, so that any `k` in [-2044, 2046] stays in the exponent's
    /// range.
    fn times_pow2(&self, y: Fv<'ctx>, k: IntValue<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let k1 = b.build_right_shift(k, self.i(1), true, "")?;
        let k2 = b.build_int_sub(k, k1, "")?;
        let y = b.build_float_mul(y, self.pow2(k1)?, "")?;
        Ok(b.build_float_mul(y, self.pow2(k2)?, "")?)
    }

    /// Natural logarithm in f64.
    pub fn ln(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let (ef, lnm) = self.log_parts(x, accuracy)?;
        let lo = b.build_float_add(lnm, b.build_float_mul(ef, self.c(LN2_LO), "")?, "")?;
        let y = b.build_float_add(b.build_float_mul(ef, self.c(LN2_HI), "")?, lo, "")?;
        self.log_specials(x, y)
    }

    /// Base-2 logarithm in f64: `e + ln(m) log2(e)`, the integer part exact.
    pub fn log2(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        const LOG2_E_LO: f64 = 2.035_527_374_093_103_3e-17;
        let (ef, lnm) = self.log_parts(x, accuracy)?;
        let frac = self.times_split(lnm, std::f64::consts::LOG2_E, LOG2_E_LO)?;
        let y = self.b.build_float_add(ef, frac, "")?;
        self.log_specials(x, y)
    }

    /// Base-10 logarithm in f64: `e log10(2) + ln(m) log10(e)`, `log10(2)` split so that
    /// `e` times its high part is exact (fdlibm's constants).
    pub fn log10(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        const LOG10_2_HI: f64 = 3.010_299_956_636_117_7e-1;
        const LOG10_2_LO: f64 = 3.694_239_077_158_931e-13;
        const LOG10_E_LO: f64 = 1.098_319_650_216_765e-17;
        let b = self.b;
        let (ef, lnm) = self.log_parts(x, accuracy)?;
        let lo = b.build_float_add(
            b.build_float_mul(ef, self.c(LOG10_2_LO), "")?,
            self.times_split(lnm, std::f64::consts::LOG10_E, LOG10_E_LO)?,
            "",
        )?;
        let y = b.build_float_add(b.build_float_mul(ef, self.c(LOG10_2_HI), "")?, lo, "")?;
        self.log_specials(x, y)
    }

    /// `x = 2^e m` with `m` in [sqrt(2)/2, sqrt(2)] (subnormals scaled first): `e` as an
    /// f64 and `ln m`, what every logarithm is made of.
    fn log_parts(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<(Fv<'ctx>, Fv<'ctx>)> {
        let b = self.b;
        let f64t = self.lib.ctx.f64_type();
        // Scale subnormals into the normal range.
        let tiny = b.build_float_compare(FloatPredicate::OLT, x, self.c(f64::MIN_POSITIVE), "")?;
        let scaled = b.build_float_mul(x, self.c(2f64.powi(54)), "")?;
        let xs = b.build_select(tiny, scaled, x, "")?.into_float_value();
        let eadj = b
            .build_select(tiny, self.i(-54), self.i(0), "")?
            .into_int_value();
        let bits = b
            .build_bit_cast(xs, self.lib.ctx.i64_type(), "")?
            .into_int_value();
        let e = b.build_right_shift(bits, self.i(52), false, "")?;
        let e = b.build_and(e, self.i(0x7ff), "")?;
        let e = b.build_int_add(b.build_int_sub(e, self.i(1023), "")?, eadj, "")?;
        let mbits = b.build_and(bits, self.i(0x000f_ffff_ffff_ffff), "")?;
        let mbits = b.build_or(mbits, self.i(0x3ff0_0000_0000_0000), "")?;
        let m = b.build_bit_cast(mbits, f64t, "")?.into_float_value();
        // m in [sqrt(2)/2, sqrt(2)].
        let big =
            b.build_float_compare(FloatPredicate::OGT, m, self.c(std::f64::consts::SQRT_2), "")?;
        let m = b
            .build_select(big, b.build_float_mul(m, self.c(0.5), "")?, m, "")?
            .into_float_value();
        let e = b
            .build_select(big, b.build_int_add(e, self.i(1), "")?, e, "")?
            .into_int_value();
        // ln(m) = 2 atanh(s), s = (m-1)/(m+1) = f/(2+f), |s| <= 0.1716: 2s + s R with
        // R = sum 2 z^n / (2n+1), z = s^2, series to s^25 (to s^13 for a result rounded
        // to f32: the remainder is below 5e-13). Written as fdlibm does,
        // f - (f^2/2 - s (f^2/2 + R)): the exact f carries the result, the rounding
        // errors stay in the small correction.
        let f = b.build_float_sub(m, self.c(1.0), "")?;
        let s = b.build_float_div(f, b.build_float_add(f, self.c(2.0), "")?, "")?;
        let z = b.build_float_mul(s, s, "")?;
        let terms = match accuracy {
            Accuracy::Double => 13,
            Accuracy::Single => 7,
        };
        let coeffs: Vec<f64> = (1..terms).map(|n| 2.0 / (2 * n + 1) as f64).collect();
        let r = b.build_float_mul(z, self.horner(z, &coeffs)?, "")?;
        let hfsq = b.build_float_mul(b.build_float_mul(f, f, "")?, self.c(0.5), "")?;
        let correction = b.build_float_sub(
            hfsq,
            b.build_float_mul(s, b.build_float_add(hfsq, r, "")?, "")?,
            "",
        )?;
        let lnm = b.build_float_sub(f, correction, "")?;
        let ef = b.build_signed_int_to_float(e, f64t, "")?;
        Ok((ef, lnm))
    }

    /// A logarithm `y` of `x` with the special values: +inf at +inf, -inf at 0, NaN below
    /// 0 and at NaN.
    fn log_specials(&self, x: Fv<'ctx>, y: Fv<'ctx>) -> R<Fv<'ctx>> {
        let y = self.select_if(FloatPredicate::OEQ, x, f64::INFINITY, x, y)?;
        let y = self.select_if(FloatPredicate::OEQ, x, 0.0, self.c(f64::NEG_INFINITY), y)?;
        self.select_if(FloatPredicate::ULT, x, 0.0, self.c(f64::NAN), y)
    }

    /// `2^x` in f64: `2^k e^(r ln 2)` with `k` the nearest integer and `|r| <= 1/2` exact.
    pub fn exp2(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        // Clamp so that k stays in range; results saturate to 0 and infinity naturally.
        let xc = self.clamp(x, -1080.0, 1030.0)?;
        let (kf, k) = self.nearest_int(xc)?;
        let r = b.build_float_sub(xc, kf, "")?;
        let p = self.exp(
            b.build_float_mul(r, self.c(std::f64::consts::LN_2), "")?,
            accuracy,
        )?;
        let y = self.times_pow2(p, k)?;
        self.nan_or(x, y)
    }

    /// `|x|` through the bit pattern.
    fn abs(&self, x: Fv<'ctx>) -> R<Fv<'ctx>> {
        self.copysign(x, self.c(1.0))
    }

    /// `x` clamped to `[lo, hi]` (NaN becomes `hi`; callers restore it).
    fn clamp(&self, x: Fv<'ctx>, lo: f64, hi: f64) -> R<Fv<'ctx>> {
        let b = self.b;
        let below = b.build_float_compare(FloatPredicate::OLT, x, self.c(lo), "")?;
        let x = b.build_select(below, self.c(lo), x, "")?.into_float_value();
        let above = b.build_float_compare(FloatPredicate::OLT, x, self.c(hi), "")?;
        Ok(b.build_select(above, x, self.c(hi), "")?.into_float_value())
    }

    /// `x y + z` with one rounding.
    fn fma(&self, x: Fv<'ctx>, y: Fv<'ctx>, z: Fv<'ctx>) -> R<Fv<'ctx>> {
        let args = [x.into(), y.into(), z.into()];
        Ok(self
            .intrinsic(self.lib.fma, "llvm.fma", &args)?
            .into_float_value())
    }

    /// Cube root in f64: a first guess from the bit pattern (the exponent divided by 3,
    /// within 7%), four Newton steps `y - (y^3 - a) / (3 y^2)` (relative error about
    /// e^2 each: below 1e-19 after the fourth), the residual taken with a fused
    /// multiply-add; subnormals scaled by 2^54 first, the sign of `x` kept.
    pub fn cbrt(&self, x: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let i64t = self.lib.ctx.i64_type();
        let f64t = self.lib.ctx.f64_type();
        let a = self.abs(x)?;
        let tiny = b.build_float_compare(FloatPredicate::OLT, a, self.c(f64::MIN_POSITIVE), "")?;
        let scaled = b.build_float_mul(a, self.c(2f64.powi(54)), "")?;
        let a = b.build_select(tiny, scaled, a, "")?.into_float_value();
        let bits = b.build_bit_cast(a, i64t, "")?.into_int_value();
        let third = b.build_int_unsigned_div(bits, self.i(3), "")?;
        let guess = b.build_int_add(third, self.i(682 << 52), "")?;
        let mut y = b.build_bit_cast(guess, f64t, "")?.into_float_value();
        for _ in 0..4 {
            let y2 = b.build_float_mul(y, y, "")?;
            let residual = self.fma(y2, y, b.build_float_neg(a, "")?)?;
            let step = b.build_float_div(residual, b.build_float_mul(y2, self.c(3.0), "")?, "")?;
            y = b.build_float_sub(y, step, "")?;
        }
        // Undo the scaling: (2^54)^(1/3) = 2^18.
        let unscaled = b.build_float_mul(y, self.c(2f64.powi(-18)), "")?;
        let y = b.build_select(tiny, unscaled, y, "")?.into_float_value();
        // Zero, infinity and NaN are their own cube roots.
        let zero = b.build_float_compare(FloatPredicate::OEQ, x, self.c(0.0), "")?;
        let inf = self.is_inf(self.abs(x)?)?;
        let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
        let own = b.build_or(b.build_or(zero, inf, "")?, nan, "")?;
        let y = self.copysign(y, x)?;
        Ok(b.build_select(own, x, y, "")?.into_float_value())
    }

    /// The correctly rounded square root.
    fn sqrt(&self, x: Fv<'ctx>) -> R<Fv<'ctx>> {
        let sqrt = self.intrinsic(self.lib.sqrt, "llvm.sqrt", &[x.into()])?;
        Ok(sqrt.into_float_value())
    }

    /// `sqrt(x^2 + y^2)` in f64. For a result rounded to f32 (inputs from f32) the sum
    /// cannot overflow or underflow in f64 and is taken directly; in f64 both are scaled
    /// by a power of two that brings the larger into [1, 2) first, and the result back.
    /// Infinite if either is, else NaN if either is.
    pub fn hypot(&self, x: Fv<'ctx>, y: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let root = |v: Fv<'ctx>| self.sqrt(v);
        let (ax, ay) = (self.abs(x)?, self.abs(y)?);
        let y_larger = b.build_float_compare(FloatPredicate::OGT, ay, ax, "")?;
        let big = b.build_select(y_larger, ay, ax, "")?.into_float_value();
        let small = b.build_select(y_larger, ax, ay, "")?.into_float_value();
        let r = match accuracy {
            Accuracy::Single => root(self.fma(big, big, b.build_float_mul(small, small, "")?)?)?,
            Accuracy::Double => {
                // The larger's exponent, at least that of the smallest normal number.
                let bits = b
                    .build_bit_cast(big, self.lib.ctx.i64_type(), "")?
                    .into_int_value();
                let e = b.build_right_shift(bits, self.i(52), false, "")?;
                let e = b.build_int_sub(b.build_and(e, self.i(0x7ff), "")?, self.i(1023), "")?;
                let low = b.build_int_compare(inkwell::IntPredicate::SLT, e, self.i(-1022), "")?;
                let e = b.build_select(low, self.i(-1022), e, "")?.into_int_value();
                let minus_e = b.build_int_neg(e, "")?;
                let bs = self.times_pow2(big, minus_e)?;
                let ss = self.times_pow2(small, minus_e)?;
                let h = root(self.fma(bs, bs, b.build_float_mul(ss, ss, "")?)?)?;
                self.times_pow2(h, e)?
            }
        };
        let any_inf = b.build_or(self.is_inf(ax)?, self.is_inf(ay)?, "")?;
        self.select_f(any_inf, self.c(f64::INFINITY), r)
    }

    /// `x^y` for `x >= 0` (NaN for negative `x`), as `exp(y ln x)` with exact special cases.
    pub fn pow(&self, x: Fv<'ctx>, y: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let l = self.ln(x, accuracy)?;
        let r = self.exp(b.build_float_mul(y, l, "")?, accuracy)?;
        let y0 = b.build_float_compare(FloatPredicate::OEQ, y, self.c(0.0), "")?;
        let x1 = b.build_float_compare(FloatPredicate::OEQ, x, self.c(1.0), "")?;
        let one = b.build_or(y0, x1, "")?;
        Ok(b.build_select(one, self.c(1.0), r, "")?.into_float_value())
    }

    /// Magnitude of `x` with the sign of `y`, through the bit patterns.
    pub fn copysign(&self, x: Fv<'ctx>, y: Fv<'ctx>) -> R<Fv<'ctx>> {
        let b = self.b;
        let ft = x.get_type();
        // (integer type, sign bit, magnitude mask) of the float's bit pattern
        let (it, sign, magnitude) = if ft == self.lib.ctx.f32_type() {
            (self.lib.ctx.i32_type(), 1u64 << 31, (1u64 << 31) - 1)
        } else {
            (self.lib.ctx.i64_type(), 1u64 << 63, (1u64 << 63) - 1)
        };
        let xb = b.build_bit_cast(x, it, "")?.into_int_value();
        let yb = b.build_bit_cast(y, it, "")?.into_int_value();
        let mag = b.build_and(xb, it.const_int(magnitude, false), "")?;
        let sgn = b.build_and(yb, it.const_int(sign, false), "")?;
        let r = b.build_or(mag, sgn, "")?;
        Ok(b.build_bit_cast(r, ft, "")?.into_float_value())
    }
}
