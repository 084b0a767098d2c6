//! Parameter groups in the Rust front end: the `#[stencil_group]` structs a module
//! declares, and a group built at a helper call (`Flux { w: a, q: b, p: c }`).

use super::{convert_expr, convert_type, ident_of, RustSpans};
use crate::ast::{self, ExprKind, Ident};
use syn::spanned::Spanned;

/// A group built at a call, `Name { member: value, .. }` (`None` for a struct named by
/// a path). A member given without its value (`Name { a }`) is refused: the text format,
/// which reads the same source, needs `a: a`.
pub(super) fn group_lit(st: &syn::ExprStruct, spans: &mut RustSpans) -> Option<ExprKind> {
    let name = st.path.get_ident()?;
    let members = st
        .fields
        .iter()
        .map(|fv| {
            let member = match &fv.member {
                syn::Member::Named(m) => m.to_string(),
                syn::Member::Unnamed(i) => i.index.to_string(),
            };
            let at = spans.add(fv.member.span());
            let value = if fv.colon_token.is_some() {
                convert_expr(&fv.expr, spans)
            } else {
                ast::Expr {
                    kind: ExprKind::Unsupported(format!(
                        "group member named without its value (write `{member}: {member}`)"
                    )),
                    span: at,
                }
            };
            (
                Ident {
                    name: member,
                    span: at,
                },
                value,
            )
        })
        .collect();
    Some(ExprKind::GroupLit {
        name: Ident {
            name: name.to_string(),
            span: spans.add(name.span()),
        },
        members,
    })
}

/// Whether `st` is a parameter group: `#[stencil_group] struct ..`.
pub fn is_group(st: &syn::ItemStruct) -> bool {
    st.attrs.iter().any(is_group_marker)
}

/// Whether `a` is the `#[stencil_group]` marker.
pub fn is_group_marker(a: &syn::Attribute) -> bool {
    a.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "stencil_group")
}

/// A `#[stencil_group]` struct: named members, at most one type parameter.
pub(super) fn convert_group(
    st: &syn::ItemStruct,
    spans: &mut RustSpans,
) -> syn::Result<ast::GroupDef> {
    let syn::Fields::Named(fields) = &st.fields else {
        return Err(syn::Error::new_spanned(
            &st.fields,
            "a parameter group has named members\n\n= help: write `struct Name<T> { a: T, b: i64 }`",
        ));
    };
    let mut params = st.generics.type_params();
    let generic = params
        .next()
        .map(|p| ident_of(&p.ident, spans))
        .transpose()?;
    if let Some(extra) = params.next() {
        return Err(syn::Error::new_spanned(
            extra,
            "a parameter group has at most one type parameter\n\n= help: use one, `T`, for every real member",
        ));
    }
    if let Some(l) = st.generics.lifetimes().next() {
        return Err(syn::Error::new_spanned(
            l,
            "a parameter group holds values, not references\n\n= help: remove the lifetime",
        ));
    }
    let members = fields
        .named
        .iter()
        .map(|f| {
            let name = f.ident.as_ref().expect("named fields have names");
            Ok((ident_of(name, spans)?, convert_type(&f.ty, spans)))
        })
        .collect::<syn::Result<_>>()?;
    Ok(ast::GroupDef {
        name: ident_of(&st.ident, spans)?,
        generic,
        members,
        span: spans.add(st.ident.span()),
    })
}
