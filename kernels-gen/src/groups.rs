//! Parameter groups: `#[stencil_group] struct Scheme<T> { g: T, west: i64 }` declares
//! values that kernels and helpers take as one parameter, `s: Scheme<T>`, and read as
//! `s.g`; a helper call passes the caller's group on by name, `flux(u, s)`, or builds one,
//! `flux(u, Scheme { g: 9.81, west: 0 })`. A group whose members are all of its type
//! parameter may also be taken as fields, `from: In<State<T>>` (or `Out`, `InOut`): each
//! member is then a field, read as `from.w` or `from.w[(1, 0)]` and written as `to.w = ..`.
//!
//! This pass runs before the lowering and removes groups from the tree: a group
//! parameter `s` becomes one parameter per member, `s_g`, `s_west` (a scalar, or a field
//! of the parameter's access; marked with [`MemberOf`] so that the launcher can take the
//! struct and pass its members), `s.g` becomes the name `s_g`, and a group passed to a
//! helper becomes its members. Everything after it (the lowering, every back end) sees
//! ordinary scalars and fields, so a group costs nothing at run time and the kernel's
//! code is that of the members written out.

use crate::ast::{FnDef, FnKind, GroupDef, Ident, MemberOf, Module, Param, SpanId, TypeExpr};
use crate::lower::{LowerError, AXES_TYPE};
use rewrite::Rewrite;
use std::borrow::Cow;
use std::collections::HashMap;

mod rewrite;

type Result<T> = std::result::Result<T, LowerError>;

fn err<T>(span: SpanId, message: impl Into<String>, help: &str) -> Result<T> {
    Err(LowerError {
        span,
        message: message.into(),
        help: Some(help.to_string()),
    })
}

/// The scalar types a group member may have, besides the group's type parameter.
const MEMBER_TYPES: &[&str] = &["f32", "f64", "i64", "i32", "u8", "bool"];

/// The field types a group may be taken as: `In<Group<T>>`, ...
const FIELD_ACCESSES: &[&str] = &["In", "Out", "InOut"];

/// How a parameter takes its group: as values (`s: Scheme<T>`), or as fields of one
/// access (`from: In<State<T>>`, the access's type name).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Taken<'t> {
    Values,
    Fields(&'t Ident),
}

/// A parameter that takes a group: the group, how, and the group's type as written
/// (`State<T>` in `In<State<T>>`).
type GroupParam<'m, 't> = (&'m GroupDef, Taken<'t>, &'t TypeExpr);

/// `module` with every group parameter, member read and group argument written out as
/// scalars; the module itself, borrowed, when it declares no groups.
pub fn expand(module: &Module) -> Result<Cow<'_, Module>> {
    check_groups(module)?;
    if module.groups.is_empty() {
        return Ok(Cow::Borrowed(module));
    }
    // Which parameters of each function are groups, before any is expanded: a call's
    // arguments are matched against the callee's parameters as written.
    let group_params: Callees = module
        .items
        .iter()
        .map(|f| {
            let of_params = f.params.iter().map(|p| group_of(module, &p.ty)).collect();
            (f.name.name.as_str(), of_params)
        })
        .collect();
    let items = module
        .items
        .iter()
        .map(|f| expand_fn(module, f, &group_params))
        .collect::<Result<_>>()?;
    Ok(Cow::Owned(Module {
        items,
        groups: module.groups.clone(),
    }))
}

/// `e`, an error in kernel `kernel` of the written-out `module` (from after this pass),
/// with the members of the kernel's and the helpers' group parameters named as they are
/// written, `from.b`, rather than as the compiler calls them, `from_b`.
pub(crate) fn as_written(mut e: LowerError, module: &Module, kernel: &FnDef) -> LowerError {
    let helpers = module.items.iter().filter(|f| f.kind == FnKind::Helper);
    let members = std::iter::once(kernel)
        .chain(helpers)
        .flat_map(|f| &f.params);
    for m in members.filter_map(|p| p.member_of.as_ref()) {
        let inside = format!("`{}_{}`", m.param, m.member);
        let written = format!("`{}.{}`", m.param, m.member);
        e.message = e.message.replace(&inside, &written);
        e.help = e.help.map(|h| h.replace(&inside, &written));
    }
    e
}

/// Each group is declared once, with at most one type parameter and members of scalar
/// types or that parameter.
fn check_groups(module: &Module) -> Result<()> {
    for (n, g) in module.groups.iter().enumerate() {
        if module.groups[..n]
            .iter()
            .any(|o| o.name.name == g.name.name)
        {
            return err(
                g.name.span,
                format!("group `{}` is declared twice", g.name.name),
                "give each group its own name",
            );
        }
        if g.members.is_empty() {
            return err(
                g.name.span,
                format!("group `{}` has no members", g.name.name),
                "give it at least one member, e.g. `g: T`",
            );
        }
        for (name, ty) in &g.members {
            let scalar = |t: &TypeExpr| match t {
                TypeExpr::Name(t) => {
                    MEMBER_TYPES.contains(&t.name.as_str())
                        || g.generic.as_ref().is_some_and(|p| p.name == t.name)
                }
                _ => false,
            };
            let fits = match ty {
                TypeExpr::Apply { head, args, .. } if head.name == AXES_TYPE => {
                    matches!(&args[..], [one] if scalar(one))
                }
                other => scalar(other),
            };
            if !fits {
                return err(
                    ty.span(),
                    format!("member `{}` of group `{}` is not a scalar", name.name, g.name.name),
                    "a group's members are values: its type parameter (`T`), `f32`, `f64`, `i64`, `i32`, `u8` or `bool`, or one of them per axis (`Axes<T>`)",
                );
            }
        }
    }
    Ok(())
}

/// The group a parameter of type `ty` takes, if any: `Scheme<T>` as values, `In<State<T>>`
/// as fields.
fn group_of<'m, 't>(module: &'m Module, ty: &'t TypeExpr) -> Option<GroupParam<'m, 't>> {
    let named = |ty: &TypeExpr| {
        let name = match ty {
            TypeExpr::Name(n) => n,
            TypeExpr::Apply { head, .. } => head,
            _ => return None,
        };
        module.groups.iter().find(|g| g.name.name == name.name)
    };
    match ty {
        TypeExpr::Apply { head, args, .. } if FIELD_ACCESSES.contains(&head.name.as_str()) => {
            match &args[..] {
                [inner] => named(inner).map(|g| (g, Taken::Fields(head), inner)),
                _ => None,
            }
        }
        _ => named(ty).map(|g| (g, Taken::Values, ty)),
    }
}

/// The groups each function's parameters take, by function name.
type Callees<'m, 't> = HashMap<&'t str, Vec<Option<GroupParam<'m, 't>>>>;

/// The group parameters of one function: name -> (group, how it is taken, its members'
/// parameter names).
type InScope<'m, 't> = HashMap<String, (&'m GroupDef, Taken<'t>, Vec<String>)>;

fn expand_fn<'m, 't>(
    module: &'m Module,
    f: &'t FnDef,
    group_params: &Callees<'m, 't>,
) -> Result<FnDef> {
    let mut params = Vec::new();
    let mut in_scope = InScope::new();
    for p in &f.params {
        let Some((g, taken, group_ty)) = group_of(module, &p.ty) else {
            params.push(p.clone());
            continue;
        };
        let arg = type_argument(g, group_ty)?;
        if let Taken::Fields(access) = taken {
            fields_fit(g, access)?;
        }
        let mut names = Vec::new();
        for (member, ty) in &g.members {
            let name = format!("{}_{}", p.name.name, member.name);
            name_is_free(&name, (p, member), f, &in_scope)?;
            let ty = match (&g.generic, arg) {
                (Some(generic), Some(arg)) => substitute(ty, &generic.name, arg),
                _ => ty.clone(),
            };
            // A member taken as a field is a field of the parameter's access.
            let ty = match taken {
                Taken::Values => ty,
                Taken::Fields(access) => TypeExpr::Apply {
                    head: access.clone(),
                    args: vec![ty],
                    span: p.ty.span(),
                },
            };
            params.push(Param {
                name: Ident {
                    name: name.clone(),
                    span: p.name.span,
                },
                ty,
                when: p.when.clone(),
                member_of: Some(MemberOf {
                    param: p.name.name.clone(),
                    group_type: type_text(&launcher_type(f, group_ty)),
                    member: member.name.clone(),
                    group: g.name.name.clone(),
                }),
            });
            names.push(name);
        }
        in_scope.insert(p.name.name.clone(), (g, taken, names));
    }
    let mut body = f.body.clone();
    let rewrite = Rewrite {
        in_scope: &in_scope,
        group_params,
    };
    rewrite.block(&mut body)?;
    Ok(FnDef {
        params,
        body,
        ..f.clone()
    })
}

/// The compiler's name `name` of member `member` of group parameter `p` of `f` is
/// neither another group parameter's member's (in `in_scope`) nor a parameter's.
fn name_is_free(
    name: &str,
    (p, member): (&Param, &Ident),
    f: &FnDef,
    in_scope: &InScope,
) -> Result<()> {
    let of = format!(
        "member `{}` of group parameter `{}`",
        member.name, p.name.name
    );
    if let Some((other, _)) = in_scope
        .iter()
        .find(|(_, (_, _, ns))| ns.iter().any(|n| n == name))
    {
        let message = format!("{of} and a member of group parameter `{other}` are both named `{name}` inside the compiler");
        return err(p.name.span, message, "rename one of the group parameters");
    }
    match f.params.iter().find(|o| o.name.name == name) {
        Some(other) => err(
            other.name.span,
            format!("`{name}` is the name of {of}"),
            "rename this parameter or the group parameter",
        ),
        None => Ok(()),
    }
}

/// A group taken as fields (`In<State<T>>`) has a type parameter and no member of
/// another type: on the host it is the struct of the fields (`State<&Field<T>>`).
fn fields_fit(g: &GroupDef, access: &Ident) -> Result<()> {
    let Some(generic) = &g.generic else {
        return err(
            access.span,
            format!(
                "group `{}` has no type parameter, so it cannot be taken as fields",
                g.name.name
            ),
            &format!(
                "declare it `{}<T>` with every member of type `T`",
                g.name.name
            ),
        );
    };
    for (name, ty) in &g.members {
        if !matches!(ty, TypeExpr::Name(t) if t.name == generic.name) {
            return err(
                access.span,
                format!(
                    "group `{}` is taken as fields here, and its member `{}` is not of its type parameter `{}`",
                    g.name.name, name.name, generic.name
                ),
                &format!("a group of fields has members of type `{}` only: take this group as values, or declare a group of the fields alone", generic.name),
            );
        }
    }
    Ok(())
}

/// The place of `member` among the members of `g`.
fn member_index(g: &GroupDef, member: &Ident) -> Result<usize> {
    match g.members.iter().position(|(m, _)| m.name == member.name) {
        Some(k) => Ok(k),
        None => {
            let known: Vec<&str> = g.members.iter().map(|(m, _)| m.name.as_str()).collect();
            err(
                member.span,
                format!("group `{}` has no member `{}`", g.name.name, member.name),
                &format!("its members are {}", known.join(", ")),
            )
        }
    }
}

/// The type argument a group parameter's type gives the group's type parameter.
fn type_argument<'t>(g: &GroupDef, ty: &'t TypeExpr) -> Result<Option<&'t TypeExpr>> {
    let args: &[TypeExpr] = match ty {
        TypeExpr::Apply { args, .. } => args,
        _ => &[],
    };
    match (&g.generic, args) {
        (None, []) => Ok(None),
        (Some(_), [one]) => Ok(Some(one)),
        (Some(p), _) => err(
            ty.span(),
            format!("group `{}` takes one type argument", g.name.name),
            &format!("write `{}<{}>`", g.name.name, p.name),
        ),
        (None, _) => err(
            ty.span(),
            format!("group `{}` takes no type arguments", g.name.name),
            &format!("write `{}`", g.name.name),
        ),
    }
}

/// `ty` with the group's type parameter `generic` replaced by `arg`: a member `g: T` of
/// a `Scheme<f32>` is an `f32`, a member `c: Axes<T>` an `Axes<f32>`.
fn substitute(ty: &TypeExpr, generic: &str, arg: &TypeExpr) -> TypeExpr {
    match ty {
        TypeExpr::Name(t) if t.name == generic => arg.clone(),
        TypeExpr::Apply { head, args, span } => TypeExpr::Apply {
            head: head.clone(),
            args: args.iter().map(|a| substitute(a, generic, arg)).collect(),
            span: *span,
        },
        other => other.clone(),
    }
}

/// `ty` with the kernel's type parameter named `T`, as the launcher declares it whatever
/// the kernel calls it (`Wave<R>` in `fn k<R: Real>` is `Wave<T>` there).
fn launcher_type(f: &FnDef, ty: &TypeExpr) -> TypeExpr {
    f.generics.iter().fold(ty.clone(), |t, g| {
        let named_t = TypeExpr::Name(Ident {
            name: "T".into(),
            span: g.name.span,
        });
        substitute(&t, &g.name.name, &named_t)
    })
}

/// A parameter type as the launcher writes it: `Scheme<T>`, `Scheme<f64>`, `Sides`.
fn type_text(ty: &TypeExpr) -> String {
    match ty {
        TypeExpr::Name(n) => n.name.clone(),
        TypeExpr::Apply { head, args, .. } => {
            let args: Vec<String> = args.iter().map(type_text).collect();
            format!("{}<{}>", head.name, args.join(", "))
        }
        TypeExpr::Tuple { items, .. } => {
            let items: Vec<String> = items.iter().map(type_text).collect();
            format!("({})", items.join(", "))
        }
        TypeExpr::Unsupported { what, .. } => what.clone(),
    }
}
