//! Staged values: `let f = stage(e);` and `let (a, b) = stage(e);` at the top of a
//! kernel's body bind names to values computed at every point of a tile and its halo,
//! which the kernel then reads like fields: `f` at the point, `f[(dx, dy)]` at an offset
//! (see `ir/stages.rs`). A helper may take a staged value for an `In<T>` parameter and
//! read it at offsets as it reads a field.
//!
//! The staged expression is any expression of the point (fields, scalars, `index`, helper
//! calls, locals computed before it, earlier staged values at offsets). It may not read an
//! in-place field (another thread may write it before the stage is read) or a field on
//! another grid (`Fine`, `Coarse`).

use super::*;
use crate::ir::Stage;

/// The name of the built-in that stages a value.
pub(super) const STAGE: &str = "stage";

/// The staged expression of `init` when it is `stage(e)`.
pub(super) fn staged_init(init: &Expr) -> Option<(&Expr, &Ident)> {
    match &init.kind {
        ExprKind::Call { func, args } if func.name == STAGE && args.len() == 1 => {
            Some((&args[0], func))
        }
        _ => None,
    }
}

impl Lowerer<'_> {
    /// `let names = stage(value);`: the names (one, or a tuple's parts) bound to new
    /// stages.
    pub(super) fn let_stage(
        &mut self,
        names: &[(Ident, bool)],
        value: &Expr,
        call: &Ident,
        tuple: bool,
    ) -> Result<()> {
        self.check_stage_place(call)?;
        if let Some((name, _)) = names.iter().find(|(_, mutable)| *mutable) {
            return err(
                name.span,
                format!("staged value `{}` cannot be `mut`", name.name),
                Some("a staged value is computed once per point and read like a field; drop `mut`"),
            );
        }
        let parts = match self.expr_or_unit(value)? {
            Some(Val::Tuple(t)) if tuple => self.parts(t),
            Some(Val::Tuple(_)) => {
                return err(
                    value.span,
                    "this staged value is a tuple",
                    Some("name its parts: `let (a, b) = stage(..);`"),
                )
            }
            Some(v) if !tuple => vec![v],
            Some(_) => {
                return err(
                    value.span,
                    format!(
                        "`let` takes {} parts from a tuple, but this is not one",
                        names.len()
                    ),
                    Some("stage a tuple (a helper returning `(T, T)`) or name one value"),
                )
            }
            None => return err(value.span, "this expression has no value", None),
        };
        if parts.len() != names.len() {
            return err(
                value.span,
                format!(
                    "`let` takes {} parts from a tuple of {}",
                    names.len(),
                    parts.len()
                ),
                Some("name every part, `_` for those not needed"),
            );
        }
        let call = self.stages.last().map_or(0, |s| s.call + 1);
        for (part, (name, _)) in parts.into_iter().zip(names) {
            if name.name == "_" {
                continue;
            }
            let node = match part {
                Val::Tuple(_) => return self.tuple_here(value.span),
                v => self.materialize(v),
            };
            self.check_stageable(node, value.span)?;
            self.stages.push(Stage {
                name: name.name.clone(),
                value: node,
                reach_lo: [0; 3],
                reach_hi: [0; 3],
                call,
            });
            let binding = Binding::Staged(self.stages.len() as u32 - 1);
            self.scopes
                .last_mut()
                .expect("scope")
                .insert(name.name.clone(), binding);
        }
        Ok(())
    }

    /// `stage(..)` is allowed only as a `let` at the top of a grid kernel's body.
    fn check_stage_place(&self, call: &Ident) -> Result<()> {
        let top = "`stage(..)` is the value of a `let` at the top of a kernel's body";
        if self.call_stack.len() > 1 {
            return err(
                call.span,
                "a helper cannot stage a value",
                Some("stage the helper's result in the kernel: `let f = stage(helper(..));`"),
            );
        }
        if self.scopes.len() > 2 || !self.open_loops.is_empty() || self.in_loop.is_some() {
            return err(call.span, format!("{top}, not inside a block, `if` or loop"), Some("move the `let` to the kernel's body; a staged value is computed at every point, so it needs no condition"));
        }
        if self.mesh.is_some() {
            return err(
                call.span,
                "a vertex kernel cannot stage values",
                Some("staged values are read at grid offsets; compute the value at each vertex instead"),
            );
        }
        if self.line_axis.is_some() {
            return err(
                call.span,
                "a line kernel cannot stage values",
                Some("stage the values in a point kernel that writes them to a field"),
            );
        }
        Ok(())
    }

    /// A staged value reads only what every point of a tile may read at any time. The CPU
    /// relies on it too: a stage's values are a function of the launch and the point
    /// alone, so a row may take the buffers the row before computed
    /// (`stencil_runtime::cpu::StageBuffers::follows`).
    fn check_stageable(&self, value: NodeId, span: SpanId) -> Result<()> {
        for node in self.nodes_of(value) {
            if let Node::Load { field, .. } = node {
                let f = &self.fields[field as usize];
                if f.access == Access::InOut {
                    return err(span, format!("this staged value reads in-place field `{}`, which other points of the tile write during the launch", f.name), Some("stage values of `In<T>` fields only; read the in-place field in the kernel"));
                }
                if f.map != IndexMap::Same {
                    return err(span, format!("this staged value reads `{}`, a field on another grid", f.name), Some("stage values of fields on the kernel's own grid; read `Fine` and `Coarse` fields in the kernel"));
                }
            }
        }
        Ok(())
    }

    /// The nodes the value `value` is computed from, itself included.
    fn nodes_of(&self, value: NodeId) -> Vec<Node> {
        let mut stack = vec![value];
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        while let Some(n) = stack.pop() {
            if seen.insert(n) {
                let node = self.b.node(n);
                stack.extend(crate::ir::operands(&node));
                out.push(node);
            }
        }
        out
    }

    /// Staged value `s` read at `offset` (from the read at `span`), after checking how far
    /// the read reaches through the stage's field reads.
    pub(super) fn staged_read(&mut self, s: u32, offset: [i32; 3], span: SpanId) -> Result<NodeId> {
        let stage = &self.stages[s as usize];
        for (field, o) in self.stage_loads(s, offset) {
            for (a, &k) in o.iter().enumerate() {
                let limit = self.declared_halo.map_or(MAX_OFFSET, |h| h as i32);
                if k.abs() > limit {
                    let what = match self.declared_halo {
                        Some(h) => format!("the declared halo ({h})"),
                        None => format!("the largest supported offset ({MAX_OFFSET})"),
                    };
                    return err(
                        span,
                        format!(
                            "this read of `{}` reaches field `{}` at offset {k} along axis {a}, beyond {what}",
                            stage.name, self.fields[field as usize].name
                        ),
                        Some("the stage reads its fields at offsets from the point it is read at; read it closer"),
                    );
                }
            }
        }
        // (The stage's reach is taken from its live reads when the kernel is finished.)
        let ty = self.b.ty(stage.value);
        Ok(self.b.add(Node::Staged { stage: s, offset }, ty))
    }

    /// The field reads of stage `s` read at `offset`: `(field, offset)` of each, through
    /// the stages it reads.
    fn stage_loads(&self, s: u32, offset: [i32; 3]) -> Vec<(u32, [i32; 3])> {
        let mut out = Vec::new();
        for node in self.nodes_of(self.stages[s as usize].value) {
            match node {
                Node::Load { field, offset: o } => {
                    out.push((field, [0, 1, 2].map(|a| o[a] + offset[a])))
                }
                Node::Staged { stage, offset: o } => {
                    out.extend(self.stage_loads(stage, [0, 1, 2].map(|a| o[a] + offset[a])))
                }
                _ => {}
            }
        }
        out
    }
}
