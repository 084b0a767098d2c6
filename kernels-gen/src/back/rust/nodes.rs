//! IR nodes as Rust `let`s: a point's computation, in dependency order.

use super::{field_ident, row_ident, sampled_ident, scalar_ident, ty_tokens, v};
use crate::ir::{Around, Binary, BitOp, IndexMap, Kernel, Node, Step, Topo, Ty, Unary};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// A field index through the field's map: `x`, `2 * x` or `x >> 1` (indices are >= 0).
pub(super) fn mapped(map: IndexMap, x: TokenStream) -> TokenStream {
    match map {
        IndexMap::Same => x,
        // A shift, not `2 * x`: integer arithmetic in the inner loop would carry overflow
        // checks in builds that have them, and those keep LLVM from vectorising the loop.
        IndexMap::Fine => quote!((#x << 1)),
        IndexMap::Coarse => quote!((#x >> 1)),
    }
}

/// How generated code reaches a field value.
#[derive(Clone, Copy)]
pub(super) enum LoadForm {
    /// Through the row pointers hoisted out of the inner loop.
    Rows,
    /// From the view at the point `(i, j, k)` directly (line kernels).
    Point,
}

/// The `let`s of a point's live nodes, in the kernel's schedule: a run-time loop with
/// the nodes of its iterations inside it.
pub(super) fn point_body(
    k: &Kernel,
    live: &[u32],
    real: &TokenStream,
    form: LoadForm,
    known: &[(u32, bool)],
) -> Vec<TokenStream> {
    k.schedule(live)
        .into_iter()
        .map(|step| match step {
            Step::Node(n) if known.iter().any(|&(m, _)| m == n) => {
                let id = v(n);
                let value = known.iter().any(|&(m, b)| m == n && b);
                quote!(let #id: bool = #value;)
            }
            Step::Node(n) => node_let(k, n, real, form),
            Step::Loop { index, body } => runtime_loop(k, index, &body, real, form),
        })
        .collect()
}

fn carried_ident(l: u32, c: usize) -> Ident {
    format_ident!("c{}_{}", l, c)
}

/// Run-time loop `l`: its carried variables as `mut` locals, updated at the end of each
/// iteration from the nodes computed in it (`body`).
fn runtime_loop(
    k: &Kernel,
    l: u32,
    body: &[u32],
    real: &TokenStream,
    form: LoadForm,
) -> TokenStream {
    let lp = &k.loops[l as usize];
    let carried: Vec<Ident> = (0..lp.init.len()).map(|c| carried_ident(l, c)).collect();
    let types: Vec<TokenStream> = lp
        .init
        .iter()
        .map(|&n| ty_tokens(k.types[n as usize]))
        .collect();
    let inits = lp.init.iter().map(|&n| v(n));
    let nexts = lp.next.iter().map(|&n| v(n));
    let body = body.iter().map(|&n| node_let(k, n, real, form));
    let range = match lp.over {
        Around::Neighbours => quote!(mesh_view.neighbour_range(i)),
        Around::Triangles => quote!(mesh_view.triangle_range(i)),
    };
    // After a `break` the loop stops.
    let stop = lp.stops_when.map(|c| {
        let alive = carried_ident(l, c as usize);
        quote!(if !#alive { break; })
    });
    quote! {
        #(let mut #carried: #types = #inits;)*
        for p in #range {
            #(#body)*
            #(#carried = #nexts;)*
            #stop
        }
    }
}

/// An element `read` of a field of element type `stored`, as the kernel's value: narrow
/// integers widened to `i64`.
fn widened_from_memory(read: TokenStream, stored: Ty) -> TokenStream {
    match stored {
        Ty::I32 | Ty::U8 => quote!((#read as i64)),
        _ => read,
    }
}

/// A kernel's value `v` as an element of a field of element type `stored`: narrow
/// integers wrapped, as `as` does.
pub(super) fn narrowed_to_memory(v: TokenStream, stored: Ty) -> TokenStream {
    match stored {
        Ty::I32 => quote!((#v as i32)),
        Ty::U8 => quote!((#v as u8)),
        _ => v,
    }
}

/// `let vN: Ty = <expr>;` for one node.
pub(super) fn node_let(k: &Kernel, n: u32, real: &TokenStream, form: LoadForm) -> TokenStream {
    let ty = k.types[n as usize];
    let t = ty_tokens(ty);
    let fl = |op: &str, args: &[TokenStream]| -> TokenStream {
        let m = Ident::new(op, Span::call_site());
        quote!(<#t as #real>::#m(#(#args),*))
    };
    let id = v(n);
    let a = |x: u32| {
        let i = v(x);
        quote!(#i)
    };
    let expr = match k.nodes[n as usize] {
        Node::RealConst(bits) => {
            let x = f64::from_bits(bits);
            let lit = float_literal(x);
            quote!(<#t as #real>::from_f64(#lit))
        }
        Node::IntConst(x) => quote!(#x),
        Node::BoolConst(b) => quote!(#b),
        Node::Scalar(s) => {
            let i = scalar_ident(&k.scalars[s as usize].name);
            quote!(#i)
        }
        Node::Index(0) => quote!((i as i64)),
        Node::Index(1) => quote!((j as i64)),
        Node::Index(_) => quote!((k as i64)),
        Node::Extent(axis) => {
            let ax = axis as usize;
            quote!((n[#ax] as i64))
        }
        Node::Load { field, offset } => {
            let f = &k.fields[field as usize];
            let [dx, dy, dz] = offset.map(|o| o as isize);
            let read = match form {
                LoadForm::Rows => {
                    // `ia`: the point's index in the views (`i` less its block's origin).
                    // A coarse field's index `iac` is `ia >> 1`, or a pair's shared one.
                    let x = match f.map {
                        IndexMap::Coarse => quote!(iac),
                        map => mapped(map, quote!(ia)),
                    };
                    let row = row_ident(field, offset[1], offset[2]);
                    // Pointer steps rather than `x + dx` (see `mapped`).
                    if dx == 0 {
                        quote!(*#row.offset(#x))
                    } else {
                        quote!(*#row.offset(#x).offset(#dx))
                    }
                }
                LoadForm::Point => {
                    let fid = field_ident(&f.name);
                    let x = mapped(f.map, quote!(i));
                    let (y, z) = (mapped(f.map, quote!(j)), mapped(f.map, quote!(k)));
                    quote!(*#fid.row(#y + #dy, #z + #dz).offset(#x + #dx))
                }
            };
            widened_from_memory(read, f.elem)
        }
        Node::Unary(op, x) => {
            let x = a(x);
            match (op, ty) {
                (Unary::Neg, Ty::Int) => quote!(#x.wrapping_neg()),
                (Unary::Neg, _) => quote!(-#x),
                (Unary::Not, _) => quote!(!#x),
                (Unary::Abs, Ty::Int) => quote!(#x.wrapping_abs()),
                (Unary::Abs, _) => fl("abs", &[x]),
                (Unary::Sqrt, _) => fl("sqrt", &[x]),
                (Unary::Floor, _) => fl("floor", &[x]),
                (Unary::Ceil, _) => fl("ceil", &[x]),
                (Unary::Trunc, _) => fl("trunc", &[x]),
                (Unary::Round, _) => fl("round", &[x]),
                (Unary::Exp, _) => fl("exp", &[x]),
                (Unary::Ln, _) => fl("ln", &[x]),
                (Unary::Exp2, _) => fl("exp2", &[x]),
                (Unary::Log2, _) => fl("log2", &[x]),
                (Unary::Log10, _) => fl("log10", &[x]),
                (Unary::Sinh, _) => fl("sinh", &[x]),
                (Unary::Cosh, _) => fl("cosh", &[x]),
                (Unary::Tanh, _) => fl("tanh", &[x]),
                (Unary::Cbrt, _) => fl("cbrt", &[x]),
                (Unary::Asinh, _) => fl("asinh", &[x]),
                (Unary::Acosh, _) => fl("acosh", &[x]),
                (Unary::Atanh, _) => fl("atanh", &[x]),
                (Unary::Sin, _) => fl("sin", &[x]),
                (Unary::Cos, _) => fl("cos", &[x]),
                (Unary::Tan, _) => fl("tan", &[x]),
                (Unary::Asin, _) => fl("asin", &[x]),
                (Unary::Acos, _) => fl("acos", &[x]),
                (Unary::Atan, _) => fl("atan", &[x]),
            }
        }
        Node::Binary(op, x, y) => {
            let operand_ty = k.types[x as usize];
            let (x, y) = (a(x), a(y));
            let int = operand_ty == Ty::Int;
            match op {
                Binary::Add if int => quote!(#x.wrapping_add(#y)),
                Binary::Sub if int => quote!(#x.wrapping_sub(#y)),
                Binary::Mul if int => quote!(#x.wrapping_mul(#y)),
                Binary::Div if int => quote!(if #y == 0 { 0 } else { #x.wrapping_div(#y) }),
                Binary::Rem if int => quote!(if #y == 0 { 0 } else { #x.wrapping_rem(#y) }),
                Binary::Min if int => quote!(::core::cmp::Ord::min(#x, #y)),
                Binary::Max if int => quote!(::core::cmp::Ord::max(#x, #y)),
                Binary::Bit(BitOp::Shl) => quote!(#x.wrapping_shl(#y as u32)),
                Binary::Bit(BitOp::Shr) => quote!(#x.wrapping_shr(#y as u32)),
                Binary::Bit(o) => infix(x, o.symbol(), y),
                Binary::Add => quote!(#x + #y),
                Binary::Sub => quote!(#x - #y),
                Binary::Mul => quote!(#x * #y),
                Binary::Div => quote!(#x / #y),
                Binary::Rem => quote!(#x % #y),
                Binary::Min => fl("min", &[x, y]),
                Binary::Max => fl("max", &[x, y]),
                Binary::CopySign => fl("copysign", &[x, y]),
                Binary::Pow => fl("powf", &[x, y]),
                Binary::Hypot => fl("hypot", &[x, y]),
                Binary::Atan2 => fl("atan2", &[x, y]),
                Binary::And => quote!(#x & #y),
                Binary::Or => quote!(#x | #y),
                Binary::Compare(c) => infix(x, c.symbol(), y),
            }
        }
        Node::Fma(x, y, z) => fl("fma", &[a(x), a(y), a(z)]),
        Node::Select(c, x, y) => {
            let (c, x, y) = (a(c), a(x), a(y));
            quote!(if #c { #x } else { #y })
        }
        Node::LineSolution(_) => unreachable!("never live in a finished kernel"),
        Node::Staged { stage, offset } => {
            // From the row's buffer (`staged.rs`).
            let buf = super::staged::buffer_ident(stage, offset[1], offset[2]);
            let call = k.stages[stage as usize].call;
            let base = super::staged::base_ident(call, offset[1], offset[2]);
            let dx = offset[0] as isize;
            quote!(*#buf.add((i + #dx - #base) as usize))
        }
        Node::Gather { field, vertex } => {
            let row = row_ident(field, 0, 0);
            let at = a(vertex);
            widened_from_memory(
                quote!(*#row.offset(#at as isize)),
                k.fields[field as usize].elem,
            )
        }
        Node::Sample { grid, x, y } => {
            let g = sampled_ident(&k.sampled[grid as usize].name);
            let (x, y) = (a(x), a(y));
            quote!(#g.sample(#x, #y))
        }
        Node::Topo { table, pos } => {
            let p = a(pos);
            match table {
                Topo::Neighbour => quote!(mesh_view.neighbour(#p)),
                Topo::Corner1 => quote!(mesh_view.corner(#p, 0)),
                Topo::Corner2 => quote!(mesh_view.corner(#p, 1)),
            }
        }
        Node::LoopPos(_) => quote!((p as i64)),
        Node::Carried(l, c) => {
            let c = carried_ident(l, c as usize);
            quote!(#c)
        }
        Node::LoopResult(l, c) => {
            let c = carried_ident(l, c as usize);
            quote!(#c)
        }
        Node::Cast(x) => {
            let from = k.types[x as usize];
            let xi = a(x);
            let ft = ty_tokens(from);
            match (from, ty) {
                (Ty::Int, to) if to.is_float() => quote!(<#t as #real>::from_i64(#xi)),
                (Ty::Bool, Ty::Int) => quote!(#xi as i64),
                (f, Ty::Int) if f.is_float() => quote!(<#ft as #real>::as_i64(#xi)),
                (f, to) if f.is_float() && to.is_float() => {
                    quote!(<#t as #real>::from_f64(<#ft as #real>::as_f64(#xi)))
                }
                _ => quote!(#xi),
            }
        }
    };
    quote!(let #id: #t = #expr;)
}

/// `x op y` for an operator as Rust writes it (`==`, `&`, ...).
fn infix(x: TokenStream, symbol: &str, y: TokenStream) -> TokenStream {
    let op: TokenStream = symbol.parse().expect("a Rust operator");
    quote!(#x #op #y)
}

/// A literal token for an `f64`, including the non-finite values.
fn float_literal(x: f64) -> TokenStream {
    if x.is_nan() {
        quote!(f64::NAN)
    } else if x == f64::INFINITY {
        quote!(f64::INFINITY)
    } else if x == f64::NEG_INFINITY {
        quote!(f64::NEG_INFINITY)
    } else {
        let l = proc_macro2::Literal::f64_suffixed(x);
        quote!(#l)
    }
}
