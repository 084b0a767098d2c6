//! Checks that run before anything is inferred, so that the first error a user sees is
//! the real one: a construct the language does not have (a destructuring `let`, a
//! `while` loop, a `match`, ...) or a method no receiver has, anywhere in the kernel or
//! the helpers it calls, is reported as itself rather than as a dimension that cannot be
//! inferred or a type that does not fit.

use super::walk::{walk_block, with_helpers};
use super::{err, unsupported_help, Result, INTRINSICS};
use crate::ast::{ExprKind, FnDef, Ident, Module, SpanId, Stmt};
use std::cell::RefCell;

/// Methods some receiver has besides the intrinsics: `mul_add` (an alias of `fma`),
/// `signum` (refused with its own reason later), a reduction's `reduce`, a sampled grid's
/// `sample`, a mesh's `vertex`, `corner`, `neighbours` and `triangles`.
const OTHER_METHODS: &[&str] = &[
    "mul_add",
    "signum",
    "reduce",
    "sample",
    "vertex",
    "corner",
    "neighbours",
    "triangles",
];

/// The first unsupported construct or unknown method of `f` and its helpers, in source
/// order within each body, as an error.
pub(super) fn no_unsupported_constructs(module: &Module, f: &FnDef) -> Result<()> {
    for body in with_helpers(module, f) {
        let first: RefCell<Option<Result<()>>> = RefCell::new(None);
        let note = |r: Result<()>| {
            first.borrow_mut().get_or_insert(r);
        };
        let unsupported = |what: &str, span: SpanId| -> Result<()> {
            err(
                span,
                format!("the stencil language has no {what}"),
                Some(unsupported_help(what)),
            )
        };
        // Statements and expressions are visited in one walk, in source order.
        walk_block(
            &body.body,
            &mut |s| {
                if let Stmt::Unsupported { what, span } = s {
                    note(unsupported(what, *span));
                }
            },
            &mut |e| match &e.kind {
                ExprKind::Unsupported(what) => note(unsupported(what, e.span)),
                ExprKind::Member { member, .. } => note(not_a_group(member)),
                ExprKind::MethodCall { method, .. } if !known(&method.name) => {
                    note(unknown_method(method))
                }
                _ => {}
            },
        );
        if let Some(e) = first.into_inner() {
            return e;
        }
    }
    Ok(())
}

/// The error of `x.m` where `x` is not a group parameter (those are expanded before the
/// lowering, see `crate::groups`).
pub(super) fn not_a_group<T>(member: &Ident) -> Result<T> {
    err(
        member.span,
        format!("`.{}`: only a parameter group has members", member.name),
        Some("declare the values as a `#[stencil_group] struct` and take it as a parameter, or call a method: `x.sqrt()`"),
    )
}

/// The error of a group built where no group is known (a module without groups): a
/// struct of values is only ever a helper's group argument.
pub(super) fn not_a_known_group<T>(name: &Ident) -> Result<T> {
    err(
        name.span,
        format!("`{} {{ .. }}`: no parameter group `{}` is declared", name.name, name.name),
        Some("declare it as a `#[stencil_group] struct` and pass the built group to a helper that takes it"),
    )
}

/// Whether some receiver has a method of this name.
fn known(name: &str) -> bool {
    INTRINSICS.iter().any(|(n, _)| *n == name) || OTHER_METHODS.contains(&name)
}

/// The error of a method no receiver has.
pub(super) fn unknown_method<T>(method: &Ident) -> Result<T> {
    err(
        method.span,
        format!("unknown method `{}`", method.name),
        Some(&format!(
            "methods are {}, mul_add",
            INTRINSICS
                .iter()
                .filter(|(n, _)| *n != "fma")
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    )
}
