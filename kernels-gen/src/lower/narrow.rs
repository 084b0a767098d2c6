//! Casts to the narrow integer types, `as i32` and `as u8`: the value Rust gives (an
//! integer wrapped to the width, a real saturated to the type's range with NaN giving 0,
//! `true` 1), held as an `i64` like every integer in a kernel. `(x as i32) + 1` is then
//! computed in `i64`; write `((x as i32) + 1) as i32` for 32-bit wrapping.

use super::*;

/// A narrow integer type a cast may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Narrow {
    I32,
    U8,
}

impl Narrow {
    /// The narrow type `t` names, if it names one.
    pub(super) fn of(t: &ast::TypeExpr) -> Option<Narrow> {
        match t {
            ast::TypeExpr::Name(id) if id.name == "i32" => Some(Narrow::I32),
            ast::TypeExpr::Name(id) if id.name == "u8" => Some(Narrow::U8),
            _ => None,
        }
    }

    /// The type's smallest and largest values.
    fn range(self) -> (i64, i64) {
        match self {
            Narrow::I32 => (i32::MIN.into(), i32::MAX.into()),
            Narrow::U8 => (0, u8::MAX.into()),
        }
    }

    /// An integer wrapped to the type, as Rust's `as` does.
    fn wrap(self, x: i64) -> i64 {
        match self {
            Narrow::I32 => (x as i32).into(),
            Narrow::U8 => (x as u8).into(),
        }
    }
}

impl Lowerer<'_> {
    /// `v as i32` or `v as u8`.
    pub(super) fn narrow_cast(&mut self, v: Val, to: Narrow, span: SpanId) -> Result<Val> {
        let n = match v {
            Val::IntLit(x) => return Ok(Val::IntLit(to.wrap(x))),
            // Rust's float-to-integer `as` saturates, and takes NaN to 0.
            Val::FloatLit(x) => {
                let (lo, hi) = to.range();
                let r = if x.is_nan() {
                    0
                } else {
                    (x.max(lo as f64).min(hi as f64)) as i64
                };
                return Ok(Val::IntLit(r));
            }
            Val::Tuple(_) => return self.tuple_here(span),
            Val::Node(n) => n,
        };
        let from = self.b.ty(n);
        if from == Ty::Bool {
            return Ok(Val::Node(self.b.cast(n, Ty::Int)));
        }
        if from.is_float() {
            // To i64 (saturating, NaN to 0), then clamped to the type's range: the same
            // value as Rust's saturating cast to the narrow type.
            let (lo, hi) = to.range();
            let wide = self.b.cast(n, Ty::Int);
            let (lo, hi) = (self.b.int(lo), self.b.int(hi));
            let above = self.b.binary(Binary::Max, wide, lo);
            return Ok(Val::Node(self.b.binary(Binary::Min, above, hi)));
        }
        Ok(Val::Node(match to {
            Narrow::I32 => {
                let k = self.b.int(32);
                let high = self.b.binary(Binary::Bit(BitOp::Shl), n, k);
                self.b.binary(Binary::Bit(BitOp::Shr), high, k)
            }
            Narrow::U8 => {
                let mask = self.b.int(0xff);
                self.b.binary(Binary::Bit(BitOp::And), n, mask)
            }
        }))
    }
}
