//! Walking the surface AST: every statement and expression of a block, and the helpers a
//! function calls (the early checks and the dimension inference look through them).

use crate::ast::{Block, Expr, ExprKind, FnDef, FnKind, Module, Stmt};

/// `f` and the helpers it calls, directly or through other helpers, `f` first.
pub(super) fn with_helpers<'m>(module: &'m Module, f: &'m FnDef) -> Vec<&'m FnDef> {
    let mut all = vec![f];
    let mut next = 0;
    while let Some(&body) = all.get(next) {
        next += 1;
        let mut called = Vec::new();
        visit_block(&body.body, &mut |e| {
            if let ExprKind::Call { func, .. } = &e.kind {
                called.push(func.name.clone());
            }
        });
        for name in called {
            let helper = module
                .items
                .iter()
                .find(|h| h.name.name == name && h.kind == FnKind::Helper);
            if let Some(h) = helper.filter(|h| !all.iter().any(|b| b.name.name == h.name.name)) {
                all.push(h);
            }
        }
    }
    all
}

pub(crate) fn visit_block(b: &Block, f: &mut dyn FnMut(&Expr)) {
    walk_block(b, &mut |_| {}, f);
}

/// Calls `s` on every statement and `f` on every expression of `b`, nested blocks
/// included.
pub(super) fn walk_block(b: &Block, s: &mut dyn FnMut(&Stmt), f: &mut dyn FnMut(&Expr)) {
    for st in &b.stmts {
        s(st);
        match st {
            Stmt::Let { init: Some(e), .. } | Stmt::LetTuple { init: e, .. } | Stmt::Expr(e) => {
                walk_expr(e, s, f)
            }
            Stmt::Assign { target, value, .. } => {
                walk_expr(target, s, f);
                walk_expr(value, s, f);
            }
            Stmt::For {
                start, end, body, ..
            } => {
                walk_expr(start, s, f);
                walk_expr(end, s, f);
                walk_block(body, s, f);
            }
            Stmt::ForEach { iter, body, .. } => {
                walk_expr(iter, s, f);
                walk_block(body, s, f);
            }
            _ => {}
        }
    }
    if let Some(t) = &b.tail {
        walk_expr(t, s, f);
    }
}

/// [`walk_block`] for an expression.
pub(super) fn walk_expr(e: &Expr, s: &mut dyn FnMut(&Stmt), f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary(_, a)
        | ExprKind::Cast(a, _)
        | ExprKind::Paren(a)
        | ExprKind::Member { base: a, .. } => walk_expr(a, s, f),
        ExprKind::Binary(_, a, b) => {
            walk_expr(a, s, f);
            walk_expr(b, s, f);
        }
        ExprKind::Call { args, .. } | ExprKind::Tuple(args) => {
            args.iter().for_each(|a| walk_expr(a, s, f))
        }
        ExprKind::MethodCall { receiver, args, .. } => {
            walk_expr(receiver, s, f);
            args.iter().for_each(|a| walk_expr(a, s, f));
        }
        ExprKind::Index { base, offsets } => {
            walk_expr(base, s, f);
            offsets.iter().for_each(|a| walk_expr(a, s, f));
        }
        ExprKind::If {
            cond,
            then,
            otherwise,
        } => {
            walk_expr(cond, s, f);
            walk_block(then, s, f);
            if let Some(o) = otherwise {
                walk_expr(o, s, f);
            }
        }
        ExprKind::Block(b) => walk_block(b, s, f),
        ExprKind::GroupLit { members, .. } => members.iter().for_each(|(_, v)| walk_expr(v, s, f)),
        ExprKind::Lit(_)
        | ExprKind::Name(_)
        | ExprKind::Unsupported(_)
        | ExprKind::Break
        | ExprKind::Continue => {}
    }
}
