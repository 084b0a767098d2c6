//! The attributes of the Rust front end: which stencil attribute marks an item, the
//! options of `#[stencil(..)]` (`consts(..)` among them) and a parameter's `#[when(..)]`.

use super::RustSpans;
use crate::ast::{self, Attrs, FnKind};
use proc_macro2::TokenStream;
use syn::spanned::Spanned;

/// Which stencil attribute marks an item, if any: `stencil` or `stencil_fn`.
pub fn stencil_attr(attrs: &[syn::Attribute]) -> Option<(&syn::Attribute, FnKind)> {
    attrs.iter().find_map(|a| {
        let last = a.path().segments.last()?.ident.to_string();
        match last.as_str() {
            "stencil" => Some((a, FnKind::Kernel)),
            "stencil_fn" => Some((a, FnKind::Helper)),
            _ => None,
        }
    })
}

/// Parses the options of `#[stencil(dims = 2, halo = 1, red_black = colour)]` given as the
/// attribute's tokens.
pub fn parse_attr_args(tokens: TokenStream, spans: &mut RustSpans) -> syn::Result<Attrs> {
    let mut attrs = Attrs::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        if key == "consts" && meta.input.peek(syn::token::Paren) {
            return meta.parse_nested_meta(|param| {
                let Some(id) = param.path.get_ident() else {
                    return Err(
                        param.error("expected a parameter's name: `consts(order = [4, 6])`")
                    );
                };
                let name = ast::Ident {
                    name: id.to_string(),
                    span: spans.add(id.span()),
                };
                let list: syn::ExprArray = param.value()?.parse()?;
                let mut values = Vec::new();
                for e in &list.elems {
                    values.push((const_value(e)?, spans.add(e.span())));
                }
                attrs
                    .add_const(name, values)
                    .map_err(|m| syn::Error::new(id.span(), m))
            });
        }
        let value = meta.value()?;
        let (v, at) = if value.peek(syn::LitInt) {
            let lit: syn::LitInt = value.parse()?;
            (ast::AttrValue::Int(lit.base10_parse()?), lit.span())
        } else if value.peek(syn::token::Bracket) {
            let list: syn::ExprArray = value.parse()?;
            let mut ns = Vec::new();
            for e in &list.elems {
                match e {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(n),
                        ..
                    }) => ns.push(n.base10_parse()?),
                    other => return Err(syn::Error::new(other.span(), "expected an integer")),
                }
            }
            (ast::AttrValue::List(ns), list.span())
        } else {
            let id: syn::Ident = value.parse()?;
            (ast::AttrValue::Name(id.to_string()), id.span())
        };
        let span = spans.add(at);
        attrs.set(&key, v, span).map_err(|m| meta.error(m))
    });
    syn::parse::Parser::parse2(parser, tokens)?;
    Ok(attrs)
}

/// A value of `consts(p = [..])`: an integer (perhaps negative) or `true`/`false`.
fn const_value(e: &syn::Expr) -> syn::Result<ast::ConstValue> {
    let wrong = || {
        syn::Error::new(
            e.span(),
            "a constant's value is an integer or `true`/`false`",
        )
    };
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => Ok(ast::ConstValue::Int(n.base10_parse()?)),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Ok(ast::ConstValue::Bool(b.value)),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match const_value(expr)? {
            ast::ConstValue::Int(v) => Ok(ast::ConstValue::Int(-v)),
            ast::ConstValue::Bool(_) => Err(wrong()),
        },
        _ => Err(wrong()),
    }
}

/// The flag of a parameter's `#[when(flag)]`, if it has one; any other attribute is an
/// error.
pub(super) fn param_condition(
    attrs: &[syn::Attribute],
    spans: &mut RustSpans,
) -> syn::Result<Option<ast::Ident>> {
    let mut when = None;
    for a in attrs {
        if !a.path().is_ident("when") || when.is_some() {
            return Err(syn::Error::new_spanned(
                a,
                "a parameter's only attribute is `#[when(flag)]`, with `flag` a `bool` listed in `consts(..)`",
            ));
        }
        let flag: syn::Ident = a.parse_args()?;
        when = Some(ast::Ident {
            name: flag.to_string(),
            span: spans.add(flag.span()),
        });
    }
    Ok(when)
}
