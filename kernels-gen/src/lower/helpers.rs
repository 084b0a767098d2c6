//! Inlining `#[stencil_fn]` helpers: their arguments (values, or fields, grids and the
//! mesh passed by name) bound in a scope of their own, their body lowered in place.

use super::*;

impl<'m> Lowerer<'m> {
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
            ast::TypeExpr::Apply { head, .. } if head.name == axes::AXES_TYPE => {
                return Ok(HelperArg::Value(self.axes_arg(helper, p, a)?));
            }
            ast::TypeExpr::Apply { head, span, .. } => {
                return err(
                    *span,
                    format!(
                        "helper parameters are values, `Axes<T>`, `In<T>` fields, `Sampled<T>` grids and `Mesh`, not `{}<..>`",
                        head.name
                    ),
                    Some(if head.name == super::params::HELD_TYPE {
                        "a kernel's `Value<T>` parameter reads as a value: declare the helper's parameter `T`"
                    } else {
                        "helpers only read fields: declare the parameter `In<T>`"
                    }),
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
            // A staged value is read like an input field.
            Some(Binding::Staged(s)) if wants == Wants::Field => {
                Ok(HelperArg::Bound(Binding::Staged(s)))
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
                (ast::TypeExpr::Apply { head, args, .. }, HelperArg::Value(Val::Tuple(t)))
                    if head.name == axes::AXES_TYPE =>
                {
                    let first = self.parts(*t).first().copied();
                    match (args.as_slice(), first) {
                        ([ast::TypeExpr::Name(name)], Some(v)) => (name, self.ty_of(v)),
                        _ => continue,
                    }
                }
                (ast::TypeExpr::Apply { args, .. }, HelperArg::Bound(b)) => {
                    let elem = match *b {
                        Binding::Field(f) => self.fields[f as usize].elem,
                        Binding::Sampled(g) => self.sampled[g as usize].elem,
                        Binding::Staged(s) => self.b.ty(self.stages[s as usize].value),
                        _ => continue,
                    };
                    // Only a field of reals makes a helper's `T`.
                    if !elem.is_float() {
                        continue;
                    }
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
                if let ast::TypeExpr::Apply { args, .. } = &p.ty {
                    // An `Axes<E>` parameter: each value made an `E`.
                    let (Val::Tuple(t), [elem]) = (v, args.as_slice()) else {
                        return err(
                            p.ty.span(),
                            "`Axes` takes one type argument",
                            Some("write e.g. `Axes<T>`"),
                        );
                    };
                    let ty = self.resolve_type(elem)?;
                    let mut parts = Vec::new();
                    for part in self.parts(*t) {
                        parts.push(Val::Node(self.coerce(part, ty, a.span, &what)?));
                    }
                    self.tuples.push(parts);
                    let binding = self.new_local(
                        &p.name.name,
                        Val::Tuple(self.tuples.len() as u32 - 1),
                        false,
                    );
                    self.scopes[0].insert(p.name.name.clone(), binding);
                    continue;
                }
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
            Binding::Staged(s) => self.b.ty(self.stages[s as usize].value),
            _ => return Ok(()),
        };
        let want = match args.as_slice() {
            [a] => self.resolve_element(a)?,
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
