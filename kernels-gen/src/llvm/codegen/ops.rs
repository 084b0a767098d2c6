//! Arithmetic in the generated code: unary and binary operations (the transcendental ones
//! through `MathLib`, an f32 one evaluated in f64 and rounded back), casts, and the
//! reductions' identities and combining.

use super::*;
use crate::ir::{BitOp, Comparison};

impl<'a, 'ctx> Gen<'a, 'ctx> {
    pub(super) fn unary(
        &self,
        op: Unary,
        a: BasicValueEnum<'ctx>,
        ty: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        if ty == Ty::Int {
            let x = a.into_int_value();
            return Ok(match op {
                Unary::Neg => b.build_int_neg(x, "")?.into(),
                _ => {
                    // abs: the only other unary integer operation
                    let neg = b.build_int_neg(x, "")?;
                    let lt = b.build_int_compare(IntPredicate::SLT, x, self.i64c(0), "")?;
                    b.build_select(lt, neg, x, "")?
                }
            });
        }
        if ty == Ty::Bool {
            return Ok(b.build_not(a.into_int_value(), "")?.into());
        }
        let x = a.into_float_value();
        let t = self.ty(ty);
        Ok(match op {
            Unary::Neg => b.build_float_neg(x, "")?.into(),
            Unary::Not => unreachable!("checked: `!` on a real"),
            Unary::Abs => self.call(self.intrinsic("llvm.fabs", &[t])?, &[a])?,
            Unary::Sqrt => self.call(self.intrinsic("llvm.sqrt", &[t])?, &[a])?,
            Unary::Floor => self.call(self.intrinsic("llvm.floor", &[t])?, &[a])?,
            Unary::Ceil => self.call(self.intrinsic("llvm.ceil", &[t])?, &[a])?,
            Unary::Trunc => self.call(self.intrinsic("llvm.trunc", &[t])?, &[a])?,
            Unary::Round => self.call(self.intrinsic("llvm.round", &[t])?, &[a])?,
            Unary::Exp => self.in_f64(x, |g, y, acc| g.math.at(&g.b).exp(y, acc))?,
            Unary::Ln => self.in_f64(x, |g, y, acc| g.math.at(&g.b).ln(y, acc))?,
            Unary::Exp2 => self.in_f64(x, |g, y, acc| g.math.at(&g.b).exp2(y, acc))?,
            Unary::Log2 => self.in_f64(x, |g, y, acc| g.math.at(&g.b).log2(y, acc))?,
            Unary::Log10 => self.in_f64(x, |g, y, acc| g.math.at(&g.b).log10(y, acc))?,
            Unary::Sinh => self.in_f64(x, |g, y, acc| g.math.at(&g.b).sinh(y, acc))?,
            Unary::Cosh => self.in_f64(x, |g, y, acc| g.math.at(&g.b).cosh(y, acc))?,
            Unary::Tanh => self.in_f64(x, |g, y, acc| g.math.at(&g.b).tanh(y, acc))?,
            Unary::Cbrt => self.in_f64(x, |g, y, _| g.math.at(&g.b).cbrt(y))?,
            Unary::Asinh => self.in_f64(x, |g, y, acc| g.math.at(&g.b).asinh(y, acc))?,
            Unary::Acosh => self.in_f64(x, |g, y, acc| g.math.at(&g.b).acosh(y, acc))?,
            Unary::Atanh => self.in_f64(x, |g, y, acc| g.math.at(&g.b).atanh(y, acc))?,
            Unary::Sin => self.in_f64(x, |g, y, _| g.math.at(&g.b).trig(y, Trig::Sin))?,
            Unary::Cos => self.in_f64(x, |g, y, _| g.math.at(&g.b).trig(y, Trig::Cos))?,
            Unary::Tan => self.in_f64(x, |g, y, _| g.math.at(&g.b).trig(y, Trig::Tan))?,
            Unary::Asin => self.in_f64(x, |g, y, _| g.math.at(&g.b).asin(y))?,
            Unary::Acos => self.in_f64(x, |g, y, _| g.math.at(&g.b).acos(y))?,
            Unary::Atan => self.in_f64(x, |g, y, _| g.math.at(&g.b).atan(y))?,
        })
    }

    /// How accurate an f64 evaluation must be: enough for f32 where it is rounded back
    /// (`narrowed`), else for f64.
    pub(super) fn accuracy(narrowed: bool) -> Accuracy {
        if narrowed {
            Accuracy::Single
        } else {
            Accuracy::Double
        }
    }

    /// Evaluates a transcendental in f64 and rounds back, so that f32 results are correctly
    /// rounded in almost all cases and both targets agree.
    pub(super) fn in_f64(
        &self,
        x: FloatValue<'ctx>,
        f: impl Fn(&Self, FloatValue<'ctx>, Accuracy) -> R<FloatValue<'ctx>>,
    ) -> R<BasicValueEnum<'ctx>> {
        self.all_in_f64([x], |g, [y], accuracy| f(g, y, accuracy))
    }

    /// Evaluates `f` of the arguments `xs` (of one type) in f64: extended where they are
    /// f32, in order, and the result rounded back.
    fn all_in_f64<const N: usize>(
        &self,
        xs: [FloatValue<'ctx>; N],
        f: impl Fn(&Self, [FloatValue<'ctx>; N], Accuracy) -> R<FloatValue<'ctx>>,
    ) -> R<BasicValueEnum<'ctx>> {
        let f64t = self.ctx.f64_type();
        let ty = xs[0].get_type();
        let wide = ty != f64t;
        let mut wide_xs = xs;
        if wide {
            for x in &mut wide_xs {
                *x = self.b.build_float_ext(*x, f64t, "")?;
            }
        }
        let r = f(self, wide_xs, Self::accuracy(wide))?;
        Ok(if wide {
            self.b.build_float_trunc(r, ty, "")?.into()
        } else {
            r.into()
        })
    }

    pub(super) fn binary(
        &self,
        op: Binary,
        a: BasicValueEnum<'ctx>,
        c: BasicValueEnum<'ctx>,
        operand_ty: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        if operand_ty == Ty::Int || operand_ty == Ty::Bool {
            let (x, y) = (a.into_int_value(), c.into_int_value());
            let cmp =
                |p| -> R<BasicValueEnum<'ctx>> { Ok(b.build_int_compare(p, x, y, "")?.into()) };
            let zero = self.i64c(0);
            return match op {
                Binary::Add => Ok(b.build_int_add(x, y, "")?.into()),
                Binary::Sub => Ok(b.build_int_sub(x, y, "")?.into()),
                Binary::Mul => Ok(b.build_int_mul(x, y, "")?.into()),
                Binary::Div | Binary::Rem => {
                    // Division by zero yields 0 on every back end.
                    let is_zero = b.build_int_compare(IntPredicate::EQ, y, zero, "")?;
                    let safe = b
                        .build_select(is_zero, self.i64c(1), y, "")?
                        .into_int_value();
                    let q = if op == Binary::Div {
                        b.build_int_signed_div(x, safe, "")?
                    } else {
                        b.build_int_signed_rem(x, safe, "")?
                    };
                    Ok(b.build_select(is_zero, zero, q, "")?)
                }
                Binary::Min => {
                    let lt = b.build_int_compare(IntPredicate::SLT, x, y, "")?;
                    Ok(b.build_select(lt, x, y, "")?)
                }
                Binary::Max => {
                    let gt = b.build_int_compare(IntPredicate::SGT, x, y, "")?;
                    Ok(b.build_select(gt, x, y, "")?)
                }
                Binary::And | Binary::Bit(BitOp::And) => Ok(b.build_and(x, y, "")?.into()),
                Binary::Or | Binary::Bit(BitOp::Or) => Ok(b.build_or(x, y, "")?.into()),
                Binary::Bit(BitOp::Xor) => Ok(b.build_xor(x, y, "")?.into()),
                Binary::Bit(shift @ (BitOp::Shl | BitOp::Shr)) => {
                    // The amount modulo 64, as Rust's `wrapping_shl` and `wrapping_shr`.
                    let amount = b.build_and(y, self.i64c(63), "")?;
                    Ok(if shift == BitOp::Shl {
                        b.build_left_shift(x, amount, "")?
                    } else {
                        b.build_right_shift(x, amount, true, "")?
                    }
                    .into())
                }
                Binary::Compare(c) => cmp(int_predicate(c)),
                Binary::CopySign | Binary::Pow | Binary::Hypot | Binary::Atan2 => {
                    unreachable!("checked: real-only operation")
                }
            };
        }
        let (x, y) = (a.into_float_value(), c.into_float_value());
        let t = self.ty(operand_ty);
        let cmp = |p| -> R<BasicValueEnum<'ctx>> { Ok(b.build_float_compare(p, x, y, "")?.into()) };
        match op {
            Binary::Add => Ok(b.build_float_add(x, y, "")?.into()),
            Binary::Sub => Ok(b.build_float_sub(x, y, "")?.into()),
            Binary::Mul => Ok(b.build_float_mul(x, y, "")?.into()),
            Binary::Div => Ok(b.build_float_div(x, y, "")?.into()),
            Binary::Min => self.call(self.intrinsic("llvm.minnum", &[t])?, &[a, c]),
            Binary::Max => self.call(self.intrinsic("llvm.maxnum", &[t])?, &[a, c]),
            Binary::CopySign => Ok(self.math.at(b).copysign(x, y)?.into()),
            Binary::Pow => self.pow(x, y),
            Binary::Hypot => self.hypot(x, y),
            Binary::Atan2 => self.pair_in_f64(x, y, |g, a, c, _| g.math.at(&g.b).atan2(a, c)),
            Binary::Compare(c) => cmp(float_predicate(c)),
            Binary::Rem | Binary::And | Binary::Or | Binary::Bit(_) => {
                unreachable!("checked: not for reals")
            }
        }
    }

    /// `hypot` in f64 (an f32 one evaluated in f64 and rounded back).
    pub(super) fn hypot(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        self.pair_in_f64(x, y, |g, a, c, acc| g.math.at(&g.b).hypot(a, c, acc))
    }

    /// `x^y` in f64 (an f32 one evaluated in f64 and rounded back).
    pub(super) fn pow(&self, x: FloatValue<'ctx>, y: FloatValue<'ctx>) -> R<BasicValueEnum<'ctx>> {
        self.pair_in_f64(x, y, |g, a, c, acc| g.math.at(&g.b).pow(a, c, acc))
    }

    /// [`Self::in_f64`] for a function of two arguments.
    pub(super) fn pair_in_f64(
        &self,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
        f: impl Fn(&Self, FloatValue<'ctx>, FloatValue<'ctx>, Accuracy) -> R<FloatValue<'ctx>>,
    ) -> R<BasicValueEnum<'ctx>> {
        self.all_in_f64([x, y], |g, [a, c], accuracy| f(g, a, c, accuracy))
    }

    pub(super) fn cast(
        &self,
        a: BasicValueEnum<'ctx>,
        from: Ty,
        to: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        let (from, to) = (from.concrete(self.p), to.concrete(self.p));
        Ok(match (from, to) {
            (f, t) if f == t => a,
            (Ty::Int, t) => b
                .build_signed_int_to_float(a.into_int_value(), self.ty(t).into_float_type(), "")?
                .into(),
            (Ty::Bool, Ty::Int) => b
                .build_int_z_extend(a.into_int_value(), self.ctx.i64_type(), "")?
                .into(),
            (f, Ty::Int) => {
                // Saturating, like Rust's `as`.
                let sat =
                    self.intrinsic("llvm.fptosi.sat", &[self.ctx.i64_type().into(), self.ty(f)])?;
                self.call(sat, &[a])?
            }
            (Ty::F32, Ty::F64) => b
                .build_float_ext(a.into_float_value(), self.ctx.f64_type(), "")?
                .into(),
            (Ty::F64, Ty::F32) => b
                .build_float_trunc(a.into_float_value(), self.ctx.f32_type(), "")?
                .into(),
            _ => unreachable!("checked: unsupported cast"),
        })
    }

    pub(super) fn identity(&self, r: usize) -> BasicValueEnum<'ctx> {
        let red = &self.k.reductions[r];
        self.real_const(red.ty, red.op.identity())
    }

    pub(super) fn combine(
        &self,
        op: ReduceOp,
        ty: Ty,
        a: BasicValueEnum<'ctx>,
        c: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        self.binary(op.combine(), a, c, ty)
    }
}

/// The predicate of a comparison of integers (signed) or booleans.
fn int_predicate(c: Comparison) -> IntPredicate {
    match c {
        Comparison::Eq => IntPredicate::EQ,
        Comparison::Ne => IntPredicate::NE,
        Comparison::Lt => IntPredicate::SLT,
        Comparison::Le => IntPredicate::SLE,
        Comparison::Gt => IntPredicate::SGT,
        Comparison::Ge => IntPredicate::SGE,
    }
}

/// The predicate of a comparison of reals, as Rust compares them: false when either side
/// is NaN, but `!=` true then (unordered-or-not-equal).
fn float_predicate(c: Comparison) -> FloatPredicate {
    match c {
        Comparison::Eq => FloatPredicate::OEQ,
        Comparison::Ne => FloatPredicate::UNE,
        Comparison::Lt => FloatPredicate::OLT,
        Comparison::Le => FloatPredicate::OLE,
        Comparison::Gt => FloatPredicate::OGT,
        Comparison::Ge => FloatPredicate::OGE,
    }
}
