//! Lowering of calls: intrinsics and their method forms, the built-ins (`index`,
//! `extent`, `coord`, `ndims`, `unit`, `tridiagonal`), reductions' `reduce`, and calls of
//! helpers (inlined by `helpers.rs`).

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
            stages::STAGE if args.len() != 1 => {
                return err(
                    span,
                    format!("`stage` takes 1 argument, found {}", args.len()),
                    Some("stage one expression (a tuple for several values): `let f = stage(e);`"),
                )
            }
            stages::STAGE => {
                return err(
                    func.span,
                    "`stage(..)` is the value of a `let` at the top of a kernel's body",
                    Some("write `let f = stage(value);` and read `f` at offsets, `f[(-1, 0)]`"),
                )
            }
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
            let built_in: Vec<&str> = prelude()
                .items
                .iter()
                .map(|f| f.name.name.as_str())
                .collect();
            return err(
                func.span,
                format!("unknown function `{name}`"),
                Some(&format!(
                    "intrinsics are {}, index, extent, coord, ndims, unit, tridiagonal; the built-in helpers are {}; your helpers must be marked `#[stencil_fn]` in the same module",
                    intrinsics.join(", "),
                    built_in.join(", ")
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
                        let neg = self.b.binary(Binary::Compare(Comparison::Lt), n, zero);
                        let inner = self.b.select(neg, minus_one, zero);
                        let pos = self.b.binary(Binary::Compare(Comparison::Gt), n, zero);
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
                let (op, ty, result) = (red.op, red.ty, red.result);
                let what = format!("value reduced into `{}`", id.name);
                // An integer or boolean reduction: the value made an f64 (0 or 1 for a
                // boolean).
                let v = match result {
                    Ty::Int => {
                        let n = self.coerce(v, Ty::Int, arg.span, &what)?;
                        Val::Node(self.b.cast(n, ty))
                    }
                    Ty::Bool => {
                        let c = self.coerce(v, Ty::Bool, arg.span, &what)?;
                        let (one, zero) = (self.b.real(1.0, ty), self.b.real(0.0, ty));
                        Val::Node(self.b.select(c, one, zero))
                    }
                    _ => v,
                };
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
}
