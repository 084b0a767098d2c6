//! Lowering of statements: blocks and their scopes, `let` (and `let` of a tuple's
//! parts), assignments to locals and outputs (guarded after a `break` or `continue`),
//! unrolled `for` loops and loops over the mesh.

use super::*;

impl Lowerer<'_> {
    /// Lowers a block in a new scope; returns its tail value, if any.
    pub(super) fn block(&mut self, b: &Block) -> Result<Option<Val>> {
        self.scopes.push(HashMap::new());
        let r = self.block_inner(b);
        self.scopes.pop();
        r
    }

    pub(super) fn block_inner(&mut self, b: &Block) -> Result<Option<Val>> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        match &b.tail {
            Some(t) => self.expr_or_unit(t),
            None => Ok(None),
        }
    }

    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s {
            Stmt::Let {
                name,
                mutable,
                ty,
                init,
                span,
            } => {
                let Some(init) = init else {
                    return err(*span, format!("`let {}` needs an initial value", name.name), Some("write `let x = value;`; declare with `let mut` and assign in both branches of an `if` if needed"));
                };
                if let Some((value, call)) = stages::staged_init(init) {
                    if let Some(t) = ty {
                        return err(t.span(), format!("staged value `{}` takes the type of its expression", name.name), Some("drop the type, and cast inside if needed: `let f = stage(e as f32);`"));
                    }
                    return self.let_stage(&[(name.clone(), *mutable)], value, call, false);
                }
                // The initial value, lowered once. An immutable local may hold an offset
                // (`let d = unit(a);`).
                let mut v = match self.expr_or_unit(init)? {
                    Some(v @ Val::Tuple(_)) if ty.is_none() => {
                        if *mutable {
                            return err(
                                name.span,
                                format!("`{}` holds a tuple, which cannot be changed", name.name),
                                Some("drop `mut`: offsets and tuples are named, not assigned"),
                            );
                        }
                        self.declare_local(&name.name, v, false);
                        return Ok(());
                    }
                    Some(Val::Tuple(_)) => return self.tuple_here(init.span),
                    Some(v) => v,
                    None => return err(
                        init.span,
                        "this expression has no value",
                        Some("an `if` used as a value needs an `else` and a value in each branch"),
                    ),
                };
                if let Some(t) = ty {
                    let t = self.resolve_type(t)?;
                    v = Val::Node(self.coerce(v, t, init.span, &format!("`let {}`", name.name))?);
                } else if *mutable {
                    // A mutable local's type is fixed where it is declared.
                    v = Val::Node(self.materialize(v));
                }
                self.declare_local(&name.name, v, *mutable);
                Ok(())
            }
            Stmt::LetTuple { names, init, .. } if stages::staged_init(init).is_some() => {
                let (value, call) = stages::staged_init(init).expect("matched");
                self.let_stage(names, value, call, true)
            }
            Stmt::LetTuple { names, init, span } => self.let_tuple(names, init, *span),
            Stmt::Assign {
                target,
                op,
                value,
                span,
            } => self.assign(target, *op, value, *span),
            Stmt::For {
                var,
                start,
                end,
                inclusive,
                body,
                span,
            } => {
                let lo = self.expr(start)?;
                let hi = self.expr(end)?;
                let (Some(lo), Some(hi)) = (self.const_int(lo), self.const_int(hi)) else {
                    let bad = if self.const_int(lo).is_none() {
                        start.span
                    } else {
                        end.span
                    };
                    return err(bad, "loop bounds must be integer constants", Some("loops are unrolled at compile time: use literals, or expressions of literals and enclosing loop variables"));
                };
                let hi = if *inclusive { hi + 1 } else { hi };
                let count = (hi - lo).max(0) as usize;
                self.unrolled += count;
                if self.unrolled > MAX_UNROLL {
                    return err(
                        *span,
                        format!("loops in this kernel unroll to more than {MAX_UNROLL} iterations"),
                        Some("loops are unrolled; use fewer or shorter loops"),
                    );
                }
                self.open_unrolled_loop();
                for k in lo..hi {
                    self.begin_iteration();
                    self.loop_iteration(var, Val::IntLit(k), body)?;
                }
                self.close_loop();
                Ok(())
            }
            Stmt::ForEach {
                var,
                iter,
                body,
                span,
            } => self.runtime_loop(var, iter, body, *span),
            Stmt::Expr(e) => {
                self.expr_or_unit(e)?;
                Ok(())
            }
            Stmt::Unsupported { what, span } => err(
                *span,
                format!("the stencil language has no {what}"),
                Some(unsupported_help(what)),
            ),
        }
    }

    /// The error of assigning to `target`, which is not a name.
    fn not_assignable(&self, target: &Expr) -> Result<()> {
        let ExprKind::Index { base, .. } = &target.kind else {
            return err(
                target.span,
                "only names can be assigned to",
                Some("assign to a `let mut` local or an output field"),
            );
        };
        if let ExprKind::Name(id) = &base.kind {
            if let Ok(Binding::Field(f)) = self.lookup(id) {
                if self.fields[f as usize].access == Access::Out {
                    return err(
                        target.span,
                        format!(
                            "output `{}` can only be written at the current point",
                            id.name
                        ),
                        Some(&format!(
                            "write `{} = value;`; each point writes its own value",
                            id.name
                        )),
                    );
                }
                return err(
                    target.span,
                    format!("`{}` is an input field and cannot be written", id.name),
                    Some("declare an `Out<T>` field for the result"),
                );
            }
        }
        err(target.span, "only names can be assigned to", None)
    }

    fn assign(
        &mut self,
        target: &Expr,
        op: Option<ast::BinOp>,
        value: &Expr,
        span: SpanId,
    ) -> Result<()> {
        match &target.kind {
            ExprKind::Tuple(targets) => self.assign_parts(targets, op, value, span),
            _ => self.assign_one(target, op, Rhs::Expr(value), value.span, span),
        }
    }

    /// `(a, b, ..) = value;`: each name assigned its part of the tuple `value`, as by
    /// `a = part;`.
    fn assign_parts(
        &mut self,
        targets: &[Expr],
        op: Option<ast::BinOp>,
        value: &Expr,
        span: SpanId,
    ) -> Result<()> {
        if let Some(o) = op {
            return err(
                span,
                format!("`{}=` does not take a tuple of names", o.symbol()),
                Some("assign the parts one by one, or with `=`"),
            );
        }
        let parts = match self.expr_or_unit(value)? {
            Some(Val::Tuple(t)) => self.parts(t),
            _ => {
                return err(
                    value.span,
                    format!("{} names are assigned a single value", targets.len()),
                    Some("assign a tuple, e.g. a helper's result `(a, b) = pair(..);`"),
                )
            }
        };
        super::check_count(
            value.span,
            (parts.len(), targets.len()),
            || {
                format!(
                    "{} names are assigned a tuple of {}",
                    targets.len(),
                    parts.len()
                )
            },
            Some("name every part of the tuple"),
        )?;
        for (target, part) in targets.iter().zip(parts) {
            self.assign_one(target, None, Rhs::Val(part), value.span, span)?;
        }
        Ok(())
    }

    /// `target = rhs;` (or `target op= rhs;`), `value_span` where the value is written.
    fn assign_one(
        &mut self,
        target: &Expr,
        op: Option<ast::BinOp>,
        rhs: Rhs,
        value_span: SpanId,
        span: SpanId,
    ) -> Result<()> {
        let ExprKind::Name(id) = &target.kind else {
            return self.not_assignable(target);
        };
        let binding = self.lookup(id)?;
        if matches!(binding, Binding::Field(_)) && self.call_stack.len() > 1 {
            return err(
                id.span,
                format!(
                    "helpers read fields but do not write them; `{}` is written here",
                    id.name
                ),
                Some("return the value from the helper and assign the field in the kernel"),
            );
        }
        let rhs = match rhs {
            Rhs::Expr(e) => self.expr(e)?,
            Rhs::Val(v) => v,
        };
        match binding {
            Binding::Field(f) => {
                let field = &self.fields[f as usize];
                if field.access == Access::In {
                    return err(
                        id.span,
                        format!("`{}` is an input field and cannot be written", id.name),
                        Some("declare an `Out<T>` field for the result"),
                    );
                }
                let rhs = match (op, self.state.outputs[&f]) {
                    (Some(o), OutState::Written(current)) if field.access == Access::InOut => {
                        self.binary(o, Val::Node(current), rhs, span)?
                    }
                    _ => rhs,
                };
                let field = &self.fields[f as usize];
                if op.is_some() && field.access == Access::Out {
                    return err(
                        span,
                        format!(
                            "`{} {}=` reads output `{}`, and outputs cannot be read",
                            id.name,
                            op.map(|o| o.symbol()).unwrap_or(""),
                            id.name
                        ),
                        Some("compute the value in a `let mut` local and assign it once"),
                    );
                }
                let elem = field.elem.value();
                let what = format!("value written to `{}`", id.name);
                let n = self.coerce(rhs, elem, value_span, &what)?;
                // After a `break` or `continue` the write may not happen.
                let before = self.state.outputs[&f];
                let written = match before {
                    OutState::Written(old) => OutState::Written(self.guarded(n, old)),
                    OutState::Partial(old, s) => OutState::Partial(self.guarded(n, old), s),
                    OutState::Unwritten if self.writes_guarded() => OutState::Partial(n, span),
                    OutState::Unwritten => OutState::Written(n),
                };
                self.state.outputs.insert(f, written);
                Ok(())
            }
            Binding::Staged(_) => err(
                id.span,
                format!("staged value `{}` is read-only", id.name),
                Some("a staged value is computed once per point; name a new value with `let`"),
            ),
            Binding::Mesh => err(
                id.span,
                format!("the mesh `{}` cannot be assigned", id.name),
                Some("write results to `Out<T>` or `InOut<T>` fields"),
            ),
            Binding::Sampled(_) => err(
                id.span,
                format!("the sampled grid `{}` is read-only", id.name),
                Some("write results to `Out<T>` or `InOut<T>` fields"),
            ),
            Binding::Reduction(_) => err(
                id.span,
                format!("`{}` is a reduction and cannot be assigned", id.name),
                Some(&format!(
                    "contribute a value with `{}.reduce(value);`",
                    id.name
                )),
            ),
            Binding::Local(slot) => {
                let s = &self.state.slots[slot];
                if !s.mutable {
                    let scalar = self.call_stack.len() == 1
                        && self.scalars.iter().any(|p| p.name == s.name)
                        && slot < self.scalars.len();
                    if scalar {
                        return err(
                            id.span,
                            format!("cannot assign to parameter `{}`", id.name),
                            Some("parameters are read-only; copy it into a `let mut` local"),
                        );
                    }
                    return err(
                        id.span,
                        format!("cannot assign twice to `{}`", id.name),
                        Some("declare it with `let mut`"),
                    );
                }
                let old = s.val;
                let new = match op {
                    None => rhs,
                    Some(o) => self.binary(o, old, rhs, span)?,
                };
                let ty = self.ty_of(old).expect("mutable locals are typed");
                let what = format!("value assigned to `{}`", id.name);
                let n = self.coerce(new, ty, value_span, &what)?;
                let n = match old {
                    Val::Node(o) => self.guarded(n, o),
                    _ => n,
                };
                self.state.slots[slot].val = Val::Node(n);
                Ok(())
            }
        }
    }

    /// One iteration of a loop: `body` with `var` bound to `value`, in a scope of its own;
    /// the body may not end in a value.
    pub(super) fn loop_iteration(&mut self, var: &Ident, value: Val, body: &Block) -> Result<()> {
        self.scopes.push(HashMap::new());
        self.declare_local(&var.name, value, false);
        let r = self.block(body);
        self.scopes.pop();
        if r?.is_some() {
            return err(
                body.span,
                "a loop body cannot end in a value",
                Some("end the last expression with `;`"),
            );
        }
        Ok(())
    }
}

/// The value of an assignment: an expression still to lower, or a part of a tuple.
enum Rhs<'e> {
    Expr(&'e Expr),
    Val(Val),
}
