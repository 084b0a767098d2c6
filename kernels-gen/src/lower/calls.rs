//! Lowering of calls: intrinsics and their method forms, the built-ins (`index`,
//! `extent`, `coord`, `ndims`, `unit`, `tridiagonal`), reductions' `reduce`, and helpers,
//! inlined with their arguments (values, or fields, grids and the mesh passed by name).

use super::*;

impl<'m> Lowerer<'m> {
    pub(super) fn call(
        &mut self,
        func: &Ident,
        args: &[Expr],
        span: SpanId,
    ) -> Result<Option<Val>> {
        let name = func.name.as_str();
        if let Some(&(_, arity)) = INTRINSICS.iter().find(|(n, _)| *n == name) {
            if args.len() != arity {
                let usage = ["x", "x, y", "x, y, z"][arity - 1];
                return err(
                    span,
                    format!(
                        "`{name}` takes {arity} argument{}, found {}",
                        if arity == 1 { "" } else { "s" },
                        args.len()
                    ),
                    Some(&format!("call it as `{name}({usage})`")),
                );
            }
            let vals = args
                .iter()
                .map(|a| self.expr(a))
                .collect::<Result<Vec<_>>>()?;
            return self.intrinsic(name, &vals, args, span).map(Some);
        }
        match name {
            "index" | "extent" => {
                let axis = self.axis_arg(name, args, span)?;
                let node = if name == "index" {
                    Node::Index(axis)
                } else {
                    Node::Extent(axis)
                };
                return Ok(Some(Val::Node(self.b.add(node, Ty::Int))));
            }
            "coord" => {
                if args.len() != 3 {
                    return err(
                        span,
                        "`coord` takes 3 arguments: `coord(axis, origin, spacing)`",
                        None,
                    );
                }
                let axis = self.axis_arg(name, &args[..1], span)?;
                let origin = self.expr(&args[1])?;
                let spacing = self.expr(&args[2])?;
                let (o, h) = self.unify(origin, spacing, span, "arguments of `coord`")?;
                let ty = self.b.ty(o);
                if !ty.is_float() {
                    return err(
                        args[1].span,
                        "`coord` needs real origin and spacing",
                        Some("write e.g. `coord(0, 0.0, dx)`"),
                    );
                }
                let i = self.b.add(Node::Index(axis), Ty::Int);
                let x = self.b.cast(i, ty);
                let xh = self.b.binary(Binary::Mul, x, h);
                return Ok(Some(Val::Node(self.b.binary(Binary::Add, o, xh))));
            }
            "tridiagonal" => return self.tridiagonal(args, span).map(Some),
            "ndims" => return self.ndims(args, span).map(Some),
            "unit" => return self.unit(args, span).map(Some),
            _ => {}
        }
        let found = |m: &'m Module| m.items.iter().find(|f| f.name.name == name);
        let Some(helper) = found(self.module).or_else(|| found(prelude())) else {
            let intrinsics: Vec<&str> = INTRINSICS.iter().map(|(n, _)| *n).collect();
            return err(
                func.span,
                format!("unknown function `{name}`"),
                Some(&format!(
                    "intrinsics are {}, index, extent, coord, ndims, unit, tridiagonal; the built-in helpers are det2, solve2_x, solve2_y, sym2_length2, sym2_eig_lo, sym2_eig_hi, sym2_eigvec_x, sym2_eigvec_y; your helpers must be marked `#[stencil_fn]` in the same module",
                    intrinsics.join(", ")
                )),
            );
        };
        if helper.kind == FnKind::Kernel {
            return err(
                func.span,
                format!("`{name}` is a kernel and cannot be called"),
                Some("move the shared computation into a `#[stencil_fn]` helper"),
            );
        }
        if self.call_stack.iter().any(|n| n == name) {
            return err(
                func.span,
                format!("`{name}` calls itself: helpers are inlined and cannot be recursive"),
                Some("rewrite the recursion as a constant-bound `for` loop"),
            );
        }
        if args.len() != helper.params.len() {
            return err(
                span,
                format!(
                    "`{name}` takes {} argument(s), found {}",
                    helper.params.len(),
                    args.len()
                ),
                None,
            );
        }
        let passed = helper
            .params
            .iter()
            .zip(args)
            .map(|(p, a)| self.helper_arg(helper, p, a))
            .collect::<Result<Vec<_>>>()?;
        self.inline_helper(helper, &passed, args, span).map(Some)
    }

    /// Argument `a` for parameter `p` of `helper`: a value for a scalar parameter; for an
    /// `In<T>`, `Sampled<T>` or `Mesh` parameter, the field, grid or mesh the argument names.
    pub(super) fn helper_arg(
        &mut self,
        helper: &FnDef,
        p: &ast::Param,
        a: &Expr,
    ) -> Result<HelperArg> {
        #[derive(PartialEq)]
        enum Wants {
            Mesh,
            Field,
            Sampled,
        }
        let wants = match &p.ty {
            ast::TypeExpr::Name(t) if t.name == vertex::MESH_TYPE => Wants::Mesh,
            ast::TypeExpr::Apply { head, .. } if head.name == "In" => Wants::Field,
            ast::TypeExpr::Apply { head, .. } if head.name == sampled::SAMPLED_TYPE => {
                Wants::Sampled
            }
            ast::TypeExpr::Apply { head, span, .. } => {
                return err(
                    *span,
                    format!(
                        "helper parameters are values, `In<T>` fields, `Sampled<T>` grids and `Mesh`, not `{}<..>`",
                        head.name
                    ),
                    Some("helpers only read fields: declare the parameter `In<T>`"),
                )
            }
            // A tuple parameter (an offset, `d: (i64, i64)`) takes a tuple.
            ast::TypeExpr::Tuple { .. } => {
                return match self.expr_or_unit(a)? {
                    Some(v @ Val::Tuple(_)) => Ok(HelperArg::Value(v)),
                    _ => err(
                        a.span,
                        format!("`{}` takes a tuple here (`{}`)", helper.name.name, p.name.name),
                        Some("pass one, e.g. `(1, 0)`"),
                    ),
                };
            }
            _ => return Ok(HelperArg::Value(self.expr(a)?)),
        };
        let (what, help) = match wants {
            Wants::Mesh => (
                "the kernel's mesh",
                "write the kernel's `Mesh` parameter, e.g. `mesh`",
            ),
            Wants::Field => (
                "a field",
                "write the name of an `In`, `InOut`, `Fine` or `Coarse` parameter",
            ),
            Wants::Sampled => (
                "a sampled grid",
                "write the name of a `Sampled<T>` parameter",
            ),
        };
        let bound = match &a.kind {
            ExprKind::Name(id) => self.lookup(id).ok(),
            _ => None,
        };
        match bound {
            Some(Binding::Mesh) if wants == Wants::Mesh => Ok(HelperArg::Bound(Binding::Mesh)),
            Some(Binding::Sampled(g)) if wants == Wants::Sampled => {
                Ok(HelperArg::Bound(Binding::Sampled(g)))
            }
            Some(Binding::Field(f)) if wants == Wants::Field => {
                let field = &self.fields[f as usize];
                if field.access == Access::Out {
                    return err(
                        a.span,
                        format!(
                            "output `{}` cannot be read, so it cannot be passed to a helper",
                            field.name
                        ),
                        Some("declare it `InOut<T>` to read it"),
                    );
                }
                Ok(HelperArg::Bound(Binding::Field(f)))
            }
            _ => err(
                a.span,
                format!(
                    "parameter `{}` of `{}` takes {what}: pass its name",
                    p.name.name, helper.name.name
                ),
                Some(help),
            ),
        }
    }

    /// `tridiagonal(lower, diag, upper, rhs)`: the unknown of a line kernel's system.
    pub(super) fn tridiagonal(&mut self, args: &[Expr], span: SpanId) -> Result<Val> {
        if self.line_axis.is_none() {
            return err(
                span,
                "`tridiagonal` solves along grid lines and needs a line kernel",
                Some("mark the kernel `#[stencil(line = AXIS)]`"),
            );
        }
        if self.call_stack.len() > 1 {
            return err(
                span,
                "`tridiagonal` cannot be called inside a helper",
                Some("compute the coefficients in helpers and call `tridiagonal` in the kernel"),
            );
        }
        if let Some((_, first)) = self.tridiagonal {
            let _ = first;
            return err(
                span,
                "a line kernel solves one tridiagonal system; this is a second `tridiagonal`",
                Some("compute the coefficients with `if`/`else` and call `tridiagonal` once"),
            );
        }
        if args.len() != 4 {
            return err(
                span,
                format!("`tridiagonal` takes 4 arguments, found {}", args.len()),
                Some("call it as `tridiagonal(lower, diag, upper, rhs)`"),
            );
        }
        let vals = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>>>()?;
        let ty = vals
            .iter()
            .find_map(|&v| self.ty_of(v))
            .unwrap_or(self.default_real);
        if !ty.is_float() {
            return err(
                span,
                format!("the coefficients of `tridiagonal` are real numbers, not `{ty}`"),
                None,
            );
        }
        let mut c = [0; 4];
        for (i, (&v, a)) in vals.iter().zip(args).enumerate() {
            c[i] = self.coerce(v, ty, a.span, "coefficient of `tridiagonal`")?;
        }
        self.tridiagonal = Some((c, span));
        Ok(Val::Node(self.b.add(Node::LineSolution(0), ty)))
    }

    pub(super) fn axis_arg(&mut self, name: &str, args: &[Expr], span: SpanId) -> Result<u8> {
        let [a] = args else {
            return err(
                span,
                format!("`{name}` takes one argument: the axis"),
                Some(&format!("write `{name}(0)` for the first axis")),
            );
        };
        let v = self.expr(a)?;
        match self.const_int(v) {
            Some(k) if (0..self.dims as i64).contains(&k) => Ok(k as u8),
            Some(k) => err(
                a.span,
                format!(
                    "axis {k} does not exist in a {}-dimensional kernel",
                    self.dims
                ),
                Some(&format!("axes are 0..{}", self.dims)),
            ),
            None => err(a.span, "the axis must be an integer constant", None),
        }
    }

    pub(super) fn intrinsic(
        &mut self,
        name: &str,
        vals: &[Val],
        args: &[Expr],
        span: SpanId,
    ) -> Result<Val> {
        if name == "powi" {
            return self.powi(vals, args, span);
        }
        let real_only = |l: &mut Self, n: NodeId, at: SpanId| -> Result<()> {
            let t = l.b.ty(n);
            if t.is_float() {
                Ok(())
            } else {
                err(
                    at,
                    format!("`{name}` needs a real argument, found `{t}`"),
                    Some("convert with `as T`"),
                )
            }
        };
        match vals {
            [x] => {
                let n = match *x {
                    Val::IntLit(_) if name == "abs" => self.materialize(*x),
                    Val::IntLit(k) => self.b.real(k as f64, self.default_real),
                    v => self.materialize(v),
                };
                let t = self.b.ty(n);
                if name != "abs" || t == Ty::Bool {
                    real_only(self, n, args[0].span)?;
                }
                Ok(Val::Node(match name {
                    "sqrt" => self.b.unary(Unary::Sqrt, n),
                    "abs" => self.b.unary(Unary::Abs, n),
                    "floor" => self.b.unary(Unary::Floor, n),
                    "ceil" => self.b.unary(Unary::Ceil, n),
                    "trunc" => self.b.unary(Unary::Trunc, n),
                    "round" => self.b.unary(Unary::Round, n),
                    "exp" => self.b.unary(Unary::Exp, n),
                    "ln" => self.b.unary(Unary::Ln, n),
                    "exp2" => self.b.unary(Unary::Exp2, n),
                    "log2" => self.b.unary(Unary::Log2, n),
                    "log10" => self.b.unary(Unary::Log10, n),
                    "sinh" => self.b.unary(Unary::Sinh, n),
                    "cosh" => self.b.unary(Unary::Cosh, n),
                    "tanh" => self.b.unary(Unary::Tanh, n),
                    "cbrt" => self.b.unary(Unary::Cbrt, n),
                    "asinh" => self.b.unary(Unary::Asinh, n),
                    "acosh" => self.b.unary(Unary::Acosh, n),
                    "atanh" => self.b.unary(Unary::Atanh, n),
                    "sin" => self.b.unary(Unary::Sin, n),
                    "cos" => self.b.unary(Unary::Cos, n),
                    "tan" => self.b.unary(Unary::Tan, n),
                    "asin" => self.b.unary(Unary::Asin, n),
                    "acos" => self.b.unary(Unary::Acos, n),
                    "atan" => self.b.unary(Unary::Atan, n),
                    _ => {
                        // sign(x): 1 for x > 0, -1 for x < 0, else 0 (also for NaN).
                        let zero = self.b.real(0.0, t);
                        let one = self.b.real(1.0, t);
                        let minus_one = self.b.real(-1.0, t);
                        let neg = self.b.binary(Binary::Lt, n, zero);
                        let inner = self.b.select(neg, minus_one, zero);
                        let pos = self.b.binary(Binary::Gt, n, zero);
                        self.b.select(pos, one, inner)
                    }
                }))
            }
            [x, y] => {
                let (a, b) = self.unify(*x, *y, span, &format!("arguments of `{name}`"))?;
                let op = match name {
                    "min" => Binary::Min,
                    "max" => Binary::Max,
                    "copysign" => Binary::CopySign,
                    "hypot" => Binary::Hypot,
                    "atan2" => Binary::Atan2,
                    _ => Binary::Pow,
                };
                if op != Binary::Min && op != Binary::Max || self.b.ty(a) == Ty::Bool {
                    real_only(self, a, args[0].span)?;
                }
                Ok(Val::Node(self.b.binary(op, a, b)))
            }
            [x, y, z] => {
                let (a, b) = self.unify(*x, *y, span, "arguments of `fma`")?;
                let c = self.coerce(*z, self.b.ty(a), args[2].span, "arguments of `fma`")?;
                real_only(self, a, args[0].span)?;
                Ok(Val::Node(self.b.fma(a, b, c)))
            }
            _ => unreachable!("intrinsic arity checked by the caller"),
        }
    }

    pub(super) fn method_call(
        &mut self,
        receiver: &Expr,
        method: &Ident,
        args: &[Expr],
        span: SpanId,
    ) -> Result<Option<Val>> {
        if let ExprKind::Name(id) = &receiver.kind {
            if let Ok(Binding::Mesh) = self.lookup(id) {
                return self.mesh_method(method, args, span).map(Some);
            }
            if let Ok(Binding::Sampled(g)) = self.lookup(id) {
                let n = self.sample_method(g, id, method, args, span)?;
                return Ok(Some(Val::Node(n)));
            }
            if let Ok(Binding::Reduction(r)) = self.lookup(id) {
                if method.name != "reduce" {
                    return err(
                        method.span,
                        format!(
                            "reductions have one method, `reduce`, not `{}`",
                            method.name
                        ),
                        Some(&format!("write `{}.reduce(value);`", id.name)),
                    );
                }
                let [arg] = args else {
                    return err(
                        span,
                        "`reduce` takes one argument: this point's contribution",
                        None,
                    );
                };
                let v = self.expr(arg)?;
                let red = &self.reductions[r as usize];
                let (op, ty) = (red.op, red.ty);
                let n = self
                    .coerce(
                        v,
                        ty,
                        arg.span,
                        &format!("value reduced into `{}`", id.name),
                    )
                    .map_err(|mut e| {
                        e.help = Some(format!(
                            "`{}` collects `{ty}` values; convert with `as {ty}`",
                            id.name
                        ));
                        e
                    })?;
                let identity = self.b.real(op.identity(), ty);
                let n = self.guarded(n, identity);
                let merged = match self.state.contributions.get(&r) {
                    Some(&prev) => self.b.binary(op.combine(), prev, n),
                    None => n,
                };
                self.state.contributions.insert(r, merged);
                return Ok(None);
            }
        }
        let name = match method.name.as_str() {
            "mul_add" => "fma",
            "signum" => {
                return err(
                    method.span,
                    "`signum` is not available: in Rust `0.0.signum()` is 1",
                    Some("use `sign(x)`, which is 0 at 0"),
                )
            }
            "reduce" => {
                return err(
                    method.span,
                    "`reduce` is called on a reduction parameter",
                    Some("declare one as `name: Sum<T>` (or Max, Min)"),
                )
            }
            n => n,
        };
        let Some(&(_, arity)) = INTRINSICS.iter().find(|(n, _)| *n == name) else {
            return early::unknown_method(method);
        };
        if args.len() + 1 != arity {
            return err(
                span,
                format!(
                    "`.{}()` takes {} argument(s), found {}",
                    method.name,
                    arity - 1,
                    args.len()
                ),
                None,
            );
        }
        let mut all = vec![receiver.clone()];
        all.extend(args.iter().cloned());
        let vals = all
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>>>()?;
        self.intrinsic(name, &vals, &all, span).map(Some)
    }

    pub(super) fn inline_helper(
        &mut self,
        helper: &'m FnDef,
        passed: &[HelperArg],
        args: &[Expr],
        span: SpanId,
    ) -> Result<Val> {
        let generic = check_generics(helper)?;
        let mut tparams: HashMap<String, Option<Ty>> =
            generic.iter().map(|g| (g.clone(), None)).collect();
        // Bind the helper's type parameter from the first typed argument declared with it.
        for (p, a) in helper.params.iter().zip(passed) {
            let (t, ty) = match (&p.ty, a) {
                (ast::TypeExpr::Name(t), HelperArg::Value(v)) => (t, self.ty_of(*v)),
                (ast::TypeExpr::Apply { args, .. }, HelperArg::Bound(b)) => {
                    let elem = match *b {
                        Binding::Field(f) => self.fields[f as usize].elem,
                        Binding::Sampled(g) => self.sampled[g as usize].elem,
                        _ => continue,
                    };
                    match args.as_slice() {
                        [ast::TypeExpr::Name(t)] => (t, Some(elem)),
                        _ => continue,
                    }
                }
                _ => continue,
            };
            if let (Some(slot), Some(ty)) = (tparams.get_mut(&t.name), ty) {
                slot.get_or_insert(ty);
            }
        }
        for v in tparams.values_mut() {
            v.get_or_insert(self.default_real);
        }
        self.type_params.push(tparams);
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![HashMap::new()]);
        self.call_stack.push(helper.name.name.clone());
        let result = (|| {
            for ((p, passed), a) in helper.params.iter().zip(passed).zip(args) {
                let v = match passed {
                    HelperArg::Value(v) => v,
                    HelperArg::Bound(binding) => {
                        self.check_bound_field(helper, p, *binding, a.span)?;
                        self.scopes[0].insert(p.name.name.clone(), *binding);
                        continue;
                    }
                };
                let what = format!("argument `{}` of `{}`", p.name.name, helper.name.name);
                if let ast::TypeExpr::Tuple { .. } = &p.ty {
                    let t = self.returned(*v, &p.ty, a.span, &what)?;
                    let binding = self.new_local(&p.name.name, t, false);
                    self.scopes[0].insert(p.name.name.clone(), binding);
                    continue;
                }
                let ty = self.resolve_type(&p.ty)?;
                let n = self.coerce(*v, ty, a.span, &what)?;
                let binding = self.new_local(&p.name.name, Val::Node(n), false);
                self.scopes[0].insert(p.name.name.clone(), binding);
            }
            let Some(ret) = &helper.ret else {
                return err(
                    helper.name.span,
                    format!("helper `{}` has no return type", helper.name.name),
                    Some("helpers compute a value: add `-> T` and end the body with it"),
                );
            };
            let v = match self.block(&helper.body)? {
                Some(v) => v,
                None => {
                    return err(
                        helper.body.span,
                        format!("helper `{}` must end with its value", helper.name.name),
                        Some("end the body with an expression without `;`"),
                    )
                }
            };
            self.returned(
                v,
                ret,
                helper.body.tail.as_ref().map_or(span, |t| t.span),
                &format!("value returned by `{}`", helper.name.name),
            )
        })();
        self.call_stack.pop();
        self.scopes = saved_scopes;
        self.type_params.pop();
        result
    }

    /// A field or grid passed to a helper's `In<E>` or `Sampled<E>` parameter must hold `E`
    /// values.
    pub(super) fn check_bound_field(
        &mut self,
        helper: &FnDef,
        p: &ast::Param,
        binding: Binding,
        span: SpanId,
    ) -> Result<()> {
        let (have, ast::TypeExpr::Apply { args, .. }) = (binding, &p.ty) else {
            return Ok(());
        };
        let have = match have {
            Binding::Field(f) => self.fields[f as usize].elem,
            Binding::Sampled(g) => self.sampled[g as usize].elem,
            _ => return Ok(()),
        };
        let want = match args.as_slice() {
            [a] => self.resolve_type(a)?,
            _ => {
                return err(
                    p.ty.span(),
                    "`In` takes one type argument",
                    Some("write e.g. `In<T>`"),
                )
            }
        };
        if have != want {
            return Err(self.mismatch(
                have,
                want,
                span,
                &format!("argument `{}` of `{}`", p.name.name, helper.name.name),
            ));
        }
        Ok(())
    }
}
