//! Dimension-generic code: `ndims()` is the kernel's number of dimensions and `unit(a)`
//! the offset one point along axis `a` (a tuple with a 1 in place `a`), so a helper can
//! be written per axis once, `for a in 0..ndims() { s += u[unit(a)] + u[-unit(a)]; }`,
//! and serve 1D, 2D and 3D kernels alike. Both are constants where the helper is inlined:
//! the loop unrolls and the reads are ordinary offsets.

use super::{err, Binding, Lowerer, Result, Val};
use crate::ast::{self, Expr, FnDef, SpanId};
use crate::ir::{Node, ParamKind, ScalarParam, Ty};

impl Lowerer<'_> {
    /// `ndims()`.
    pub(super) fn ndims(&mut self, args: &[Expr], span: SpanId) -> Result<Val> {
        if !args.is_empty() {
            return err(span, "`ndims` takes no arguments", Some("write `ndims()`"));
        }
        Ok(Val::IntLit(i64::from(self.dims)))
    }

    /// `unit(axis)`.
    pub(super) fn unit(&mut self, args: &[Expr], span: SpanId) -> Result<Val> {
        let axis = self.axis_arg("unit", args, span)?;
        let parts = (0..self.dims)
            .map(|a| Val::IntLit(i64::from(a == axis)))
            .collect();
        self.tuples.push(parts);
        Ok(Val::Tuple(self.tuples.len() as u32 - 1))
    }
}

/// The parameter type of one value per axis, `a: Axes<T>`: a kernel's takes one scalar per
/// axis of the kernel (`a_0`, `a_1`, ...; the launcher one slice), a helper's whatever
/// `Axes` its caller passes. `a[k]`, with `k` a constant axis, is the value along axis `k`.
pub(crate) const AXES_TYPE: &str = "Axes";

impl Lowerer<'_> {
    /// Declares kernel parameter `name: Axes<elem>`: one scalar parameter per axis, seen in
    /// the body as a tuple of their values.
    pub(super) fn declare_axes(&mut self, name: &str, elem: Ty) -> Binding {
        let mut parts = Vec::new();
        for axis in 0..self.dims {
            let idx = self.scalars.len() as u32;
            self.scalars.push(ScalarParam {
                name: format!("{name}_{axis}"),
                ty: elem,
                axis_of: Some((name.to_string(), axis)),
                member_of: None,
                held: false,
            });
            self.param_order.push((ParamKind::Scalar, idx));
            parts.push(Val::Node(self.b.add(Node::Scalar(idx), elem)));
        }
        self.tuples.push(parts);
        self.new_local(name, Val::Tuple(self.tuples.len() as u32 - 1), false)
    }

    /// The names given to the values of `Axes` parameters must not be another parameter's.
    pub(super) fn check_axes_names(&self, f: &FnDef) -> Result<()> {
        for s in &self.scalars {
            let Some((of, axis)) = &s.axis_of else {
                continue;
            };
            if let Some(p) = f.params.iter().find(|p| p.name.name == s.name) {
                return err(
                    p.name.span,
                    format!(
                        "`{}` is the name of `{of}`'s value along axis {axis}",
                        s.name
                    ),
                    Some("rename this parameter"),
                );
            }
        }
        Ok(())
    }

    /// `a[k]`: part `k` (a constant axis) of the tuple `t`, an `Axes` parameter's values.
    pub(super) fn axis_value(&mut self, t: u32, offsets: &[Expr], span: SpanId) -> Result<Val> {
        let [o] = offsets else {
            return err(
                span,
                "a value per axis is indexed by one axis",
                Some("write `a[k]` with `k` an axis, e.g. a loop variable of `0..ndims()`"),
            );
        };
        let v = self.expr(o)?;
        let parts = self.parts(t);
        match self.const_int(v) {
            Some(k) if (0..parts.len() as i64).contains(&k) => Ok(parts[k as usize]),
            Some(k) => err(
                o.span,
                format!(
                    "axis {k} does not exist in a {}-dimensional kernel",
                    parts.len()
                ),
                Some(&format!("axes are 0..{}", parts.len())),
            ),
            None => err(
                o.span,
                "the axis must be an integer constant",
                Some("use a literal, or a loop variable of `for a in 0..ndims()`"),
            ),
        }
    }

    /// The argument of a helper's `Axes` parameter: the values per axis the caller names.
    pub(super) fn axes_arg(&mut self, helper: &FnDef, p: &ast::Param, a: &Expr) -> Result<Val> {
        match self.expr_or_unit(a)? {
            Some(v @ Val::Tuple(t)) if self.parts(t).len() == self.dims as usize => Ok(v),
            _ => err(
                a.span,
                format!(
                    "parameter `{}` of `{}` takes one value per axis",
                    p.name.name, helper.name.name
                ),
                Some("pass the name of an `Axes<..>` parameter"),
            ),
        }
    }
}
