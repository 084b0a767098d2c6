//! Compile-time constant parameters, `#[stencil(consts(order = [4, 6]))]`: one definition
//! becomes one kernel per combination of the listed values, each with the parameters
//! replaced by their values (so offsets, loop bounds and `line` may depend on them).

use super::{err, LowerError, Result};
use crate::ast::{ConstValue, FnDef, TypeExpr};

/// The compile-time constants one kernel instance is made for, in the order listed.
pub type Bindings = Vec<(String, ConstValue)>;

/// The instances of kernel definition `f`: a copy of `f` per combination of its constants'
/// values (the first constant varying slowest), named `name_param_value..`, with `line =
/// PARAM` resolved; just `f` when it has no constants.
pub(super) fn instances(f: &FnDef) -> Result<Vec<(FnDef, Bindings)>> {
    check(f)?;
    let mut combos: Vec<Bindings> = vec![Vec::new()];
    for c in &f.attrs.consts {
        combos = combos
            .into_iter()
            .flat_map(|bound| {
                c.values.iter().map(move |(v, _)| {
                    let mut more = bound.clone();
                    more.push((c.name.name.clone(), *v));
                    more
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|bound| {
            let mut one = f.clone();
            if !bound.is_empty() {
                let parts: Vec<String> = bound
                    .iter()
                    .map(|(p, v)| format!("{p}_{}", v.ident_part()))
                    .collect();
                one.name.name = format!("{}_{}", f.name.name, parts.join("_"));
            }
            // Parameters `#[when(flag)]` exist where `flag` is true.
            one.params
                .retain(|p| match &p.when {
                    Some(flag) => bound.iter().any(|(name, v)| *name == flag.name && *v == ConstValue::Bool(true)),
                    None => true,
                });
            if let Some(p) = &f.attrs.line_param {
                match bound.iter().find(|(name, _)| *name == p.name) {
                    Some((_, ConstValue::Int(axis))) => {
                        let axis = u8::try_from(*axis).unwrap_or(u8::MAX);
                        one.attrs.line = Some((axis, p.span));
                    }
                    _ => {
                        return err(
                            p.span,
                            format!("`line = {}` names no integer constant of this kernel", p.name),
                            Some(&format!("give the axis as a number, `line = 0`, or list the parameter: `consts({} = [0, 1])`", p.name)),
                        )
                    }
                }
            }
            Ok((one, bound))
        })
        .collect()
}

/// Each listed constant is an `i64` or `bool` parameter of `f` whose values have its type;
/// helpers have no constants; `#[when(flag)]` names a `bool` constant.
fn check(f: &FnDef) -> Result<()> {
    for p in &f.params {
        let Some(flag) = &p.when else { continue };
        if f.attrs.consts.iter().any(|c| c.name.name == p.name.name) {
            return err(
                flag.span,
                format!(
                    "`{}` is a compile-time constant: every instance has it",
                    p.name.name
                ),
                Some("put `#[when(..)]` on the parameters that only some instances take"),
            );
        }
        let is_flag = f
            .attrs
            .consts
            .iter()
            .any(|c| c.name.name == flag.name && matches!(c.values[0].0, ConstValue::Bool(_)));
        if !is_flag || f.kind == crate::ast::FnKind::Helper {
            return err(
                flag.span,
                format!(
                    "`#[when({})]` names no `bool` constant of this kernel",
                    flag.name
                ),
                Some(&format!(
                    "list it: `#[stencil(consts({} = [false, true]))]` and `{}: bool`",
                    flag.name, flag.name
                )),
            );
        }
    }
    for c in &f.attrs.consts {
        if f.kind == crate::ast::FnKind::Helper {
            return err(
                c.name.span,
                "`consts(..)` is for kernels",
                Some("a helper's parameter is already a constant wherever its caller passes one"),
            );
        }
        let Some(p) = f.params.iter().find(|p| p.name.name == c.name.name) else {
            return err(
                c.name.span,
                format!(
                    "`consts` lists `{}`, which is no parameter of `{}`",
                    c.name.name, f.name.name
                ),
                Some("list `i64` or `bool` parameters of the kernel"),
            );
        };
        let wanted = match c.values[0].0 {
            ConstValue::Int(_) => "i64",
            ConstValue::Bool(_) => "bool",
        };
        match &p.ty {
            TypeExpr::Name(t) if t.name == wanted => {}
            other => {
                return err(
                    other.span(),
                    format!(
                        "`{}` is a compile-time constant with {} values, so it must be declared `{wanted}`",
                        c.name.name,
                        if wanted == "i64" { "integer" } else { "boolean" }
                    ),
                    Some(&format!("declare it `{}: {wanted}`", c.name.name)),
                )
            }
        }
    }
    Ok(())
}

/// Error `e` of an instance, saying which (when the kernel has constants): the same body
/// may be wrong for one value and right for another.
pub(super) fn in_instance(mut e: LowerError, bound: &[(String, ConstValue)]) -> LowerError {
    if !bound.is_empty() {
        let values: Vec<String> = bound.iter().map(|(p, v)| format!("{p} = {v}")).collect();
        e.message = format!(
            "{} (in the kernel made for {})",
            e.message,
            values.join(", ")
        );
    }
    e
}

/// The kernels made from the module's definitions have distinct names: `k` made for
/// `x = 1` is `k_x_1`, which another definition may already be called.
pub(super) fn check_instance_names(module: &crate::ast::Module) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for f in &module.items {
        let names: Vec<String> = match f.kind {
            crate::ast::FnKind::Kernel => instances(f)?
                .into_iter()
                .map(|(k, _)| k.name.name)
                .collect(),
            crate::ast::FnKind::Helper => vec![f.name.name.clone()],
        };
        for name in names {
            if let Some(other) = seen.insert(name.clone(), f.name.name.clone()) {
                return err(
                    f.name.span,
                    format!(
                        "`{}` makes a kernel named `{name}`, a name `{other}` already has",
                        f.name.name
                    ),
                    Some("rename one of them"),
                );
            }
        }
    }
    Ok(())
}
