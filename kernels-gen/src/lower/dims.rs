//! A kernel's number of dimensions: from its attribute, else from the arity of the offsets
//! it and its helpers read.

use super::walk::{visit_block, with_helpers};
use super::{err, Result};
use crate::ast::{self, Expr, ExprKind, FnDef, Module, SpanId};
use std::collections::HashMap;

/// The name of the offset parameter an offset expression (`d`, `-d`, `2 * d`) reads, if any.
pub(super) fn tuple_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(id) => Some(&id.name),
        ExprKind::Unary(ast::UnOp::Neg, a) | ExprKind::Paren(a) => tuple_name(a),
        ExprKind::Binary(_, a, b) => tuple_name(a).or_else(|| tuple_name(b)),
        _ => None,
    }
}

/// Whether an offset expression is made of `unit(..)` (`-unit(a)`, `2 * unit(a)`,
/// `unit(a) + unit(b)`), which fits any dimension.
pub(super) fn is_unit_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { func, .. } => func.name == "unit",
        ExprKind::Unary(ast::UnOp::Neg, a) | ExprKind::Paren(a) => is_unit_call(a),
        ExprKind::Binary(_, a, b) => is_unit_call(a) || is_unit_call(b),
        _ => false,
    }
}

/// Checks a kernel's list of dimensions, `dims = [2, 3]`: each supported, none twice.
pub(super) fn check_dims_list(list: &[u8], span: SpanId) -> Result<()> {
    for (i, &d) in list.iter().enumerate() {
        if !(1..=3).contains(&d) {
            return err(
                span,
                format!("dims = {d} is not supported"),
                Some("use 1, 2 or 3"),
            );
        }
        if list[..i].contains(&d) {
            return err(
                span,
                format!("dimension {d} is listed twice"),
                Some("list each dimension once: `dims = [2, 3]`"),
            );
        }
    }
    Ok(())
}

/// The locals of a body that `let` binds to offsets: to the number of parts of a tuple
/// written out, or to `None` for one made of `unit(..)` (any dimension).
fn offset_locals(body: &ast::Block) -> HashMap<String, Option<usize>> {
    fn arity(e: &Expr) -> Option<Option<usize>> {
        match &e.kind {
            ExprKind::Tuple(items) => Some(Some(items.len())),
            _ if is_unit_call(e) => Some(None),
            _ => None,
        }
    }
    let mut out = HashMap::new();
    super::walk::walk_block(
        body,
        &mut |s| match s {
            // (A mutable one is an error the lowering reports; it is read as one here.)
            ast::Stmt::Let {
                name,
                init: Some(init),
                ty: None,
                ..
            } => {
                if let Some(a) = arity(init) {
                    out.insert(name.name.clone(), a);
                }
            }
            ast::Stmt::LetTuple { names, init, .. } => {
                if let ExprKind::Tuple(items) = &init.kind {
                    for ((name, _), item) in names.iter().zip(items) {
                        if let Some(a) = arity(item) {
                            out.insert(name.name.clone(), a);
                        }
                    }
                }
            }
            _ => {}
        },
        &mut |_| {},
    );
    out
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
        // `a[k]` on an `Axes` or offset parameter takes a part of a tuple, not a field.
        let axes_params: Vec<&str> = body
            .params
            .iter()
            .filter(|p| matches!(&p.ty, ast::TypeExpr::Apply { head, .. } if head.name == super::axes::AXES_TYPE))
            .map(|p| p.name.name.as_str())
            .collect();
        let local_offsets = offset_locals(&body.body);
        visit_block(&body.body, &mut |e| {
            if let ExprKind::Index { base, offsets } = &e.kind {
                if matches!(&base.kind, ExprKind::Name(id)
                    if axes_params.contains(&id.name.as_str()) || tuple_params.contains_key(id.name.as_str()))
                {
                    return;
                }
                let n = match offsets.as_slice() {
                    // `u[unit(a)]` and `u[d]` with `d: Axes<i64>` fit any dimension.
                    [o] if is_unit_call(o) => return,
                    [o] if tuple_name(o).is_some_and(|name| axes_params.contains(&name)) => return,
                    // A local offset: as its definition.
                    [o] if tuple_name(o).is_some_and(|name| local_offsets.contains_key(name)) => {
                        match tuple_name(o).and_then(|name| local_offsets[name]) {
                            Some(n) => n,
                            None => return,
                        }
                    }
                    [o] => tuple_name(o)
                        .and_then(|name| tuple_params.get(name).copied())
                        .unwrap_or(1),
                    _ => offsets.len(),
                };
                arities.push((n, e.span));
            }
        });
    }
    if let Some((list, span)) = &f.attrs.dims {
        let (d, span) = (list[0], *span);
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
