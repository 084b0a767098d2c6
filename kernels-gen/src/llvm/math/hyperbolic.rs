//! The hyperbolic functions, as fdlibm computes them, over an internal `e^x - 1` that
//! keeps its accuracy near 0.

use super::{inverse_factorials, Accuracy, Fv, Math, R};

impl<'ctx> Math<'_, 'ctx> {
    /// `e^x - 1` for `x <= 22` (internal: what the hyperbolic functions are made of),
    /// without the cancellation near 0: `2^k (e^r - 1) + (2^k - 1)` with `|r| <= ln2/2`
    /// and `e^r - 1 = r + r^2 (1/2! + r/3! + ...)`.
    fn expm1_to_22(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        // Below -60 the result is -1 to the last bit; above 22 callers take other paths.
        let (r, k) = self.reduce_by_ln2(x, -60.0, 22.0)?;
        let coeffs = inverse_factorials(2, accuracy.exp_terms());
        let q = b.build_float_mul(r, self.horner(r, &coeffs)?, "")?;
        let em1 = self.fma(r, q, r)?;
        let two_k = self.pow2(k)?;
        let y = self.fma(two_k, em1, b.build_float_sub(two_k, self.c(1.0), "")?)?;
        self.nan_or(x, y)
    }

    /// `|x|` and `e^|x| - 1` (for `|x|` up to 22): what `sinh` and `cosh` start from.
    fn abs_expm1(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<(Fv<'ctx>, Fv<'ctx>)> {
        let ax = self.abs(x)?;
        Ok((ax, self.expm1_to_22(ax, accuracy)?))
    }

    /// Hyperbolic tangent in f64, as fdlibm: `-t / (t + 2)` with `t = e^(-2|x|) - 1`
    /// below 1, else `1 - 2 / (e^(2|x|) + 1)`; the sign of `x`.
    pub fn tanh(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let ax = self.abs(x)?;
        let t = self.expm1_to_22(b.build_float_mul(ax, self.c(-2.0), "")?, accuracy)?;
        // -t / (t + 2) with t + 2 kept exactly as d + dl, and the quotient corrected
        // once by its remainder (computed with a fused multiply-add).
        let d = b.build_float_add(t, self.c(2.0), "")?;
        let dl = b.build_float_add(b.build_float_sub(self.c(2.0), d, "")?, t, "")?;
        let minus_t = b.build_float_neg(t, "")?;
        let q = b.build_float_div(minus_t, d, "")?;
        let rem = self.fma(b.build_float_neg(q, "")?, d, minus_t)?;
        let rem = self.fma(b.build_float_neg(q, "")?, dl, rem)?;
        let near = b.build_float_add(q, b.build_float_div(rem, d, "")?, "")?;
        let e = self.exp(b.build_float_mul(ax, self.c(2.0), "")?, accuracy)?;
        let far = b.build_float_sub(
            self.c(1.0),
            b.build_float_div(self.c(2.0), b.build_float_add(e, self.c(1.0), "")?, "")?,
            "",
        )?;
        let y = self.pick(ax, 1.0, near, far)?;
        self.odd_result(x, y)
    }

    /// Hyperbolic sine in f64: from `t = e^|x| - 1` below 22 (`(2t - t^2/(t+1)) / 2`
    /// below 1, `(t + t/(t+1)) / 2` above, as fdlibm), else `(e^(|x|/2) / 2) e^(|x|/2)`
    /// (finite up to where the result overflows); the sign of `x`.
    pub fn sinh(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let (ax, t) = self.abs_expm1(x, accuracy)?;
        let t1 = b.build_float_add(t, self.c(1.0), "")?;
        let small = b.build_float_sub(
            b.build_float_mul(t, self.c(2.0), "")?,
            b.build_float_div(b.build_float_mul(t, t, "")?, t1, "")?,
            "",
        )?;
        let medium = b.build_float_add(t, b.build_float_div(t, t1, "")?, "")?;
        let near = self.pick(ax, 1.0, small, medium)?;
        let near = b.build_float_mul(near, self.c(0.5), "")?;
        let y = self.exp_near_22(ax, near, accuracy)?;
        self.odd_result(x, y)
    }

    /// Hyperbolic cosine in f64: `1 + t^2 / (2 (1 + t))` with `t = e^|x| - 1` below
    /// ln2/2, `(e + 1/e) / 2` with `e = t + 1` below 22, else `(e^(|x|/2) / 2) e^(|x|/2)`.
    pub fn cosh(&self, x: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let (ax, t) = self.abs_expm1(x, accuracy)?;
        let w = b.build_float_add(t, self.c(1.0), "")?;
        let small = b.build_float_add(self.c(1.0), self.square_over_sum(t, w, w)?, "")?;
        let medium = b.build_float_add(
            b.build_float_mul(w, self.c(0.5), "")?,
            b.build_float_div(self.c(0.5), w, "")?,
            "",
        )?;
        let near = self.pick(ax, 0.5 * std::f64::consts::LN_2, small, medium)?;
        let y = self.exp_near_22(ax, near, accuracy)?;
        self.nan_or(x, y)
    }

    /// `near` (the value from `e^a - 1`) for `a` below 22, else `(e^(a/2) / 2) e^(a/2)`:
    /// `e^a / 2` without overflowing before the result does.
    fn exp_near_22(&self, a: Fv<'ctx>, near: Fv<'ctx>, accuracy: Accuracy) -> R<Fv<'ctx>> {
        let b = self.b;
        let w = self.exp(b.build_float_mul(a, self.c(0.5), "")?, accuracy)?;
        let far = b.build_float_mul(b.build_float_mul(w, self.c(0.5), "")?, w, "")?;
        self.pick(a, 22.0, near, far)
    }
}
