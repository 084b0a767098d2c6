//! Constant folding: the value of an operation on constants, with the integer and boolean
//! semantics every back end follows (the interpreter borrows them).

use super::{Binary, BitOp, Comparison, Unary};

/// A constant value during folding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    /// A real.
    Real(f64),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
}

pub(super) fn fold_unary(op: Unary, c: Const) -> Option<Const> {
    Some(match (op, c) {
        (Unary::Neg, Const::Real(v)) => Const::Real(-v),
        (Unary::Neg, Const::Int(v)) => Const::Int(v.wrapping_neg()),
        (Unary::Not, Const::Bool(v)) => Const::Bool(!v),
        (Unary::Abs, Const::Real(v)) => Const::Real(v.abs()),
        (Unary::Abs, Const::Int(v)) => Const::Int(v.wrapping_abs()),
        // Transcendentals are left to the back ends so every path computes them alike.
        _ => return None,
    })
}

/// Evaluates a binary operation on constants where the result does not depend on the
/// precision `T` is later given; the definition of integer and boolean semantics.
pub(crate) fn fold_binary(op: Binary, x: Const, y: Const) -> Option<Const> {
    use Binary::*;
    Some(match (x, y) {
        (Const::Int(a), Const::Int(b)) => match op {
            Add => Const::Int(a.wrapping_add(b)),
            Sub => Const::Int(a.wrapping_sub(b)),
            Mul => Const::Int(a.wrapping_mul(b)),
            Div => Const::Int(if b == 0 { 0 } else { a.wrapping_div(b) }),
            Rem => Const::Int(if b == 0 { 0 } else { a.wrapping_rem(b) }),
            Min => Const::Int(a.min(b)),
            Max => Const::Int(a.max(b)),
            Bit(o) => Const::Int(o.on_ints(a, b)),
            Compare(c) => Const::Bool(c.holds(a, b)),
            _ => return None,
        },
        // Real constants are folded only where the result does not depend on the
        // precision the kernel is later instantiated at: comparisons, and operations whose
        // f64 result is exactly representable (checked by round-tripping through f32).
        (Const::Real(a), Const::Real(b)) => {
            let r = match op {
                Add => a + b,
                Sub => a - b,
                Mul => a * b,
                Div => a / b,
                Min => a.min(b),
                Max => a.max(b),
                CopySign => a.copysign(b),
                Compare(c) => return Some(Const::Bool(c.holds(a, b))),
                _ => return None,
            };
            let exact_in_f32 = |v: f64| (v as f32) as f64 == v || v.is_nan();
            // min, max and copysign select an operand: exact at any precision.
            let selects_operand = matches!(op, Min | Max | CopySign);
            if selects_operand || (exact_in_f32(a) && exact_in_f32(b) && exact_in_f32(r)) {
                Const::Real(r)
            } else {
                return None;
            }
        }
        (Const::Bool(a), Const::Bool(b)) => match op {
            And | Bit(BitOp::And) => Const::Bool(a && b),
            Or | Bit(BitOp::Or) => Const::Bool(a || b),
            Compare(Comparison::Eq) => Const::Bool(a == b),
            Compare(Comparison::Ne) | Bit(BitOp::Xor) => Const::Bool(a != b),
            _ => return None,
        },
        _ => return None,
    })
}
