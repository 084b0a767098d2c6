//! The bodies of functions with group parameters, rewritten: `s.g` becomes the name of
//! the member's parameter, a group passed to a helper (by name, or built at the call)
//! becomes its members, and misuse is an error at its token.

use super::{err, member_index, Callees, GroupParam, InScope, Result, Taken};
use crate::ast::{Block, Expr, ExprKind, GroupDef, Ident, Stmt};

/// The rewriting of one function's body.
pub(super) struct Rewrite<'a, 'm, 't> {
    /// The function's group parameters.
    pub in_scope: &'a InScope<'m, 't>,
    /// The groups each function of the module takes.
    pub group_params: &'a Callees<'m, 't>,
}

impl Rewrite<'_, '_, '_> {
    /// Rewrites block `b` in place.
    pub fn block(&self, b: &mut Block) -> Result<()> {
        for st in &mut b.stmts {
            self.stmt(st)?;
        }
        if let Some(t) = &mut b.tail {
            self.expr(t)?;
        }
        Ok(())
    }

    /// A name bound by `let` or `for` must not hide a group parameter, whose members the
    /// body reads by the group's name.
    fn binds(&self, name: &Ident) -> Result<()> {
        if self.in_scope.contains_key(&name.name) {
            return err(
                name.span,
                format!("`{}` hides the group parameter of that name", name.name),
                "give the local another name",
            );
        }
        // A member `s.g` is read by the name `s_g`: a local of that name would be read
        // instead.
        if let Some((group, _)) = self
            .in_scope
            .iter()
            .find(|(_, (_, _, names))| names.contains(&name.name))
        {
            return err(
                name.span,
                format!(
                    "`{}` is the name a member of group parameter `{group}` is read by",
                    name.name
                ),
                "give the local another name",
            );
        }
        Ok(())
    }

    fn stmt(&self, st: &mut Stmt) -> Result<()> {
        match st {
            Stmt::Let { name, init, .. } => {
                if let Some(e) = init {
                    self.expr(e)?;
                }
                self.binds(name)
            }
            Stmt::LetTuple { names, init, .. } => {
                self.expr(init)?;
                names.iter().try_for_each(|(n, _)| self.binds(n))
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(target)?;
                self.expr(value)
            }
            Stmt::For {
                var,
                start,
                end,
                body,
                ..
            } => {
                self.binds(var)?;
                [start, end].into_iter().try_for_each(|e| self.expr(e))?;
                self.block(body)
            }
            Stmt::ForEach {
                var, iter, body, ..
            } => {
                self.binds(var)?;
                self.expr(iter)?;
                self.block(body)
            }
            Stmt::Expr(e) => self.expr(e),
            Stmt::Unsupported { .. } => Ok(()),
        }
    }

    fn expr(&self, e: &mut Expr) -> Result<()> {
        match &mut e.kind {
            ExprKind::Member { base, member } => {
                let ExprKind::Name(n) = &base.kind else {
                    return self.expr(base);
                };
                let Some((g, _, names)) = self.in_scope.get(&n.name) else {
                    return Ok(());
                };
                let k = member_index(g, member)?;
                e.kind = ExprKind::Name(Ident {
                    name: names[k].clone(),
                    span: member.span,
                });
                Ok(())
            }
            ExprKind::Name(n) => match self.in_scope.get(&n.name) {
                Some((g, taken, _)) => {
                    let what = match taken {
                        Taken::Values => "values",
                        Taken::Fields(_) => "fields",
                    };
                    err(
                        e.span,
                        format!("`{}` is a group of {what} (`{}`), not one value", n.name, g.name.name),
                        &format!("read one member, e.g. `{}.{}`, or pass the whole group to a helper that takes a `{}`", n.name, g.members[0].0.name, g.name.name),
                    )
                }
                None => Ok(()),
            },
            ExprKind::GroupLit { name, .. } => err(
                name.span,
                format!("`{} {{ .. }}` builds a group, which only a helper call can take", name.name),
                &format!("pass it straight to a helper whose parameter is a `{}`, or use its members' values directly", name.name),
            ),
            ExprKind::Call { func, args } => {
                let takes = self.group_params.get(func.name.as_str());
                let mut out = Vec::with_capacity(args.len());
                for (i, mut a) in std::mem::take(args).into_iter().enumerate() {
                    match takes.and_then(|t| t.get(i).copied().flatten()) {
                        Some(p) => out.extend(self.group_argument(p, a, func)?),
                        None => {
                            self.expr(&mut a)?;
                            out.push(a);
                        }
                    }
                }
                *args = out;
                Ok(())
            }
            ExprKind::Unary(_, x) | ExprKind::Paren(x) | ExprKind::Cast(x, _) => self.expr(x),
            ExprKind::Binary(_, a, b) => {
                self.expr(a)?;
                self.expr(b)
            }
            ExprKind::MethodCall { receiver, args, .. } => {
                self.expr(receiver)?;
                args.iter_mut().try_for_each(|a| self.expr(a))
            }
            ExprKind::Index { base, offsets } => {
                self.expr(base)?;
                offsets.iter_mut().try_for_each(|o| self.expr(o))
            }
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond)?;
                self.block(then)?;
                match otherwise {
                    Some(o) => self.expr(o),
                    None => Ok(()),
                }
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::Tuple(items) => items.iter_mut().try_for_each(|x| self.expr(x)),
            ExprKind::Lit(_)
            | ExprKind::Break
            | ExprKind::Continue
            | ExprKind::Unsupported(_) => Ok(()),
        }
    }

    /// The members passed for a helper's group parameter `p`: those of the caller's
    /// group parameter of the same group named by `a`, or the values of a group built
    /// there (`Flux { w: fw, .. }`), in the group's order.
    fn group_argument(&self, p: GroupParam, a: Expr, func: &Ident) -> Result<Vec<Expr>> {
        let (g, wanted, _) = p;
        let kind = |t: Taken| match t {
            Taken::Values => "values",
            Taken::Fields(_) => "fields",
        };
        match a.kind {
            ExprKind::Name(n) => {
                if let Some((given, taken, names)) = self.in_scope.get(&n.name) {
                    if given.name.name == g.name.name {
                        if (*taken == Taken::Values) != (wanted == Taken::Values) {
                            return err(
                                a.span,
                                format!(
                                    "`{}` takes `{}` as {} here, and `{}` is a group of {}",
                                    func.name,
                                    g.name.name,
                                    kind(wanted),
                                    n.name,
                                    kind(*taken)
                                ),
                                "pass a group taken the same way, or build one with its members",
                            );
                        }
                        return Ok(names
                            .iter()
                            .map(|name| Expr {
                                kind: ExprKind::Name(Ident {
                                    name: name.clone(),
                                    span: a.span,
                                }),
                                span: a.span,
                            })
                            .collect());
                    }
                }
            }
            ExprKind::GroupLit { name, members } if name.name == g.name.name => {
                return self.built_group(g, name, members);
            }
            _ => {}
        }
        err(
            a.span,
            format!("`{}` takes a `{}` group here", func.name, g.name.name),
            &format!(
                "pass a parameter of type `{}` by name, or build one: `{} {{ {}: .. }}`",
                g.name.name, g.name.name, g.members[0].0.name
            ),
        )
    }

    /// The values of `name { members }`, a group `g` built at a helper call, in the
    /// group's order: each member given once.
    fn built_group(
        &self,
        g: &GroupDef,
        name: Ident,
        members: Vec<(Ident, Expr)>,
    ) -> Result<Vec<Expr>> {
        let mut values: Vec<Option<Expr>> = vec![None; g.members.len()];
        for (member, mut value) in members {
            let k = member_index(g, &member)?;
            if values[k].is_some() {
                return err(
                    member.span,
                    format!("member `{}` is given twice", member.name),
                    "give each member one value",
                );
            }
            self.expr(&mut value)?;
            values[k] = Some(value);
        }
        let missing: Vec<String> = g
            .members
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|((m, _), _)| format!("`{}`", m.name))
            .collect();
        if !missing.is_empty() {
            return err(
                name.span,
                format!("`{}` is built without {}", g.name.name, missing.join(", ")),
                "give every member a value",
            );
        }
        Ok(values.into_iter().flatten().collect())
    }
}
