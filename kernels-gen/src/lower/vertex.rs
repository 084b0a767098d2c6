//! Lowering of vertex kernels: the `Mesh` parameter, its methods, gathers from other
//! vertices, and loops over the current vertex's neighbours or triangles.
//!
//! A run-time loop becomes a [`RuntimeLoop`]: the mutable locals the body assigns are
//! carried from one iteration to the next ([`Node::Carried`] while the body is lowered,
//! [`Node::LoopResult`] after it), and the item is read from the mesh at the loop's
//! position ([`Node::LoopPos`]). Values that do not depend on the iteration are built
//! outside the loop's nodes, so they are computed once per vertex.

use super::{err, Binding, Lowerer, Result, Val};
use crate::ast::{self, Block, Expr, ExprKind, FnDef, Ident, SpanId, Stmt};
use crate::ir::{Access, Around, Node, NodeId, ParamKind, RuntimeLoop, Topo, Ty};

/// The type name of a vertex kernel's mesh parameter.
pub(super) const MESH_TYPE: &str = "Mesh";

const MESH_METHODS: &str = "a mesh has `vertex()`, `corner(t, k)`, `neighbours()` and `triangles()` (the last two as the list of a `for` loop)";

/// The kernel's `Mesh` parameter, if it has one.
pub(super) fn mesh_param(f: &FnDef) -> Option<&ast::Param> {
    f.params
        .iter()
        .find(|p| matches!(&p.ty, ast::TypeExpr::Name(id) if id.name == MESH_TYPE))
}

/// Checks the attributes of a vertex kernel and returns its dimension (1: one value per
/// vertex).
pub(super) fn check_attrs(f: &FnDef) -> Result<u8> {
    if let Some((list, span)) = &f.attrs.dims {
        if list.as_slice() != [1] {
            let d = list
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            return err(
                *span,
                format!(
                    "a vertex kernel (it takes a `Mesh`) has no grid: `dims = {d}` does not apply"
                ),
                Some("remove `dims`: its fields hold one value per vertex"),
            );
        }
    }
    if let Some((_, span)) = f.attrs.line {
        return err(
            span,
            "a vertex kernel cannot be a line kernel",
            Some("remove `line`"),
        );
    }
    if let Some(id) = &f.attrs.red_black {
        return err(
            id.span,
            "a vertex kernel is coloured by the vertex set it is launched on, not by `red_black`",
            Some("remove `red_black` and launch it on each colour of a colouring"),
        );
    }
    if let Some((_, span)) = f.attrs.halo {
        return err(span, "a vertex kernel has no halo", Some("remove `halo`"));
    }
    Ok(1)
}

/// The names a block assigns with `=` or `op=` (at any depth).
/// Whether a loop body may `break` out of its loop (a `break` inside a nested unrolled
/// loop leaves that loop instead).
fn breaks_out(b: &Block) -> bool {
    b.stmts
        .iter()
        .any(|s| matches!(s, Stmt::Expr(e) if breaks_in(e)))
        || b.tail.as_deref().is_some_and(breaks_in)
}

/// Whether evaluating `e` may `break` out of the enclosing loop.
fn breaks_in(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Break => true,
        ExprKind::If {
            then, otherwise, ..
        } => breaks_out(then) || otherwise.as_deref().is_some_and(breaks_in),
        ExprKind::Block(b) => breaks_out(b),
        ExprKind::Paren(a) => breaks_in(a),
        _ => false,
    }
}

fn assigned_names(b: &Block, out: &mut Vec<String>) {
    for s in &b.stmts {
        match s {
            Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) => assigned_in_expr(e, out),
            Stmt::Assign { target, value, .. } => {
                if let ExprKind::Name(id) = &target.kind {
                    out.push(id.name.clone());
                }
                assigned_in_expr(value, out);
            }
            Stmt::For { body, .. } | Stmt::ForEach { body, .. } => assigned_names(body, out),
            _ => {}
        }
    }
    if let Some(t) = &b.tail {
        assigned_in_expr(t, out);
    }
}

fn assigned_in_expr(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::If {
            then, otherwise, ..
        } => {
            assigned_names(then, out);
            if let Some(o) = otherwise {
                assigned_in_expr(o, out);
            }
        }
        ExprKind::Block(b) => assigned_names(b, out),
        ExprKind::Paren(a) => assigned_in_expr(a, out),
        ExprKind::Tuple(items) => items.iter().for_each(|i| assigned_in_expr(i, out)),
        _ => {}
    }
}

impl Lowerer<'_> {
    /// Declares the `Mesh` parameter `name`.
    pub(super) fn declare_mesh(&mut self, name: &str, span: SpanId) -> Result<Binding> {
        if self.call_stack.len() > 1 {
            return err(
                span,
                "`Mesh` is only allowed as a kernel parameter",
                Some("helpers take the values they need as scalars"),
            );
        }
        if let Some(first) = &self.mesh {
            return err(
                span,
                format!("a vertex kernel takes one mesh; `{first}` is already declared"),
                Some("remove this parameter"),
            );
        }
        self.mesh = Some(name.to_string());
        self.param_order.push((ParamKind::Mesh, 0));
        Ok(Binding::Mesh)
    }

    /// Whether `n` is a vertex number taken from the mesh (so that a gather at it stays
    /// inside every field).
    fn is_vertex_number(&self, n: NodeId) -> bool {
        match self.b.node(n) {
            Node::Index(0) | Node::Topo { .. } => true,
            Node::Select(_, a, b) => self.is_vertex_number(a) && self.is_vertex_number(b),
            _ => false,
        }
    }

    /// `x[j]` in a vertex kernel: field `f` at vertex `j`.
    pub(super) fn gather(
        &mut self,
        f: u32,
        id: &Ident,
        offsets: &[Expr],
        span: SpanId,
    ) -> Result<Val> {
        const HELP: &str = "read a field at the vertex (`x`), at a neighbour `j` of `for j in mesh.neighbours()`, or at a corner `mesh.corner(t, k)` of `for t in mesh.triangles()`";
        let [at] = offsets else {
            return err(
                span,
                format!(
                    "`{}` holds one value per vertex: index it with one vertex",
                    id.name
                ),
                Some(HELP),
            );
        };
        let v = self.expr(at)?;
        let n = match v {
            Val::Node(n) if self.is_vertex_number(n) => n,
            _ => {
                return err(
                    at.span,
                    "a field of a vertex kernel is read only at vertices of the mesh",
                    Some(HELP),
                )
            }
        };
        if n == self.b.add(Node::Index(0), Ty::Int) {
            return Ok(Val::Node(self.load(f, [0; 3], id, span)?));
        }
        let field = &self.fields[f as usize];
        if field.access == Access::Out {
            return err(
                span,
                format!("output `{}` cannot be read", id.name),
                Some("declare it `InOut<T>` to read the values at other vertices"),
            );
        }
        let elem = field.elem.value();
        Ok(Val::Node(self.b.add(
            Node::Gather {
                field: f,
                vertex: n,
            },
            elem,
        )))
    }

    /// `mesh.vertex()` and `mesh.corner(t, k)`.
    pub(super) fn mesh_method(
        &mut self,
        method: &Ident,
        args: &[Expr],
        span: SpanId,
    ) -> Result<Val> {
        match method.name.as_str() {
            "vertex" => {
                if !args.is_empty() {
                    return err(span, "`vertex()` takes no arguments", None);
                }
                Ok(Val::Node(self.b.add(Node::Index(0), Ty::Int)))
            }
            "corner" => {
                let [t, k] = args else {
                    return err(
                        span,
                        "`corner` takes 2 arguments: `mesh.corner(t, k)` with `t` from `mesh.triangles()` and `k` 0, 1 or 2",
                        None,
                    );
                };
                let tv = self.expr(t)?;
                let pos = match (tv, self.in_loop) {
                    (Val::Node(n), Some((l, Around::Triangles)))
                        if self.b.node(n) == Node::LoopPos(l) =>
                    {
                        n
                    }
                    _ => {
                        return err(
                            t.span,
                            "`corner` takes a triangle of the loop `for t in mesh.triangles()` it is called in",
                            Some("call it inside that loop with its variable"),
                        )
                    }
                };
                let kv = self.expr(k)?;
                let table = match self.const_int(kv) {
                    Some(0) => return Ok(Val::Node(self.b.add(Node::Index(0), Ty::Int))),
                    Some(1) => Topo::Corner1,
                    Some(2) => Topo::Corner2,
                    _ => {
                        return err(
                            k.span,
                            "a triangle's corner is 0 (the vertex itself), 1 or 2 (the next ones counter-clockwise)",
                            Some("use a constant 0, 1 or 2"),
                        )
                    }
                };
                Ok(Val::Node(self.b.add(Node::Topo { table, pos }, Ty::Int)))
            }
            "neighbours" | "triangles" => err(
                method.span,
                format!(
                    "`{}()` is a list: it is only the list of a `for` loop",
                    method.name
                ),
                Some(&format!(
                    "write `for item in mesh.{}() {{ .. }}`",
                    method.name
                )),
            ),
            other => err(
                method.span,
                format!("unknown mesh method `{other}`"),
                Some(MESH_METHODS),
            ),
        }
    }

    /// `for var in mesh.neighbours() { body }` (or `mesh.triangles()`).
    pub(super) fn runtime_loop(
        &mut self,
        var: &Ident,
        iter: &Expr,
        body: &Block,
        span: SpanId,
    ) -> Result<()> {
        let over = self.loop_list(iter)?;
        if self.in_loop.is_some() {
            return err(
                span,
                "loops over the mesh cannot nest",
                Some("compute what the inner loop needs in a loop of its own before this one"),
            );
        }
        let l = self.loops.len() as u32;
        // The mutable locals from before the loop that the body assigns are carried.
        let mut names = Vec::new();
        assigned_names(body, &mut names);
        let mut carried: Vec<usize> = Vec::new();
        for name in names {
            let id = Ident { name, span };
            if let Ok(Binding::Local(slot)) = self.lookup(&id) {
                if self.state.slots[slot].mutable && !carried.contains(&slot) {
                    carried.push(slot);
                }
            }
        }
        // A loop that may `break` carries its alive flag and stops once it is false.
        let alive = breaks_out(body).then(|| {
            let slot = self.flag("(no break yet)");
            carried.push(slot);
            carried.len() as u32 - 1
        });
        let mut init = Vec::new();
        for (k, &slot) in carried.iter().enumerate() {
            let v = self.materialize(self.state.slots[slot].val);
            let ty = self.b.ty(v);
            init.push(v);
            self.state.slots[slot].val = Val::Node(self.b.add(Node::Carried(l, k as u32), ty));
        }
        let before = self.state.clone();
        let pos = self.b.add(Node::LoopPos(l), Ty::Int);
        let item = match over {
            Around::Neighbours => self.b.add(
                Node::Topo {
                    table: Topo::Neighbour,
                    pos,
                },
                Ty::Int,
            ),
            Around::Triangles => pos,
        };
        self.in_loop = Some((l, over));
        let alive_slot = match alive {
            Some(k) => carried[k as usize],
            // No `break`: a flag that stays true (and guards nothing).
            None => self.flag("(no break)"),
        };
        self.open_mesh_loop(alive_slot);
        let r = self.loop_iteration(var, Val::Node(item), body);
        self.close_loop();
        self.in_loop = None;
        r?;
        if self.state.outputs != before.outputs || self.state.contributions != before.contributions
        {
            return err(
                span,
                "outputs and reductions cannot be written inside a loop over the mesh",
                Some(
                    "accumulate in a `let mut` local declared before the loop, and write it after",
                ),
            );
        }
        let mut next = Vec::new();
        for (k, &slot) in carried.iter().enumerate() {
            let v = self.materialize(self.state.slots[slot].val);
            next.push(v);
            let ty = self.b.ty(v);
            self.state.slots[slot].val = Val::Node(self.b.add(Node::LoopResult(l, k as u32), ty));
        }
        // Locals declared inside the body are out of scope now.
        self.state.slots.truncate(before.slots.len());
        self.loops.push(RuntimeLoop {
            over,
            init,
            next,
            stops_when: alive,
        });
        Ok(())
    }

    /// The list a run-time loop runs over: `mesh.neighbours()` or `mesh.triangles()`.
    fn loop_list(&mut self, iter: &Expr) -> Result<Around> {
        const HELP: &str = "loops run over a constant range (`for k in 0..4`), `mesh.neighbours()` or `mesh.triangles()`";
        let ExprKind::MethodCall {
            receiver,
            method,
            args,
        } = &iter.kind
        else {
            return err(
                iter.span,
                "this is not a list a kernel can loop over",
                Some(HELP),
            );
        };
        let is_mesh = matches!(&receiver.kind, ExprKind::Name(id) if matches!(self.lookup(id), Ok(Binding::Mesh)));
        if !is_mesh {
            return err(
                iter.span,
                "this is not a list a kernel can loop over",
                Some(HELP),
            );
        }
        let over = match method.name.as_str() {
            "neighbours" => Around::Neighbours,
            "triangles" => Around::Triangles,
            other => {
                return err(
                    method.span,
                    format!("`mesh.{other}()` is not a list"),
                    Some(HELP),
                )
            }
        };
        if !args.is_empty() {
            return err(
                iter.span,
                format!("`{}()` takes no arguments", method.name),
                None,
            );
        }
        Ok(over)
    }
}
