//! The inverse hyperbolic functions, as fdlibm computes them, over `ln(1 + x)` kept
//! accurate near 0.

use super::{Accuracy, MathLib, R};
use inkwell::builder::Builder;
use inkwell::values::FloatValue;
use inkwell::FloatPredicate;

impl<'ctx> MathLib<'ctx> {
    /// `ln(1 + x)` in f64: `ln(u) + (x - (u - 1)) / u` with `u = 1 + x` rounded, the
    /// second term the first-order correction for what the rounding lost.
    fn ln_1p(
        &self,
        b: &Builder<'ctx>,
        x: FloatValue<'ctx>,
        accuracy: Accuracy,
    ) -> R<FloatValue<'ctx>> {
        let u = b.build_float_add(x, self.c(1.0), "")?;
        let lost = b.build_float_sub(x, b.build_float_sub(u, self.c(1.0), "")?, "")?;
        let y = b.build_float_add(
            self.ln(b, u, accuracy)?,
            b.build_float_div(lost, u, "")?,
            "",
        )?;
        // Where 1 + x rounds to 1, ln(1 + x) is x to the last bit; at infinity the
        // correction is NaN and the logarithm alone right (NaN comes out of `ln`).
        let one = b.build_float_compare(FloatPredicate::OEQ, u, self.c(1.0), "")?;
        let y = b.build_select(one, x, y, "")?.into_float_value();
        let inf = b.build_float_compare(FloatPredicate::OEQ, u, self.c(f64::INFINITY), "")?;
        Ok(b.build_select(inf, u, y, "")?.into_float_value())
    }

    /// Inverse hyperbolic sine in f64: `ln(2|x|)` above 2^28,
    /// `ln(2|x| + 1 / (|x| + sqrt(x^2 + 1)))` above 2, `ln_1p(|x| + x^2 / (1 + sqrt(1 + x^2)))`
    /// below; the sign of `x`.
    pub fn asinh(
        &self,
        b: &Builder<'ctx>,
        x: FloatValue<'ctx>,
        accuracy: Accuracy,
    ) -> R<FloatValue<'ctx>> {
        let ax = self.abs(b, x)?;
        let x2 = b.build_float_mul(ax, ax, "")?;
        let root = self.sqrt(b, b.build_float_add(x2, self.c(1.0), "")?)?;
        let huge = b.build_float_add(
            self.ln(b, ax, accuracy)?,
            self.c(std::f64::consts::LN_2),
            "",
        )?;
        let large = self.ln(
            b,
            b.build_float_add(
                b.build_float_mul(ax, self.c(2.0), "")?,
                b.build_float_div(self.c(1.0), b.build_float_add(ax, root, "")?, "")?,
                "",
            )?,
            accuracy,
        )?;
        let small = self.ln_1p(
            b,
            b.build_float_add(
                ax,
                b.build_float_div(x2, b.build_float_add(self.c(1.0), root, "")?, "")?,
                "",
            )?,
            accuracy,
        )?;
        let y = self.pick(b, ax, 2.0, small, large)?;
        let y = self.pick(b, ax, 2f64.powi(28), y, huge)?;
        self.copysign(b, y, x)
    }

    /// Inverse hyperbolic cosine in f64 (NaN below 1): `ln(x) + ln 2` above 2^28,
    /// `ln(2x - 1 / (x + sqrt(x^2 - 1)))` above 2, `ln_1p(t + sqrt(2t + t^2))` with
    /// `t = x - 1` below.
    pub fn acosh(
        &self,
        b: &Builder<'ctx>,
        x: FloatValue<'ctx>,
        accuracy: Accuracy,
    ) -> R<FloatValue<'ctx>> {
        let huge =
            b.build_float_add(self.ln(b, x, accuracy)?, self.c(std::f64::consts::LN_2), "")?;
        let x2 = b.build_float_mul(x, x, "")?;
        let root = self.sqrt(b, b.build_float_sub(x2, self.c(1.0), "")?)?;
        let large = self.ln(
            b,
            b.build_float_sub(
                b.build_float_mul(x, self.c(2.0), "")?,
                b.build_float_div(self.c(1.0), b.build_float_add(x, root, "")?, "")?,
                "",
            )?,
            accuracy,
        )?;
        let t = b.build_float_sub(x, self.c(1.0), "")?;
        let inner = self.fma(b, t, t, b.build_float_mul(t, self.c(2.0), "")?)?;
        let small = self.ln_1p(b, b.build_float_add(t, self.sqrt(b, inner)?, "")?, accuracy)?;
        let y = self.pick(b, x, 2.0, small, large)?;
        let y = self.pick(b, x, 2f64.powi(28), y, huge)?;
        let below = b.build_float_compare(FloatPredicate::ULT, x, self.c(1.0), "")?;
        Ok(b.build_select(below, self.c(f64::NAN), y, "")?
            .into_float_value())
    }

    /// Inverse hyperbolic tangent in f64 (NaN beyond 1, infinite at 1):
    /// `ln_1p(2|x| + 2|x| |x| / (1 - |x|)) / 2` below 1/2, `ln_1p(2|x| / (1 - |x|)) / 2`
    /// above; the sign of `x`.
    pub fn atanh(
        &self,
        b: &Builder<'ctx>,
        x: FloatValue<'ctx>,
        accuracy: Accuracy,
    ) -> R<FloatValue<'ctx>> {
        let ax = self.abs(b, x)?;
        let t = b.build_float_add(ax, ax, "")?;
        let rest = b.build_float_sub(self.c(1.0), ax, "")?;
        let small_arg = b.build_float_add(
            t,
            b.build_float_div(b.build_float_mul(t, ax, "")?, rest, "")?,
            "",
        )?;
        let large_arg = b.build_float_div(t, rest, "")?;
        let arg = self.pick(b, ax, 0.5, small_arg, large_arg)?;
        let y = b.build_float_mul(self.ln_1p(b, arg, accuracy)?, self.c(0.5), "")?;
        let y = self.copysign(b, y, x)?;
        let beyond = b.build_float_compare(FloatPredicate::UGT, ax, self.c(1.0), "")?;
        Ok(b.build_select(beyond, self.c(f64::NAN), y, "")?
            .into_float_value())
    }

    /// `below` where `v < at`, else `above` (NaN `v` takes `above`).
    fn pick(
        &self,
        b: &Builder<'ctx>,
        v: FloatValue<'ctx>,
        at: f64,
        below: FloatValue<'ctx>,
        above: FloatValue<'ctx>,
    ) -> R<FloatValue<'ctx>> {
        let is_below = b.build_float_compare(FloatPredicate::OLT, v, self.c(at), "")?;
        Ok(b.build_select(is_below, below, above, "")?
            .into_float_value())
    }
}
