//! Lowering of sampled grids: `g: Sampled<T>` parameters and `g.sample(x, y)`, the
//! bilinear interpolation of a structured 2D grid at a position the kernel computes.

use super::{err, Binding, Lowerer, Result};
use crate::ast::{Expr, Ident, SpanId};
use crate::ir::{Node, NodeId, ParamKind, SampledParam, Ty};

/// The type name of a sampled-grid parameter.
pub(super) const SAMPLED_TYPE: &str = "Sampled";

impl Lowerer<'_> {
    /// Declares the `Sampled<elem>` parameter `name`.
    pub(super) fn declare_sampled(
        &mut self,
        name: &str,
        elem: Ty,
        elem_span: SpanId,
    ) -> Result<Binding> {
        if !elem.is_float() {
            return err(
                elem_span,
                format!("a sampled grid holds real numbers, not `{elem}`"),
                Some("declare it as `Sampled<T>`, `Sampled<f32>` or `Sampled<f64>`"),
            );
        }
        let idx = self.sampled.len() as u32;
        self.sampled.push(SampledParam {
            name: name.to_string(),
            elem,
        });
        self.param_order.push((ParamKind::Sampled, idx));
        Ok(Binding::Sampled(idx))
    }

    /// `g.sample(x, y)`: grid `g` interpolated at `(x, y)`.
    pub(super) fn sample_method(
        &mut self,
        grid: u32,
        receiver: &Ident,
        method: &Ident,
        args: &[Expr],
        span: SpanId,
    ) -> Result<NodeId> {
        let usage = format!("write `{}.sample(x, y)`", receiver.name);
        if method.name != "sample" {
            return err(
                method.span,
                format!(
                    "a sampled grid has one method, `sample`, not `{}`",
                    method.name
                ),
                Some(&usage),
            );
        }
        let [x, y] = args else {
            return err(
                span,
                format!(
                    "`sample` takes 2 arguments, the position's coordinates; found {}",
                    args.len()
                ),
                Some(&usage),
            );
        };
        let elem = self.sampled[grid as usize].elem;
        let mut coordinate = |e: &Expr, axis: &str| -> Result<NodeId> {
            let v = self.expr(e)?;
            self.coerce(
                v,
                elem,
                e.span,
                &format!("{axis} coordinate sampled from `{}`", receiver.name),
            )
        };
        let (x, y) = (coordinate(x, "first")?, coordinate(y, "second")?);
        Ok(self.b.add(Node::Sample { grid, x, y }, elem))
    }
}
