//! Lowering of `powi(x, n)` / `x.powi(n)`: an integer constant exponent, expanded into
//! multiplications by binary powering (squarings and one product per set bit of `|n|`,
//! then one division for a negative `n`). Every backend runs the same products, so the
//! bits agree everywhere (they may differ from Rust's `powi`, which is free to order its
//! products otherwise).

use super::{err, Lowerer, Result, Val};
use crate::ast::{Expr, SpanId};
use crate::ir::{Binary, NodeId};

/// The largest `|n|` taken: the powers of larger ones overflow or underflow f64 for
/// every base but those within 2^-1000 of 1.
const MAX_EXPONENT: i64 = 1 << 16;

impl Lowerer<'_> {
    /// `x^n` for the integer constant `n` (`vals`: base and exponent as lowered).
    pub(super) fn powi(&mut self, vals: &[Val], args: &[Expr], span: SpanId) -> Result<Val> {
        let [base, exponent] = vals else {
            return err(span, "`powi` takes a base and an exponent", None);
        };
        let Some(n) = self.const_int(*exponent) else {
            return err(
                args[1].span,
                "the exponent of `powi` must be an integer constant",
                Some("write it as a literal (`x.powi(3)`), or use `powf` for a real or computed exponent"),
            );
        };
        if n.abs() > MAX_EXPONENT {
            return err(
                args[1].span,
                format!("the exponent {n} of `powi` is beyond +-{MAX_EXPONENT}"),
                Some("use `powf` (through exp and ln) for such powers"),
            );
        }
        let x = match *base {
            Val::IntLit(k) => self.b.real(k as f64, self.default_real),
            v => self.materialize(v),
        };
        let t = self.b.ty(x);
        if !t.is_float() {
            return err(
                args[0].span,
                format!("`powi` needs a real base, found `{t}`"),
                Some("convert it first: `(k as f64).powi(2)`"),
            );
        }
        let one = self.b.real(1.0, t);
        let power = self.binary_power(x, n.unsigned_abs()).unwrap_or(one);
        Ok(Val::Node(if n < 0 {
            self.b.binary(Binary::Div, one, power)
        } else {
            power
        }))
    }

    /// `x^n` by binary powering (`None` for `n = 0`): the product of `x^(2^k)` over the
    /// set bits `k` of `n`, lowest first.
    fn binary_power(&mut self, x: NodeId, mut n: u64) -> Option<NodeId> {
        let (mut result, mut square) = (None, x);
        while n > 0 {
            if n & 1 == 1 {
                result = Some(match result {
                    None => square,
                    Some(r) => self.b.binary(Binary::Mul, r, square),
                });
            }
            n >>= 1;
            if n > 0 {
                square = self.b.binary(Binary::Mul, square, square);
            }
        }
        result
    }
}
