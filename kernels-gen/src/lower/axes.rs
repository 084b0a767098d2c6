//! Dimension-generic code: `ndims()` is the kernel's number of dimensions and `unit(a)`
//! the offset one point along axis `a` (a tuple with a 1 in place `a`), so a helper can
//! be written per axis once, `for a in 0..ndims() { s += u[unit(a)] + u[-unit(a)]; }`,
//! and serve 1D, 2D and 3D kernels alike. Both are constants where the helper is inlined:
//! the loop unrolls and the reads are ordinary offsets.

use super::{err, Lowerer, Result, Val};
use crate::ast::{Expr, SpanId};

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
