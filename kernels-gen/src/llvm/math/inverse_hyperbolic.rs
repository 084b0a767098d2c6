//! The inverse hyperbolic functions, as fdlibm computes them, over `ln(1 + x)` kept
//! accurate near 0.

use super::{Accuracy, Fv, Math, R};
use inkwell::FloatPredicate;

impl<'ctx> Math<'_, 'ctx> {
    /// `ln(1 + x)` in f64: `ln(u) + (x - (u - 1)) / u` with `u = 1 + x` rounded, the
    /// second term the first-order correction for what the rounding lost.
    fn ln_1p(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let u = b.build_float_add(x, self.c(1.0), "")?;
        let lost = b.build_float_sub(x, b.build_float_sub(u, self.c(1.0), "")?, "")?;
        let y = b.build_float_add(self.ln(u, accuracy)?, b.build_float_div(lost, u, "")?, "")?;
        // Where 1 + x rounds to 1, ln(1 + x) is x to the last bit; at infinity the
        // correction is NaN and the logarithm alone right (NaN comes out of `ln`).
        let y = self.select_if(FloatPredicate::OEQ, u, 1.0, x, y)?;
        self.select_if(FloatPredicate::OEQ, u, f64::INFINITY, u, y)
    }

    /// Inverse hyperbolic sine in f64: `ln(2|x|)` above 2^28,
    /// `ln(2|x| + 1 / (|x| + sqrt(x^2 + 1)))` above 2, `ln_1p(|x| + x^2 / (1 + sqrt(1 + x^2)))`
    /// below; the sign of `x`.
    pub fn asinh(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let ax = self.abs(x)?;
        let x2 = b.build_float_mul(ax, ax, "")?;
        let root = self.sqrt(b.build_float_add(x2, self.c(1.0), "")?)?;
        let huge = self.ln_twice(ax, accuracy)?;
        let large = self.ln_twice_plus(ax, root, 1.0, accuracy)?;
        let small = self.ln_1p(
            b.build_float_add(
                ax,
                b.build_float_div(x2, b.build_float_add(self.c(1.0), root, "")?, "")?,
                "",
            )?,
            accuracy,
        )?;
        let y = self.by_size(ax, [small, large, huge])?;
        self.copysign(y, x)
    }

    /// Inverse hyperbolic cosine in f64 (NaN below 1): `ln(x) + ln 2` above 2^28,
    /// `ln(2x - 1 / (x + sqrt(x^2 - 1)))` above 2, `ln_1p(t + sqrt(2t + t^2))` with
    /// `t = x - 1` below.
    pub fn acosh(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let huge = self.ln_twice(x, accuracy)?;
        let x2 = b.build_float_mul(x, x, "")?;
        let root = self.sqrt(b.build_float_sub(x2, self.c(1.0), "")?)?;
        let large = self.ln_twice_plus(x, root, -1.0, accuracy)?;
        let t = b.build_float_sub(x, self.c(1.0), "")?;
        let inner = self.fma(t, t, b.build_float_mul(t, self.c(2.0), "")?)?;
        let small = self.ln_1p(b.build_float_add(t, self.sqrt(inner)?, "")?, accuracy)?;
        let y = self.by_size(x, [small, large, huge])?;
        self.select_if(FloatPredicate::ULT, x, 1.0, self.c(f64::NAN), y)
    }

    /// Inverse hyperbolic tangent in f64 (NaN beyond 1, infinite at 1):
    /// `ln_1p(2|x| + 2|x| |x| / (1 - |x|)) / 2` below 1/2, `ln_1p(2|x| / (1 - |x|)) / 2`
    /// above; the sign of `x`.
    pub fn atanh(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let ax = self.abs(x)?;
        let t = b.build_float_add(ax, ax, "")?;
        let rest = b.build_float_sub(self.c(1.0), ax, "")?;
        let small_arg = b.build_float_add(
            t,
            b.build_float_div(b.build_float_mul(t, ax, "")?, rest, "")?,
            "",
        )?;
        let large_arg = b.build_float_div(t, rest, "")?;
        let arg = self.pick(ax, 0.5, small_arg, large_arg)?;
        let y = b.build_float_mul(self.ln_1p(arg, accuracy)?, self.c(0.5), "")?;
        let y = self.copysign(y, x)?;
        self.select_if(FloatPredicate::UGT, ax, 1.0, self.c(f64::NAN), y)
    }

    /// `ln(2x)` as `ln(x) + ln 2`: `asinh` and `acosh` above 2^28, where `x^2` overflows.
    fn ln_twice(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let ln_x = self.ln(x, accuracy)?;
        Ok(self
            .b
            .build_float_add(ln_x, self.c(std::f64::consts::LN_2), "")?)
    }

    /// `ln(2x + sign / (x + root))` (`sign` 1 or -1): `asinh` and `acosh` between 2 and
    /// 2^28, `root` being `sqrt(x^2 + sign)`.
    fn ln_twice_plus(
        &self,
        x: Fv<'ctx>,
        root: Fv<'ctx>,
        sign: f64,
        accuracy: Accuracy,
    ) -> R<Fv<'ctx>> {
        let b = self.b;
        let twice = b.build_float_mul(x, self.c(2.0), "")?;
        let inverse = b.build_float_div(self.c(1.0), b.build_float_add(x, root, "")?, "")?;
        let arg = if sign > 0.0 {
            b.build_float_add(twice, inverse, "")?
        } else {
            b.build_float_sub(twice, inverse, "")?
        };
        self.ln(arg, accuracy)
    }

    /// Of the three formulas of `asinh` and `acosh`, `[small, large, huge]`, the first for
    /// `v` below 2, the second below 2^28, else the third.
    fn by_size(&self, v: Fv<'ctx>, formulas: [Fv<'ctx>; 3]) -> R<Fv<'ctx>> {
        let [small, large, huge] = formulas;
        let y = self.pick(v, 2.0, small, large)?;
        self.pick(v, 2f64.powi(28), y, huge)
    }
}
