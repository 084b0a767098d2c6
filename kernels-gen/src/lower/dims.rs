//! A kernel's number of dimensions: from its attribute, else from the arity of the offsets
//! it and its helpers read.

use super::walk::{visit_block, with_helpers};
use super::{err, Result};
use crate::ast::{self, Expr, ExprKind, FnDef, Module};
use std::collections::HashMap;

/// The name an offset expression `d`, `-d` or `(d)` reads, if it is one.
pub(super) fn tuple_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(id) => Some(&id.name),
        ExprKind::Unary(ast::UnOp::Neg, a) | ExprKind::Paren(a) => tuple_name(a),
        _ => None,
    }
}

/// Whether an offset expression is `unit(..)` or `-unit(..)`.
pub(super) fn is_unit_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { func, .. } => func.name == "unit",
        ExprKind::Unary(ast::UnOp::Neg, a) | ExprKind::Paren(a) => is_unit_call(a),
        _ => false,
    }
}

/// The kernel's dimension: from the attribute, else from the arity of its offsets (those
/// in the helpers it calls, to which it may pass its fields, included).
pub(super) fn infer_dims(module: &Module, f: &FnDef) -> Result<u8> {
    let mut arities = Vec::new();
    for body in with_helpers(module, f) {
        // A helper's tuple parameters (offsets): `u[d]` has as many components as `d`.
        let tuple_params: HashMap<&str, usize> = body
            .params
            .iter()
            .filter_map(|p| match &p.ty {
                ast::TypeExpr::Tuple { items, .. } => Some((p.name.name.as_str(), items.len())),
                _ => None,
            })
            .collect();
        visit_block(&body.body, &mut |e| {
            if let ExprKind::Index { offsets, .. } = &e.kind {
                let n = match offsets.as_slice() {
                    // `u[unit(a)]` fits any dimension.
                    [o] if is_unit_call(o) => return,
                    [o] => tuple_name(o)
                        .and_then(|name| tuple_params.get(name).copied())
                        .unwrap_or(1),
                    _ => offsets.len(),
                };
                arities.push((n, e.span));
            }
        });
    }
    if let Some((d, span)) = f.attrs.dims {
        if !(1..=3).contains(&d) {
            return err(
                span,
                format!("dims = {d} is not supported"),
                Some("use 1, 2 or 3"),
            );
        }
        if let Some(&(n, s)) = arities.iter().find(|(n, _)| *n != d as usize) {
            return err(
                s,
                format!("this offset has {n} components but the kernel is {d}-dimensional"),
                Some("give one offset per axis"),
            );
        }
        return Ok(d);
    }
    let Some(&(first, _)) = arities.first() else {
        return err(
            f.name.span,
            format!(
                "cannot tell how many dimensions `{}` has: it reads no offsets",
                f.name.name
            ),
            Some("add `#[stencil(dims = 2)]` (or 1, 3)"),
        );
    };
    if let Some(&(n, s)) = arities.iter().find(|(n, _)| *n != first) {
        return err(
            s,
            format!("this offset has {n} components but earlier offsets have {first}"),
            Some("every offset in a kernel has one component per axis"),
        );
    }
    if !(1..=3).contains(&first) {
        return err(
            arities[0].1,
            format!("{first}-component offsets are not supported"),
            Some("kernels are 1-, 2- or 3-dimensional"),
        );
    }
    Ok(first as u8)
}
