//! The Rust front end: `syn` items -> surface AST.
//!
//! Used by the `#[stencil]` macros and by tools that read kernels from Rust source. Rust
//! constructs the language does not have become `Unsupported` nodes so that the lowering
//! reports them with their span and a suggestion, rather than failing here.

use crate::ast::{
    self, Attrs, BitOp, Block, Comparison, Expr, ExprKind, FnDef, FnKind, Ident, Lit, SpanId, Stmt,
};
use proc_macro2::Span;
use syn::spanned::Spanned;

mod attrs;
mod groups;
use attrs::param_condition;
pub use attrs::{parse_attr_args, stencil_attr};
use groups::convert_group;
pub use groups::{is_group, is_group_marker};

/// Source positions of a parsed Rust item: `SpanId` -> `proc_macro2::Span`.
#[derive(Default)]
pub struct RustSpans {
    /// The spans, indexed by `SpanId`.
    pub spans: Vec<Span>,
}

impl RustSpans {
    pub(super) fn add(&mut self, s: Span) -> SpanId {
        self.spans.push(s);
        (self.spans.len() - 1) as SpanId
    }

    /// The span of a node.
    pub fn get(&self, id: SpanId) -> Span {
        self.spans
            .get(id as usize)
            .copied()
            .unwrap_or_else(Span::call_site)
    }
}

/// Converts one function into the AST.
pub fn convert_fn(
    item: &syn::ItemFn,
    kind: FnKind,
    attrs: Attrs,
    spans: &mut RustSpans,
) -> syn::Result<FnDef> {
    let sig = &item.sig;
    if let Some(t) = &sig.asyncness {
        return Err(syn::Error::new(
            t.span(),
            "stencil functions cannot be `async`",
        ));
    }
    if let Some(t) = &sig.unsafety {
        return Err(syn::Error::new(
            t.span(),
            "stencil functions cannot be `unsafe`",
        ));
    }
    let mut generics = Vec::new();
    for g in &sig.generics.params {
        match g {
            syn::GenericParam::Type(t) => {
                let bounds = t
                    .bounds
                    .iter()
                    .map(|b| match b {
                        syn::TypeParamBound::Trait(tb) => {
                            let seg = tb.path.segments.last();
                            ident_of(
                                seg.map(|s| &s.ident)
                                    .ok_or_else(|| syn::Error::new(tb.span(), "empty bound"))?,
                                spans,
                            )
                        }
                        other => Err(syn::Error::new(
                            other.span(),
                            "only the bound `Real` is allowed here",
                        )),
                    })
                    .collect::<syn::Result<Vec<_>>>()?;
                generics.push(ast::Generic {
                    name: ident_of(&t.ident, spans)?,
                    bounds,
                });
            }
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "stencil functions take one type parameter `T: Real` and no lifetimes or const generics",
                ))
            }
        }
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Typed(pt) => {
                let syn::Pat::Ident(pi) = &*pt.pat else {
                    return Err(syn::Error::new(
                        pt.pat.span(),
                        "parameters must be plain names",
                    ));
                };
                params.push(ast::Param {
                    name: ident_of(&pi.ident, spans)?,
                    ty: convert_type(&pt.ty, spans),
                    when: param_condition(&pt.attrs, spans)?,
                    member_of: None,
                });
            }
            syn::FnArg::Receiver(r) => {
                return Err(syn::Error::new(
                    r.span(),
                    "stencil functions cannot take `self`",
                ))
            }
        }
    }
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, t) => Some(convert_type(t, spans)),
    };
    Ok(FnDef {
        kind,
        attrs,
        name: ident_of(&sig.ident, spans)?,
        generics,
        params,
        ret,
        body: convert_block(&item.block, spans),
        span: spans.add(sig.ident.span()),
    })
}

fn ident_of(i: &syn::Ident, spans: &mut RustSpans) -> syn::Result<Ident> {
    Ok(Ident {
        name: i.to_string(),
        span: spans.add(i.span()),
    })
}

fn convert_type(t: &syn::Type, spans: &mut RustSpans) -> ast::TypeExpr {
    let span = spans.add(t.span());
    let unsupported = |what: &str| ast::TypeExpr::Unsupported {
        what: what.to_string(),
        span,
    };
    match t {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            let seg = &p.path.segments[0];
            let head = Ident {
                name: seg.ident.to_string(),
                span: spans.add(seg.ident.span()),
            };
            match &seg.arguments {
                syn::PathArguments::None => ast::TypeExpr::Name(head),
                syn::PathArguments::AngleBracketed(a) => {
                    let mut args = Vec::new();
                    for arg in &a.args {
                        match arg {
                            syn::GenericArgument::Type(t) => args.push(convert_type(t, spans)),
                            _ => return unsupported("this generic argument"),
                        }
                    }
                    ast::TypeExpr::Apply { head, args, span }
                }
                _ => unsupported("a function type"),
            }
        }
        syn::Type::Reference(_) => unsupported("a reference type"),
        syn::Type::Array(_) | syn::Type::Slice(_) => unsupported("an array type"),
        syn::Type::Tuple(t) if t.elems.len() >= 2 => ast::TypeExpr::Tuple {
            items: t.elems.iter().map(|e| convert_type(e, spans)).collect(),
            span,
        },
        syn::Type::Tuple(_) => unsupported("the unit type or a one-element tuple"),
        syn::Type::Paren(p) => convert_type(&p.elem, spans),
        syn::Type::Group(g) => convert_type(&g.elem, spans),
        _ => unsupported("this type"),
    }
}

fn convert_block(b: &syn::Block, spans: &mut RustSpans) -> Block {
    let span = spans.add(b.span());
    let mut stmts = Vec::new();
    let mut tail = None;
    let n = b.stmts.len();
    for (i, s) in b.stmts.iter().enumerate() {
        match s {
            syn::Stmt::Local(l) => stmts.push(convert_let(l, spans)),
            syn::Stmt::Item(it) => stmts.push(Stmt::Unsupported {
                what: "nested item".into(),
                span: spans.add(it.span()),
            }),
            syn::Stmt::Macro(m) => stmts.push(Stmt::Unsupported {
                what: "macro call".into(),
                span: spans.add(m.span()),
            }),
            syn::Stmt::Expr(e, semi) => {
                let is_last = i + 1 == n;
                if is_last && semi.is_none() && !is_statement_expr(e) {
                    tail = Some(Box::new(convert_expr(e, spans)));
                } else {
                    stmts.push(convert_stmt_expr(e, spans));
                }
            }
        }
    }
    Block { stmts, tail, span }
}

/// Expressions that are statements even without a trailing `;`.
fn is_statement_expr(e: &syn::Expr) -> bool {
    matches!(
        e,
        syn::Expr::ForLoop(_) | syn::Expr::While(_) | syn::Expr::Loop(_) | syn::Expr::Assign(_)
    ) || matches!(e, syn::Expr::Binary(b) if compound_op(&b.op).is_some())
}

fn convert_let(l: &syn::Local, spans: &mut RustSpans) -> Stmt {
    let span = spans.add(l.span());
    let (pat, ty) = match &l.pat {
        syn::Pat::Type(pt) => (&*pt.pat, Some(convert_type(&pt.ty, spans))),
        p => (p, None),
    };
    if let (syn::Pat::Tuple(t), None, Some(init)) = (pat, &ty, &l.init) {
        if let Some(names) = tuple_names(t, spans) {
            return Stmt::LetTuple {
                names,
                init: convert_expr(&init.expr, spans),
                span,
            };
        }
    }
    let syn::Pat::Ident(pi) = pat else {
        return Stmt::Unsupported {
            what: "destructuring `let` of this form (the language binds a tuple's parts to names: `let (a, mut b, _) = ..`, without a type)".into(),
            span: spans.add(pat.span()),
        };
    };
    let init = l.init.as_ref().map(|i| convert_expr(&i.expr, spans));
    Stmt::Let {
        name: Ident {
            name: pi.ident.to_string(),
            span: spans.add(pi.ident.span()),
        },
        mutable: pi.mutability.is_some(),
        ty,
        init,
        span,
    }
}

/// The names of a tuple pattern of two or more plain names (`mut` allowed) or `_`.
fn tuple_names(t: &syn::PatTuple, spans: &mut RustSpans) -> Option<Vec<(Ident, bool)>> {
    if t.elems.len() < 2 {
        return None;
    }
    t.elems
        .iter()
        .map(|p| match p {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some((
                Ident {
                    name: pi.ident.to_string(),
                    span: spans.add(pi.ident.span()),
                },
                pi.mutability.is_some(),
            )),
            syn::Pat::Wild(w) => Some((
                Ident {
                    name: "_".into(),
                    span: spans.add(w.span()),
                },
                false,
            )),
            _ => None,
        })
        .collect()
}

fn compound_op(op: &syn::BinOp) -> Option<ast::BinOp> {
    use syn::BinOp as S;
    Some(match op {
        S::AddAssign(_) => ast::BinOp::Add,
        S::SubAssign(_) => ast::BinOp::Sub,
        S::MulAssign(_) => ast::BinOp::Mul,
        S::DivAssign(_) => ast::BinOp::Div,
        S::RemAssign(_) => ast::BinOp::Rem,
        S::BitAndAssign(_) => ast::BinOp::Bit(BitOp::And),
        S::BitOrAssign(_) => ast::BinOp::Bit(BitOp::Or),
        S::BitXorAssign(_) => ast::BinOp::Bit(BitOp::Xor),
        S::ShlAssign(_) => ast::BinOp::Bit(BitOp::Shl),
        S::ShrAssign(_) => ast::BinOp::Bit(BitOp::Shr),
        _ => return None,
    })
}

fn convert_stmt_expr(e: &syn::Expr, spans: &mut RustSpans) -> Stmt {
    match e {
        syn::Expr::Assign(a) => Stmt::Assign {
            target: convert_expr(&a.left, spans),
            op: None,
            value: convert_expr(&a.right, spans),
            span: spans.add(a.span()),
        },
        syn::Expr::Binary(b) if compound_op(&b.op).is_some() => Stmt::Assign {
            target: convert_expr(&b.left, spans),
            op: compound_op(&b.op),
            value: convert_expr(&b.right, spans),
            span: spans.add(b.op.span()),
        },
        syn::Expr::ForLoop(f) => {
            let span = spans.add(f.for_token.span());
            let syn::Pat::Ident(pi) = &*f.pat else {
                return Stmt::Unsupported {
                    what: "pattern in a `for` loop".into(),
                    span: spans.add(f.pat.span()),
                };
            };
            let var = Ident {
                name: pi.ident.to_string(),
                span: spans.add(pi.ident.span()),
            };
            let syn::Expr::Range(r) = &*f.expr else {
                return Stmt::ForEach {
                    var,
                    iter: convert_expr(&f.expr, spans),
                    body: convert_block(&f.body, spans),
                    span,
                };
            };
            let (Some(start), Some(end)) = (&r.start, &r.end) else {
                return Stmt::Unsupported {
                    what: "open range in a `for` loop".into(),
                    span: spans.add(r.span()),
                };
            };
            Stmt::For {
                var,
                start: convert_expr(start, spans),
                end: convert_expr(end, spans),
                inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
                body: convert_block(&f.body, spans),
                span,
            }
        }
        syn::Expr::While(w) => Stmt::Unsupported {
            what: "`while` loop".into(),
            span: spans.add(w.while_token.span()),
        },
        syn::Expr::Loop(l) => Stmt::Unsupported {
            what: "`loop`".into(),
            span: spans.add(l.loop_token.span()),
        },
        other => Stmt::Expr(convert_expr(other, spans)),
    }
}

fn convert_expr(e: &syn::Expr, spans: &mut RustSpans) -> Expr {
    // Errors about an operation point at its operator (on stable Rust a multi-token span
    // is only its first token).
    let span = match e {
        syn::Expr::Binary(b) => spans.add(b.op.span()),
        syn::Expr::Cast(c) => spans.add(c.as_token.span()),
        _ => spans.add(e.span()),
    };
    let boxed = |e: &syn::Expr, spans: &mut RustSpans| Box::new(convert_expr(e, spans));
    let unsupported = |what: &str| ExprKind::Unsupported(what.to_string());
    let kind = match e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Float(f) => match f.base10_parse::<f64>() {
                Ok(v) => ExprKind::Lit(Lit::Float(v, suffix(f.suffix()))),
                Err(_) => unsupported("this literal"),
            },
            syn::Lit::Int(i) => match i.base10_parse::<i64>() {
                Ok(v) => ExprKind::Lit(Lit::Int(v, suffix(i.suffix()))),
                Err(_) => unsupported("an integer literal that does not fit in `i64`"),
            },
            syn::Lit::Bool(b) => ExprKind::Lit(Lit::Bool(b.value)),
            _ => unsupported("this kind of literal"),
        },
        syn::Expr::Path(p) if p.qself.is_none() => match p.path.get_ident() {
            Some(i) => ExprKind::Name(Ident {
                name: i.to_string(),
                span,
            }),
            None => unsupported("a path (`a::b`)"),
        },
        syn::Expr::Unary(u) => match u.op {
            syn::UnOp::Neg(_) => ExprKind::Unary(ast::UnOp::Neg, boxed(&u.expr, spans)),
            syn::UnOp::Not(_) => ExprKind::Unary(ast::UnOp::Not, boxed(&u.expr, spans)),
            _ => unsupported("`*` dereference"),
        },
        syn::Expr::Binary(b) => match binop(&b.op) {
            Some(op) => ExprKind::Binary(op, boxed(&b.left, spans), boxed(&b.right, spans)),
            None if compound_op(&b.op).is_some() => {
                unsupported("compound assignment inside an expression")
            }
            None => unsupported("bitwise operators"),
        },
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let i = p.path.get_ident().expect("checked");
                ExprKind::Call {
                    func: Ident {
                        name: i.to_string(),
                        span: spans.add(i.span()),
                    },
                    args: c.args.iter().map(|a| convert_expr(a, spans)).collect(),
                }
            }
            _ => unsupported("a call through a path or a closure"),
        },
        syn::Expr::MethodCall(m) if m.turbofish.is_none() => ExprKind::MethodCall {
            receiver: boxed(&m.receiver, spans),
            method: Ident {
                name: m.method.to_string(),
                span: spans.add(m.method.span()),
            },
            args: m.args.iter().map(|a| convert_expr(a, spans)).collect(),
        },
        syn::Expr::Index(ix) => {
            let offsets = match &*ix.index {
                syn::Expr::Tuple(t) => t.elems.iter().map(|a| convert_expr(a, spans)).collect(),
                syn::Expr::Paren(p) => vec![convert_expr(&p.expr, spans)],
                other => vec![convert_expr(other, spans)],
            };
            ExprKind::Index {
                base: boxed(&ix.expr, spans),
                offsets,
            }
        }
        syn::Expr::If(i) => ExprKind::If {
            cond: boxed(&i.cond, spans),
            then: convert_block(&i.then_branch, spans),
            otherwise: i.else_branch.as_ref().map(|(_, e)| boxed(e, spans)),
        },
        syn::Expr::Block(b) if b.label.is_none() => ExprKind::Block(convert_block(&b.block, spans)),
        syn::Expr::Cast(c) => ExprKind::Cast(boxed(&c.expr, spans), convert_type(&c.ty, spans)),
        syn::Expr::Paren(p) => ExprKind::Paren(boxed(&p.expr, spans)),
        syn::Expr::Group(g) => return convert_expr(&g.expr, spans),
        syn::Expr::Return(_) => unsupported("`return`"),
        syn::Expr::Match(_) => unsupported("`match`"),
        syn::Expr::Closure(_) => unsupported("closure"),
        syn::Expr::While(_) => unsupported("`while` loop"),
        syn::Expr::Loop(_) => unsupported("`loop`"),
        syn::Expr::ForLoop(_) => unsupported("`for` loop used as a value"),
        syn::Expr::Reference(_) => unsupported("reference (`&`)"),
        syn::Expr::Macro(_) => unsupported("macro call"),
        syn::Expr::Tuple(t) if t.elems.len() >= 2 => {
            ExprKind::Tuple(t.elems.iter().map(|e| convert_expr(e, spans)).collect())
        }
        syn::Expr::Tuple(_) => unsupported("`()` or a one-element tuple"),
        syn::Expr::Array(_) => unsupported("array value"),
        syn::Expr::Field(f) => match &f.member {
            syn::Member::Named(m) => ExprKind::Member {
                base: boxed(&f.base, spans),
                member: Ident {
                    name: m.to_string(),
                    span: spans.add(m.span()),
                },
            },
            syn::Member::Unnamed(_) => unsupported("tuple field access (`a.0`)"),
        },
        syn::Expr::Struct(st) if st.qself.is_none() && st.rest.is_none() => {
            match groups::group_lit(st, spans) {
                Some(kind) => kind,
                None => unsupported("a struct named by a path (`a::B { .. }`)"),
            }
        }
        syn::Expr::Struct(_) => unsupported("a struct built with `..` or a qualified path"),
        syn::Expr::Assign(_) => unsupported("assignment used as a value"),
        syn::Expr::Range(_) => unsupported("range outside a `for` loop"),
        syn::Expr::Break(b) if b.label.is_none() && b.expr.is_none() => ExprKind::Break,
        syn::Expr::Continue(c) if c.label.is_none() => ExprKind::Continue,
        syn::Expr::Break(_) => unsupported("`break` with a label or a value"),
        syn::Expr::Continue(_) => unsupported("`continue` with a label"),
        _ => unsupported("this Rust construct"),
    };
    Expr { kind, span }
}

fn suffix(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

fn binop(op: &syn::BinOp) -> Option<ast::BinOp> {
    use ast::BinOp as A;
    use syn::BinOp as S;
    Some(match op {
        S::Add(_) => A::Add,
        S::Sub(_) => A::Sub,
        S::Mul(_) => A::Mul,
        S::Div(_) => A::Div,
        S::Rem(_) => A::Rem,
        S::And(_) => A::And,
        S::Or(_) => A::Or,
        S::Eq(_) => A::Compare(Comparison::Eq),
        S::Ne(_) => A::Compare(Comparison::Ne),
        S::Lt(_) => A::Compare(Comparison::Lt),
        S::Le(_) => A::Compare(Comparison::Le),
        S::Gt(_) => A::Compare(Comparison::Gt),
        S::Ge(_) => A::Compare(Comparison::Ge),
        S::BitAnd(_) => A::Bit(BitOp::And),
        S::BitOr(_) => A::Bit(BitOp::Or),
        S::BitXor(_) => A::Bit(BitOp::Xor),
        S::Shl(_) => A::Bit(BitOp::Shl),
        S::Shr(_) => A::Bit(BitOp::Shr),
        _ => return None,
    })
}

/// Collects every `#[stencil]` / `#[stencil_fn]` function of a Rust source file (also
/// inside modules) into one AST module. Used by tools and tests that read Rust sources.
pub fn parse_rust_source(src: &str) -> syn::Result<(ast::Module, RustSpans)> {
    let file = syn::parse_file(src)?;
    let mut spans = RustSpans::default();
    let mut module = ast::Module::default();
    collect_items(&file.items, &mut module, &mut spans)?;
    Ok((module, spans))
}

/// Adds the stencil functions among `items` (recursing into inline modules) to `module`.
pub fn collect_items(
    items: &[syn::Item],
    module: &mut ast::Module,
    spans: &mut RustSpans,
) -> syn::Result<()> {
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if let Some((attr, kind)) = stencil_attr(&f.attrs) {
                    let attrs = match &attr.meta {
                        syn::Meta::List(l) => parse_attr_args(l.tokens.clone(), spans)?,
                        _ => Attrs::default(),
                    };
                    module.items.push(convert_fn(f, kind, attrs, spans)?);
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect_items(inner, module, spans)?;
                }
            }
            syn::Item::Struct(st) if is_group(st) => module.groups.push(convert_group(st, spans)?),
            _ => {}
        }
    }
    Ok(())
}
