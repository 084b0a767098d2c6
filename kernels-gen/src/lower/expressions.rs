//! Lowering of expressions: literals, names and field reads at offsets, operators and
//! casts, `if` as a value and the joining of the states its branches leave.

use super::*;

impl Lowerer<'_> {
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Val> {
        match self.expr_or_unit(e)? {
            Some(Val::Tuple(_)) => self.tuple_here(e.span),
            Some(v) => Ok(v),
            None => err(
                e.span,
                "this expression has no value",
                Some("an `if` used as a value needs an `else` and a value in each branch"),
            ),
        }
    }

    /// Lowers an expression that may have no value (an `if` statement, a `reduce` call).
    pub(super) fn expr_or_unit(&mut self, e: &Expr) -> Result<Option<Val>> {
        Ok(Some(match &e.kind {
            ExprKind::Lit(Lit::Float(x, suffix)) => match suffix.as_deref() {
                Some("f32") => Val::Node(self.b.real(*x, Ty::F32)),
                Some("f64") => Val::Node(self.b.real(*x, Ty::F64)),
                _ => Val::FloatLit(*x),
            },
            ExprKind::Lit(Lit::Int(x, suffix)) => match suffix.as_deref() {
                None | Some("i64") => Val::IntLit(*x),
                Some("f32") => Val::Node(self.b.real(*x as f64, Ty::F32)),
                Some("f64") => Val::Node(self.b.real(*x as f64, Ty::F64)),
                Some(s) => {
                    return err(
                        e.span,
                        format!("integer suffix `{s}` is not supported"),
                        Some("integers in kernels are `i64`"),
                    )
                }
            },
            ExprKind::Lit(Lit::Bool(v)) => Val::Node(self.b.boolean(*v)),
            ExprKind::Tuple(items) => self.tuple_value(items)?,
            ExprKind::Member { member, .. } => return super::early::not_a_group(member),
            ExprKind::GroupLit { name, .. } => return super::early::not_a_known_group(name),
            ExprKind::Break => return self.exit(true, e.span),
            ExprKind::Continue => return self.exit(false, e.span),
            ExprKind::Name(id) => match self.lookup(id)? {
                Binding::Local(slot) => self.state.slots[slot].val,
                Binding::Field(f) => Val::Node(self.load(f, [0; 3], id, e.span)?),
                Binding::Staged(s) => Val::Node(self.staged_read(s, [0; 3], e.span)?),
                Binding::Mesh => return err(
                    id.span,
                    format!("the mesh `{}` is not a value", id.name),
                    Some("use its methods: `mesh.vertex()`, `mesh.corner(t, k)`, and `for j in mesh.neighbours()` / `for t in mesh.triangles()`"),
                ),
                Binding::Sampled(_) => return err(
                    id.span,
                    format!("the sampled grid `{}` is not a value", id.name),
                    Some(&format!("read it at a position with `{}.sample(x, y)`", id.name)),
                ),
                Binding::Reduction(_) => return err(
                    id.span,
                    format!("reduction `{}` cannot be read inside the kernel", id.name),
                    Some("its result is returned by the launch; contribute with `.reduce(value)`"),
                ),
            },
            ExprKind::Paren(inner) => return self.expr_or_unit(inner),
            ExprKind::Unary(op, a) => {
                let v = match self.expr_or_unit(a)? {
                    // `-d` for an offset `d`: each part negated.
                    Some(Val::Tuple(t)) if *op == ast::UnOp::Neg => {
                        let mut parts = Vec::new();
                        for p in self.parts(t) {
                            parts.push(match p {
                                Val::IntLit(x) => Val::IntLit(x.wrapping_neg()),
                                Val::FloatLit(x) => Val::FloatLit(-x),
                                v => {
                                    let n = self.materialize(v);
                                    Val::Node(self.b.unary(Unary::Neg, n))
                                }
                            });
                        }
                        return Ok(Some(self.tuple_of(parts)));
                    }
                    Some(v) => v,
                    None => return err(a.span, "this expression has no value", None),
                };
                match (op, v) {
                    (ast::UnOp::Neg, Val::FloatLit(x)) => Val::FloatLit(-x),
                    (ast::UnOp::Neg, Val::IntLit(x)) => Val::IntLit(x.wrapping_neg()),
                    (_, Val::Tuple(_)) => return self.tuple_here(a.span),
                    (ast::UnOp::Neg, Val::Node(n)) => {
                        if self.b.ty(n) == Ty::Bool {
                            return err(
                                e.span,
                                "cannot negate a `bool`",
                                Some("use `!` for logical not"),
                            );
                        }
                        Val::Node(self.b.unary(Unary::Neg, n))
                    }
                    (ast::UnOp::Not, v) => {
                        let n = self.coerce(v, Ty::Bool, a.span, "operand of `!`")?;
                        Val::Node(self.b.unary(Unary::Not, n))
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (Some(x), Some(y)) = (self.expr_or_unit(a)?, self.expr_or_unit(b)?) else {
                    return err(e.span, "an operand of this expression has no value", None);
                };
                match (x, y) {
                    // Offsets (tuples of integers) add, subtract and scale.
                    (Val::Tuple(_), _) | (_, Val::Tuple(_))
                        if self.is_integer(x) && self.is_integer(y) =>
                    {
                        return self.tuple_arithmetic(*op, x, y, e.span).map(Some)
                    }
                    (Val::Tuple(_), _) => return self.tuple_here(a.span),
                    (_, Val::Tuple(_)) => return self.tuple_here(b.span),
                    _ => self.binary(*op, x, y, e.span)?,
                }
            }
            ExprKind::Cast(a, t) => {
                let v = self.expr(a)?;
                match narrow::Narrow::of(t) {
                    Some(to) => self.narrow_cast(v, to, e.span)?,
                    None => {
                        let ty = self.resolve_type(t)?;
                        self.cast(v, ty, e.span)?
                    }
                }
            }
            ExprKind::Index { base, offsets } => {
                let ExprKind::Name(id) = &base.kind else {
                    return err(
                        base.span,
                        "only fields can be indexed",
                        Some("write `u[(dx, dy)]` with `u` an `In<T>` field"),
                    );
                };
                // A field (`Ok`) or a staged value (`Err`), both read at offsets.
                let target = match self.lookup(id)? {
                    Binding::Field(f) => Ok(f),
                    Binding::Staged(s) => Err(s),
                    Binding::Local(slot) if matches!(self.state.slots[slot].val, Val::Tuple(_)) => {
                        let Val::Tuple(t) = self.state.slots[slot].val else {
                            unreachable!("matched above")
                        };
                        return self.axis_value(t, offsets, e.span).map(Some);
                    }
                    _ => {
                        return err(
                            id.span,
                            format!("`{}` is not a field and cannot be indexed", id.name),
                            Some("only `In<T>` fields and staged values (`let f = stage(..)`) are read at offsets"),
                        )
                    }
                };
                if let (Ok(f), true) = (target, self.mesh.is_some()) {
                    return self.gather(f, id, offsets, e.span).map(Some);
                }
                let mut off = [0i32; 3];
                // `u[d]` with `d` a tuple (an offset parameter): its parts.
                let parts: Vec<(Val, SpanId)> = match offsets.as_slice() {
                    [o] => match self.expr_or_unit(o)? {
                        Some(Val::Tuple(t)) => {
                            let parts = self.parts(t);
                            if parts.len() != self.dims as usize {
                                return err(
                                    o.span,
                                    format!(
                                        "this offset has {} components but the kernel is {}-dimensional",
                                        parts.len(),
                                        self.dims
                                    ),
                                    Some("give one offset per axis"),
                                );
                            }
                            parts.into_iter().map(|p| (p, o.span)).collect()
                        }
                        Some(v) => vec![(v, o.span)],
                        None => return self.tuple_here(o.span),
                    },
                    _ => {
                        let mut out = Vec::new();
                        for o in offsets {
                            out.push((self.expr(o)?, o.span));
                        }
                        out
                    }
                };
                for (axis, (v, at)) in parts.into_iter().enumerate() {
                    let Some(k) = self.const_int(v) else {
                        return err(
                            at,
                            "offsets must be integer constants",
                            Some("use literals, or expressions of literals and loop variables"),
                        );
                    };
                    if k.abs() > MAX_OFFSET as i64 {
                        return err(
                            at,
                            format!(
                                "offset {k} is beyond the largest supported offset ({MAX_OFFSET})"
                            ),
                            Some("split the stencil into several kernels"),
                        );
                    }
                    if let Some(h) = self.declared_halo {
                        if k.unsigned_abs() > h as u64 {
                            return err(
                                at,
                                format!("offset {k} reaches beyond the declared halo ({h})"),
                                Some("raise `halo` in the attribute, or read closer"),
                            );
                        }
                    }
                    off[axis] = k as i32;
                }
                Val::Node(match target {
                    Ok(f) => self.load(f, off, id, e.span)?,
                    Err(s) => self.staged_read(s, off, e.span)?,
                })
            }
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => return self.if_expr(cond, then, otherwise.as_deref(), e.span),
            ExprKind::Block(b) => return self.block(b),
            ExprKind::Call { func, args } => return self.call(func, args, e.span),
            ExprKind::MethodCall {
                receiver,
                method,
                args,
            } => return self.method_call(receiver, method, args, e.span),
            ExprKind::Unsupported(what) => {
                return err(
                    e.span,
                    format!("the stencil language has no {what}"),
                    Some(unsupported_help(what)),
                )
            }
        }))
    }

    pub(super) fn load(
        &mut self,
        f: u32,
        offset: [i32; 3],
        id: &Ident,
        span: SpanId,
    ) -> Result<NodeId> {
        let field = &mut self.fields[f as usize];
        if field.access == Access::Out {
            return err(span, format!("output `{}` cannot be read", id.name), Some("keep the value in a `let` local, or declare the field `In<T>` in a separate kernel"));
        }
        if field.access == Access::InOut && offset != [0; 3] {
            let parity = offset.iter().map(|o| o.unsigned_abs()).sum::<u32>() % 2;
            let along_line = self
                .line_axis
                .map(|a| offset[a as usize] != 0)
                .unwrap_or(false);
            if !self.red_black {
                return err(
                    span,
                    format!(
                        "in-place field `{}` is read away from the point, which races with its neighbours' writes",
                        id.name
                    ),
                    Some("colour the updates with `#[stencil(red_black = colour)]`, or read a separate `In<T>` copy"),
                );
            }
            if along_line {
                return err(
                    span,
                    format!(
                        "in-place field `{}` is read along the line this kernel solves for",
                        id.name
                    ),
                    Some("the line's own unknowns enter through `tridiagonal(lower, diag, upper, rhs)`; read only neighbouring lines"),
                );
            }
            if parity == 0 {
                return err(
                    span,
                    format!(
                        "in-place field `{}` is read at an offset of even parity, a point of the colour being updated",
                        id.name
                    ),
                    Some("a red-black kernel reads its in-place field at the centre and at offsets whose components sum to an odd number"),
                );
            }
        }
        for (a, &o) in offset.iter().enumerate() {
            field.reach_lo[a] = field.reach_lo[a].min(o);
            field.reach_hi[a] = field.reach_hi[a].max(o);
        }
        let elem = field.elem.value();
        Ok(self.b.add(Node::Load { field: f, offset }, elem))
    }

    pub(super) fn binary(&mut self, op: ast::BinOp, x: Val, y: Val, span: SpanId) -> Result<Val> {
        use ast::BinOp as B;
        let what = format!("operands of `{}`", op.symbol());
        // Fold literal-literal arithmetic exactly (in f64 / i64).
        if let (Val::IntLit(a), Val::IntLit(b)) = (x, y) {
            let r = match op {
                B::Add => Some(a.wrapping_add(b)),
                B::Sub => Some(a.wrapping_sub(b)),
                B::Mul => Some(a.wrapping_mul(b)),
                B::Div | B::Rem if b == 0 => return err(span, "division by zero", None),
                B::Div => Some(a.wrapping_div(b)),
                B::Rem => Some(a.wrapping_rem(b)),
                B::Bit(o) => Some(o.on_ints(a, b)),
                _ => None,
            };
            if let Some(r) = r {
                return Ok(Val::IntLit(r));
            }
        }
        if let (Val::FloatLit(a), Val::FloatLit(b)) = (x, y) {
            let r = match op {
                B::Add => Some(a + b),
                B::Sub => Some(a - b),
                B::Mul => Some(a * b),
                B::Div => Some(a / b),
                _ => None,
            };
            if let Some(r) = r {
                return Ok(Val::FloatLit(r));
            }
        }
        let (a, b) = self.unify(x, y, span, &what)?;
        let ty = self.b.ty(a);
        let bin = match op {
            B::Add => Binary::Add,
            B::Sub => Binary::Sub,
            B::Mul => Binary::Mul,
            B::Div => Binary::Div,
            B::Rem => Binary::Rem,
            B::And => Binary::And,
            B::Or => Binary::Or,
            B::Compare(c) => Binary::Compare(c),
            B::Bit(o) => Binary::Bit(o),
        };
        match bin {
            Binary::Bit(BitOp::And | BitOp::Or | BitOp::Xor) if ty.is_float() => {
                return err(
                    span,
                    format!(
                        "`{}` is defined for integers and booleans, not `{ty}`",
                        op.symbol()
                    ),
                    Some("convert with `as i64` first"),
                )
            }
            Binary::Bit(BitOp::Shl | BitOp::Shr) if ty != Ty::Int => {
                return err(
                    span,
                    format!("`{}` shifts integers, not `{ty}`", op.symbol()),
                    Some("shift an `i64` value (an integer field's value is one)"),
                )
            }
            Binary::And | Binary::Or if ty != Ty::Bool => {
                return err(
                    span,
                    format!("`{}` needs `bool` operands, found `{ty}`", op.symbol()),
                    Some("compare first, e.g. `a > 0.0 && b > 0.0`"),
                )
            }
            Binary::Rem if ty.is_float() => {
                return err(
                    span,
                    "`%` is defined for integers only",
                    Some("for reals write `x - (x / y).floor() * y`"),
                )
            }
            Binary::Add
            | Binary::Sub
            | Binary::Mul
            | Binary::Div
            | Binary::Rem
            | Binary::Compare(Comparison::Lt | Comparison::Le | Comparison::Gt | Comparison::Ge)
                if ty == Ty::Bool =>
            {
                return err(
                    span,
                    format!("`{}` is not defined for `bool`", op.symbol()),
                    Some("use `&&`, `||`, `!` and `==` on booleans"),
                )
            }
            _ => {}
        }
        Ok(Val::Node(self.b.binary(bin, a, b)))
    }

    pub(super) fn cast(&mut self, v: Val, ty: Ty, span: SpanId) -> Result<Val> {
        if ty == Ty::Bool {
            return err(
                span,
                "cannot convert to `bool` with `as`",
                Some("compare instead, e.g. `x != 0`"),
            );
        }
        Ok(match v {
            Val::IntLit(x) if ty == Ty::Int => Val::IntLit(x),
            Val::IntLit(x) => Val::Node(self.b.real(x as f64, ty)),
            Val::FloatLit(x) if ty == Ty::Int => Val::IntLit(x as i64),
            Val::FloatLit(x) => Val::Node(self.b.real(x, ty)),
            Val::Tuple(_) => return self.tuple_here(span),
            Val::Node(n) => {
                let from = self.b.ty(n);
                if from == Ty::Bool && ty.is_float() {
                    return err(
                        span,
                        "cannot convert `bool` to a real with `as`",
                        Some("write `if b { 1.0 } else { 0.0 }`"),
                    );
                }
                Val::Node(self.b.cast(n, ty))
            }
        })
    }

    pub(super) fn if_expr(
        &mut self,
        cond: &Expr,
        then: &Block,
        otherwise: Option<&Expr>,
        span: SpanId,
    ) -> Result<Option<Val>> {
        let c = self.expr(cond)?;
        let c = self.coerce(c, Ty::Bool, cond.span, "`if` condition")?;
        if let Node::BoolConst(taken) = self.b.node(c) {
            if self.names_a_constant(cond) {
                return self.decided_if(taken, then, otherwise, span);
            }
        }
        let before = self.state.clone();
        let base = before.slots.len();
        let then_val = self.block(then)?;
        let then_state = std::mem::replace(&mut self.state, before);
        let else_val = match otherwise {
            Some(o) => self.expr_or_unit(o)?,
            None => None,
        };
        let else_state = std::mem::replace(&mut self.state, then_state.clone());
        self.join(c, base, then_state, else_state, span)?;
        match (then_val, else_val) {
            (None, None) => Ok(None),
            (Some(a), Some(b)) => self.select_values(c, a, b, span).map(Some),
            (Some(_), None) if otherwise.is_none() => err(
                span,
                "an `if` without `else` has no value",
                Some("add an `else` branch, or end the branch's last expression with `;`"),
            ),
            _ => err(
                span,
                "one branch of this `if` has a value and the other has none",
                Some("give both branches a value, or neither"),
            ),
        }
    }

    /// Whether expression `e` reads a compile-time constant parameter of the kernel
    /// (`consts(..)`). An `if` on such a condition lowers only the arm taken; other
    /// conditions that fold to a constant (an unrolled loop's variable, an axis) lower
    /// both arms, as they always have: the order in which the arms create nodes is the
    /// order of the generated code, and the shipped kernels' speed was tuned with it
    /// (lowering only the taken arm made the shallow-water update 9% slower in f32 on an
    /// H100).
    fn names_a_constant(&self, e: &Expr) -> bool {
        let mut found = false;
        super::walk::walk_expr(e, &mut |_| {}, &mut |x| {
            if let ExprKind::Name(id) = &x.kind {
                found |= self.consts.iter().any(|(c, _)| *c == id.name);
            }
        });
        found
    }

    /// An `if` on a compile-time constant parameter ([`Self::names_a_constant`]): only
    /// the arm taken is lowered, so the other may read a parameter this instance lacks
    /// (`#[when(flag)]`) or where this kernel cannot (another axis, another order).
    fn decided_if(
        &mut self,
        taken: bool,
        then: &Block,
        otherwise: Option<&Expr>,
        span: SpanId,
    ) -> Result<Option<Val>> {
        let base = self.state.slots.len();
        let val = match (taken, otherwise) {
            (true, _) => self.block(then)?,
            (false, Some(o)) => self.expr_or_unit(o)?,
            (false, None) => None,
        };
        // Locals declared inside the branch are gone.
        self.state.slots.truncate(base);
        match val {
            Some(_) if otherwise.is_none() => err(
                span,
                "an `if` without `else` has no value",
                Some("add an `else` branch, or end the branch's last expression with `;`"),
            ),
            v => Ok(v),
        }
    }

    /// Merges the states after the two branches of an `if` on condition `c`.
    pub(super) fn join(
        &mut self,
        c: NodeId,
        base: usize,
        t: State,
        e: State,
        span: SpanId,
    ) -> Result<()> {
        // Locals declared inside the branches are gone; those from before are merged.
        let mut slots = t.slots.clone();
        slots.truncate(base);
        for (i, slot) in slots.iter_mut().enumerate() {
            let (a, b) = (t.slots[i].val, e.slots[i].val);
            if a != b {
                let (a, b) = self.unify(a, b, span, &format!("`{}` after `if`", slot.name))?;
                slot.val = Val::Node(self.b.select(c, a, b));
            }
        }
        let mut outputs = HashMap::new();
        // In field order, so that the selects (and the code built from them) come out the
        // same on every build.
        let mut fields: Vec<u32> = t.outputs.keys().copied().collect();
        fields.sort_unstable();
        for f in fields {
            let (a, b) = (t.outputs[&f], e.outputs[&f]);
            use OutState::*;
            let merged = match (a, b) {
                (Unwritten, Unwritten) => Unwritten,
                (Written(x), Written(y)) => Written(self.b.select(c, x, y)),
                (Written(x) | Partial(x, _), Unwritten)
                | (Unwritten, Written(x) | Partial(x, _)) => Partial(x, span),
                (Partial(x, s), Written(y)) => Partial(self.b.select(c, x, y), s),
                (Written(x), Partial(y, s)) => Partial(self.b.select(c, x, y), s),
                (Partial(x, s), Partial(y, _)) => Partial(self.b.select(c, x, y), s),
            };
            outputs.insert(f, merged);
        }
        let mut contributions = HashMap::new();
        for r in 0..self.reductions.len() as u32 {
            let (a, b) = (
                t.contributions.get(&r).copied(),
                e.contributions.get(&r).copied(),
            );
            let red = &self.reductions[r as usize];
            let (op, ty) = (red.op, red.ty);
            let merged = match (a, b) {
                (None, None) => continue,
                (Some(x), Some(y)) => self.b.select(c, x, y),
                (Some(x), None) => {
                    let id = self.b.real(op.identity(), ty);
                    self.b.select(c, x, id)
                }
                (None, Some(y)) => {
                    let id = self.b.real(op.identity(), ty);
                    self.b.select(c, id, y)
                }
            };
            contributions.insert(r, merged);
        }
        self.state = State {
            slots,
            outputs,
            contributions,
        };
        Ok(())
    }
}
