//! Tuples: `(a, b)` values, helpers returning them (`-> (T, T)`), and `let (x, mut y, _) =
//! ..` taking their parts. A tuple lives only while lowering (its parts are ordinary
//! values, kept in a side table the `Val::Tuple` index names); nothing in the IR is a
//! tuple. A tuple can be bound by parts, returned by a helper, or be the value of an
//! `if`'s branches (part by part); anywhere a single value is needed it is an error.

use super::{check_count, err, Lowerer, Result, Val};
use crate::ast::{BinOp, Expr, Ident, SpanId, TypeExpr};
use crate::ir::{NodeId, Ty};
use std::iter::Zip;

impl Lowerer<'_> {
    /// `(a, b, ..)` as a value.
    pub(super) fn tuple_value(&mut self, items: &[Expr]) -> Result<Val> {
        let mut parts = Vec::with_capacity(items.len());
        for e in items {
            // A part may be an offset itself: `let (n, t) = (unit(a), unit(1 - a));`.
            match self.expr_or_unit(e)? {
                Some(v) => parts.push(v),
                None => return err(e.span, "this expression has no value", None),
            }
        }
        Ok(self.tuple_of(parts))
    }

    /// Arithmetic on offsets: `d + e` and `d - e` part by part, `k * d` and `d * k` each
    /// part scaled (`u[2 * unit(a) - unit(b)]`).
    pub(super) fn tuple_arithmetic(
        &mut self,
        op: BinOp,
        x: Val,
        y: Val,
        span: SpanId,
    ) -> Result<Val> {
        let pairs: Vec<(Val, Val)> = match (x, y) {
            (Val::Tuple(a), Val::Tuple(b)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                let (a, b) = (self.parts(a), self.parts(b));
                if a.len() != b.len() {
                    return err(
                        span,
                        format!(
                            "tuples of {} and {} parts cannot be combined",
                            a.len(),
                            b.len()
                        ),
                        Some("offsets have one part per axis"),
                    );
                }
                a.into_iter().zip(b).collect()
            }
            (Val::Tuple(a), k) if op == BinOp::Mul && !matches!(k, Val::Tuple(_)) => {
                self.parts(a).into_iter().map(|p| (p, k)).collect()
            }
            (k, Val::Tuple(b)) if op == BinOp::Mul && !matches!(k, Val::Tuple(_)) => {
                self.parts(b).into_iter().map(|p| (k, p)).collect()
            }
            _ => {
                return err(
                    span,
                    "tuples (offsets) only add, subtract, and scale by a number",
                    Some("write e.g. `u[unit(a) + unit(b)]` or `u[2 * unit(a)]`"),
                )
            }
        };
        let mut parts = Vec::with_capacity(pairs.len());
        for (a, b) in pairs {
            parts.push(self.binary(op, a, b, span)?);
        }
        Ok(self.tuple_of(parts))
    }

    /// Whether `v` is an integer, or a tuple of integers (an offset).
    pub(super) fn is_integer(&self, v: Val) -> bool {
        match v {
            Val::IntLit(_) => true,
            Val::FloatLit(_) => false,
            Val::Node(n) => self.b.ty(n) == Ty::Int,
            Val::Tuple(t) => self.tuples[t as usize].iter().all(|&p| self.is_integer(p)),
        }
    }

    /// The parts of tuple `t`.
    pub(super) fn parts(&self, t: u32) -> Vec<Val> {
        self.tuples[t as usize].clone()
    }

    /// The error for a tuple where a single value is needed.
    pub(super) fn tuple_here<T>(&self, span: SpanId) -> Result<T> {
        err(
            span,
            "a tuple is not a single value",
            Some("take its parts with `let (a, b) = ..;`"),
        )
    }

    /// `let (names..) = init;`
    pub(super) fn let_tuple(
        &mut self,
        names: &[(Ident, bool)],
        init: &Expr,
        span: SpanId,
    ) -> Result<()> {
        let parts = match self.expr_or_unit(init)? {
            Some(Val::Tuple(t)) => self.parts(t),
            _ => {
                return err(
                    init.span,
                    format!(
                        "`let` takes {} parts from a tuple, but this is not one",
                        names.len()
                    ),
                    Some("destructure a tuple `(a, b)` or a helper returning `(T, T)`"),
                )
            }
        };
        let message = |got, named| format!("`let` takes {named} parts from a tuple of {got}");
        let help = Some("name every part, `_` for those not needed");
        for (v, (name, mutable)) in zip_parts(span, parts, names.iter(), message, help)? {
            if name.name == "_" {
                continue;
            }
            // A mutable local's type is fixed where it is declared; it holds one value.
            let v = match (*mutable, v) {
                (true, Val::Tuple(_)) => return self.tuple_here(name.span),
                (true, v) => Val::Node(self.materialize(v)),
                (false, v) => v,
            };
            self.declare_local(&name.name, v, *mutable);
        }
        Ok(())
    }

    /// The value of an `if` on `c` whose branches gave `a` and `b`: tuples part by part.
    pub(super) fn select_values(&mut self, c: NodeId, a: Val, b: Val, span: SpanId) -> Result<Val> {
        match (a, b) {
            (Val::Tuple(x), Val::Tuple(y)) => {
                let (x, y) = (self.parts(x), self.parts(y));
                let message =
                    |left, right| format!("the branches of `if` give tuples of {left} and {right}");
                let mut parts = Vec::with_capacity(x.len());
                for (p, q) in zip_parts(span, x, y.into_iter(), message, None)? {
                    let (p, q) = self.unify(p, q, span, "branches of `if`")?;
                    parts.push(Val::Node(self.b.select(c, p, q)));
                }
                Ok(self.tuple_of(parts))
            }
            (Val::Tuple(_), _) | (_, Val::Tuple(_)) => err(
                span,
                "one branch of this `if` gives a tuple and the other does not",
                None,
            ),
            (a, b) => {
                let (a, b) = self.unify(a, b, span, "branches of `if`")?;
                Ok(Val::Node(self.b.select(c, a, b)))
            }
        }
    }

    /// A helper's result `v` given its return type `ret` (a tuple type part by part).
    pub(super) fn returned(
        &mut self,
        v: Val,
        ret: &TypeExpr,
        span: SpanId,
        what: &str,
    ) -> Result<Val> {
        match (v, ret) {
            (Val::Tuple(t), TypeExpr::Tuple { items, .. }) => {
                let parts = self.parts(t);
                let message = |got, declared| {
                    format!("{what}: a tuple of {got}, declared as one of {declared}")
                };
                let mut out = Vec::with_capacity(parts.len());
                for (p, ty) in zip_parts(span, parts, items.iter(), message, None)? {
                    let ty = self.resolve_type(ty)?;
                    out.push(Val::Node(self.coerce(p, ty, span, what)?));
                }
                Ok(self.tuple_of(out))
            }
            (Val::Tuple(_), _) => err(
                span,
                format!("{what}: a tuple, but the helper's return type is not one"),
                Some("declare it as `-> (T, T)`"),
            ),
            (_, TypeExpr::Tuple { .. }) => err(
                span,
                format!("{what}: a single value, but the helper's return type is a tuple"),
                Some("end the body with `(a, b)`"),
            ),
            (v, ret) => {
                let ty = self.resolve_type(ret)?;
                Ok(Val::Node(self.coerce(v, ty, span, what)?))
            }
        }
    }
}

/// `a` and `b` part by part, or an error at `span` where their counts differ: `message`
/// (of the two counts) says how, `help` what to do.
fn zip_parts<A, B: ExactSizeIterator>(
    span: SpanId,
    a: Vec<A>,
    b: B,
    message: impl FnOnce(usize, usize) -> String,
    help: Option<&str>,
) -> Result<Zip<std::vec::IntoIter<A>, B>> {
    let counts = (a.len(), b.len());
    check_count(span, counts, || message(counts.0, counts.1), help)?;
    Ok(a.into_iter().zip(b))
}
