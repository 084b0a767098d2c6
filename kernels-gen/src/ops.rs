//! The operators the surface syntax ([`crate::ast::BinOp`]) and the kernel IR
//! ([`crate::ir::Binary`]) share: comparisons and bit operations, written once here.

/// Comparisons. They yield `bool`; reals compare as in Rust (any comparison with NaN is
/// false but `!=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Comparison {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Eq => "==",
            Comparison::Ne => "!=",
            Comparison::Lt => "<",
            Comparison::Le => "<=",
            Comparison::Gt => ">",
            Comparison::Ge => ">=",
        }
    }

    /// The comparison with its operands exchanged: `x op y` is `y op.swapped() x`.
    pub fn swapped(self) -> Comparison {
        match self {
            Comparison::Lt => Comparison::Gt,
            Comparison::Le => Comparison::Ge,
            Comparison::Gt => Comparison::Lt,
            Comparison::Ge => Comparison::Le,
            symmetric => symmetric,
        }
    }

    /// Whether `x op y` holds.
    pub fn holds<T: PartialOrd>(self, x: T, y: T) -> bool {
        match self {
            Comparison::Eq => x == y,
            Comparison::Ne => x != y,
            Comparison::Lt => x < y,
            Comparison::Le => x <= y,
            Comparison::Gt => x > y,
            Comparison::Ge => x >= y,
        }
    }
}

/// Bit operations: on integers bit by bit; `And`, `Or` and `Xor` also on booleans. They
/// keep the operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// `&`: integers bit by bit, or booleans.
    And,
    /// `|`: integers bit by bit, or booleans.
    Or,
    /// `^`: integers bit by bit, or booleans.
    Xor,
    /// `<<` on integers, the amount taken modulo 64 (Rust's `wrapping_shl`).
    Shl,
    /// `>>` on integers, arithmetic, the amount taken modulo 64 (`wrapping_shr`).
    Shr,
}

impl BitOp {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        match self {
            BitOp::And => "&",
            BitOp::Or => "|",
            BitOp::Xor => "^",
            BitOp::Shl => "<<",
            BitOp::Shr => ">>",
        }
    }

    /// `a op b` on integers: what every back end computes.
    pub fn on_ints(self, a: i64, b: i64) -> i64 {
        match self {
            BitOp::And => a & b,
            BitOp::Or => a | b,
            BitOp::Xor => a ^ b,
            BitOp::Shl => a.wrapping_shl(b as u32),
            BitOp::Shr => a.wrapping_shr(b as u32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_swap_with_their_comparison() {
        assert_eq!(Comparison::Lt.swapped(), Comparison::Gt);
        assert_eq!(Comparison::Ge.swapped(), Comparison::Le);
        assert_eq!(Comparison::Eq.swapped(), Comparison::Eq);
        for c in [Comparison::Lt, Comparison::Le, Comparison::Ne] {
            assert_eq!(c.holds(1, 2), c.swapped().holds(2, 1), "{c:?}");
        }
    }

    #[test]
    fn shifts_take_the_amount_modulo_64() {
        assert_eq!(BitOp::Shl.on_ints(1, 65), 2);
        assert_eq!(BitOp::Shr.on_ints(-8, 66), -2);
    }
}
