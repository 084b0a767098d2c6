//! The CPU back end: IR -> Rust tokens.
//!
//! Emits `unsafe fn cpu<T: Real>(n, fields.., scalars..) -> (reductions..)`, parallel over
//! grid rows on the runtime's team of threads (through `stencil_runtime::cpu`), with one
//! pointer per (field, row offset) hoisted out of the inner loop so that the inner loop is
//! plain pointer arithmetic that LLVM can vectorise; a row's points near the edges along
//! axis 0 and those between run in separate loops, the middle one with the edge tests
//! decided (`middle.rs`: pairs of an even and an odd point for kernels that test the
//! parity of `i`, interior rows and rows of either parity apart for those that test `j`
//! and `k`). Each IR node becomes one `let`, in dependency order, so the generated code
//! performs exactly the operations of the IR in the same order as the LLVM back end: the
//! two paths agree to rounding.
//!
//! `nodes.rs` turns IR nodes into `let`s, `line.rs` writes line (tridiagonal) kernels.

mod item;
mod line;
mod middle;
mod nodes;
mod staged;

use super::edges;
use crate::ir::{Access, Binary, Comparison, Kernel, Node, ParamKind, ReduceOp, Ty};
use item::{RowFn, Signature};
use line::line_function;
use middle::Middle;
use nodes::{mapped, point_body, LoadForm};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, ToTokens};
use std::collections::BTreeSet;

/// The Rust name of an IR type, with `T` for the generic real.
pub fn ty_tokens(t: Ty) -> TokenStream {
    match t {
        Ty::Real => quote!(T),
        Ty::F32 => quote!(f32),
        Ty::F64 => quote!(f64),
        Ty::Int => quote!(i64),
        Ty::Bool => quote!(bool),
        Ty::I32 => quote!(i32),
        Ty::U8 => quote!(u8),
    }
}

/// The identifier of a field parameter inside generated code.
pub fn field_ident(name: &str) -> Ident {
    format_ident!("f_{}", name)
}

/// The identifier of a sampled grid inside generated code.
pub fn sampled_ident(name: &str) -> Ident {
    format_ident!("g_{}", name)
}

/// The identifier of a scalar parameter inside generated code.
pub fn scalar_ident(name: &str) -> Ident {
    format_ident!("s_{}", name)
}

fn v(n: u32) -> Ident {
    format_ident!("v{}", n)
}

fn row_ident(field: u32, dy: i32, dz: i32) -> Ident {
    let s = |x: i32| {
        if x < 0 {
            format!("m{}", -x)
        } else {
            format!("{x}")
        }
    };
    format_ident!("row_{}_{}_{}", field, s(dy), s(dz))
}

/// The `cpu` function of a kernel. `rt` is the path of the runtime crate. A kernel with
/// staged values computes them into row buffers first (`staged.rs`), a chain of stages
/// level by level, each level's buffers from the fields and the lower levels' buffers.
pub fn cpu_function(k: &Kernel, rt: &TokenStream) -> TokenStream {
    let real = quote!(#rt::Real);
    let generics = if k.is_generic() {
        quote!(<T: #real>)
    } else {
        quote!()
    };
    let mut params = Vec::new();
    let mut args: Vec<Ident> = Vec::new();
    for &(kind, i) in &k.param_order {
        match kind {
            ParamKind::Field => {
                let f = &k.fields[i as usize];
                let id = field_ident(&f.name);
                let t = ty_tokens(f.elem);
                args.push(id.clone());
                params.push(match f.access {
                    Access::In => quote!(#id: #rt::cpu::View<#t>),
                    Access::Out | Access::InOut => quote!(#id: #rt::cpu::ViewMut<#t>),
                });
            }
            ParamKind::Scalar => {
                let s = &k.scalars[i as usize];
                let id = scalar_ident(&s.name);
                let t = ty_tokens(s.ty);
                args.push(id.clone());
                params.push(quote!(#id: #t));
            }
            ParamKind::Reduction => {}
            ParamKind::Mesh => {
                args.push(format_ident!("mesh_view"));
                params.push(quote!(mesh_view: #rt::cpu::MeshView));
            }
            ParamKind::Sampled => {
                let g = &k.sampled[i as usize];
                let id = sampled_ident(&g.name);
                let t = ty_tokens(g.elem);
                args.push(id.clone());
                params.push(quote!(#id: #rt::cpu::SampledView<#t>));
            }
        }
    }

    let sig = Signature {
        rt,
        generics: &generics,
        params: &params,
        args: &args,
    };
    if let Some(line) = &k.line {
        return line_function(k, line, &sig);
    }
    // Row pointers: one per (field, dy, dz) read or written.
    let live = k.live_nodes();
    let mut rows = BTreeSet::new();
    for &n in &live {
        match k.nodes[n as usize] {
            Node::Load { field, offset } => {
                rows.insert((field, offset[1], offset[2]));
            }
            Node::Gather { field, .. } => {
                rows.insert((field, 0, 0));
            }
            _ => {}
        }
    }
    for st in &k.stores {
        rows.insert((st.field, 0, 0));
    }
    rows.extend(staged::rows(k, &live));
    let stage_fill = staged::fill(k, &live, rt, &real);
    let row_ptrs = rows.iter().map(|&(f, dy, dz)| {
        let id = row_ident(f, dy, dz);
        let field = &k.fields[f as usize];
        let fid = field_ident(&field.name);
        let (j, k) = (mapped(field.map, quote!(ja)), mapped(field.map, quote!(ka)));
        quote!(let #id = #fid.row_at(shift, #j + (#dy as isize), #k + (#dz as isize));)
    });

    let strided = colour_strided(k);
    let parity: Vec<(u32, bool)> = strided
        .and_then(|s| s.parity)
        .map(|p| (p, true))
        .into_iter()
        .collect();
    let body = point_body(k, &live, &real, LoadForm::Rows, &parity);
    // The scalars and extents as locals of the row's closure: read once per row, kept in
    // registers (through the captured references LLVM reloads them at every point, as a
    // store to an output might alias them).
    let locals = scalar_locals(k);
    let stores: Vec<TokenStream> = k
        .stores
        .iter()
        .map(|st| {
            let row = row_ident(st.field, 0, 0);
            let val = nodes::narrowed_to_memory(
                v(st.value).into_token_stream(),
                k.fields[st.field as usize].elem,
            );
            match st.mask {
                Some(m) => {
                    let m = v(m);
                    quote!(if #m { *#row.offset(ia) = #val; })
                }
                None => quote!(*#row.offset(ia) = #val;),
            }
        })
        .collect();

    // A vertex kernel's points are heavy: its runner splits the set into small chunks.
    let (for_each, reduce, covers) = if k.is_vertex() {
        (
            quote!(for_each_vertex_chunk),
            quote!(reduce_vertex_chunks),
            quote!(n),
        )
    } else {
        (quote!(for_each_row), quote!(reduce_rows), quote!(n, over))
    };
    // Where the row is: its global indices `j`, `k` (what the kernel sees) and, for the
    // views, `ja`, `ka`, the point `i`'s index `ia = i - o0`, and the storage's `shift`
    // (all plain for a dense launch; a block's slot for a launch over blocks).
    let row_place = quote! {
        let (j, k) = (r.j as isize, r.k as isize);
        let (ja, ka) = (j - r.origin[1] as isize, k - r.origin[2] as isize);
        let (o0, shift) = (r.origin[0] as isize, r.shift);
    };
    let red_types: Vec<TokenStream> = k.reductions.iter().map(|r| ty_tokens(r.ty)).collect();
    // The points of a row: all of them, or those of the colour a red-black kernel updates:
    // the first, one past the last, and the step.
    let (first, step) = match strided {
        Some(Strided { colour, .. }) => {
            let c = scalar_ident(&k.scalars[colour as usize].name);
            let first = quote! {
                if #c == 0 || #c == 1 {
                    r.i0 as isize + (#c - r.i0 as i64 - j as i64 - k as i64).rem_euclid(2) as isize
                } else {
                    r.i1 as isize
                }
            };
            (first, 2usize)
        }
        None => (quote!(r.i0 as isize), 1),
    };
    let stepped = |range: TokenStream| {
        if step == 1 {
            range
        } else {
            quote!((#range).step_by(#step))
        }
    };
    let points = stepped(quote!(#first..r.i1 as isize));
    // A vertex kernel's point is the vertex at position `t` of its set.
    // `ia`: the point's index in the views; `iac`: a coarse field's (see `nodes::mapped`).
    let point = if k.is_vertex() {
        quote! {
            let i = mesh_view.vertex(t);
            let ia = i;
            let iac = ia >> 1;
            #(#body)*
            #(#stores)*
        }
    } else {
        middle::point_at_t(&body, &stores)
    };
    // The middle loop decides the edge tests along axis 0 (`edges.rs`); a kernel without
    // them has none.
    let edge_tests = if k.is_vertex() {
        Vec::new()
    } else {
        edges::decided_in_middle(k, &live)
    };
    let has_middle = !edge_tests.is_empty();
    let decided: Vec<(u32, bool)> = parity.iter().chain(&edge_tests).copied().collect();
    let middle = Middle {
        k,
        live: &live,
        real: &real,
        known: &decided,
        stores: &stores,
        step,
    };
    // The row's code around its loops: where it is, the locals, the row pointers, the
    // staged values.
    let row_ptrs: Vec<TokenStream> = row_ptrs.collect();
    let row_code = |loops: &TokenStream| {
        quote! {
            #row_place
            #locals
            #(#row_ptrs)*
            #stage_fill
            #loops
        }
    };
    if k.reductions.is_empty() {
        let all_points = quote! {
            for t in #points {
                #point
            }
        };
        let (row_loops, plain_loops) = if has_middle {
            let edge = stepped(quote!(from..to));
            let edge = quote! {
                for t in #edge {
                    #point
                }
            };
            (
                row_parts(rt, &first, step, middle.row_loop(), edge),
                Some(all_points),
            )
        } else {
            (all_points, None)
        };
        let row = RowFn {
            ret: quote!(),
            body: row_code(&row_loops),
            plain: plain_loops.as_ref().map(row_code),
        };
        let call_row = sig.call_row();
        let item = sig.item(
            quote!(),
            quote!(#rt::cpu::#for_each(#covers, move |r: #rt::cpu::Row| #call_row);),
            Some(&row),
        );
        quote! {
            /// The CPU implementation: every interior point of the domain `n`, rows in
            /// parallel.
            ///
            /// # Safety
            /// Every view must cover the domain plus the kernel's halo, and outputs must not
            /// overlap inputs or each other.
            #[allow(clippy::all, unused, non_snake_case, unused_parens)]
            #item
        }
    } else {
        let accs: Vec<Ident> = (0..k.reductions.len())
            .map(|r| format_ident!("acc{}", r))
            .collect();
        let identities = k.reductions.iter().map(|r| {
            let t = ty_tokens(r.ty);
            let id = r.op.identity();
            let lit = if id.is_infinite() {
                if id > 0.0 {
                    quote!(f64::INFINITY)
                } else {
                    quote!(f64::NEG_INFINITY)
                }
            } else {
                quote!(0.0f64)
            };
            quote!(<#t as #real>::from_f64(#lit))
        });
        let identities: Vec<_> = identities.collect();
        let combine_acc = |r: usize, a: TokenStream, b: TokenStream| -> TokenStream {
            let t = ty_tokens(k.reductions[r].ty);
            match k.reductions[r].op {
                ReduceOp::Sum => quote!(#a + #b),
                ReduceOp::Max => quote!(<#t as #rt::num_traits::Float>::max(#a, #b)),
                ReduceOp::Min => quote!(<#t as #rt::num_traits::Float>::min(#a, #b)),
            }
        };
        // Each contribution's values of a tile of points go to a buffer on the stack (a
        // loop without a loop-carried dependence, which vectorises), and the buffer is
        // folded in lanes (`cpu::fold_lanes`): LLVM may not reorder a floating-point
        // reduction itself, so a reduction inside the point loop would keep the whole
        // loop scalar.
        let parts: Vec<Ident> = (0..k.contributions.len())
            .map(|c| format_ident!("part{}", c))
            .collect();
        let part_decls: Vec<TokenStream> = k
            .contributions
            .iter()
            .zip(&parts)
            .map(|(&(r, _), part)| {
                let id = &identities[r as usize];
                quote!(let mut #part = [#id; #rt::cpu::REDUCTION_TILE];)
            })
            .collect();
        let part_writes = k.contributions.iter().zip(&parts).map(|(&(_, n), part)| {
            let val = v(n);
            quote!(*#part.get_unchecked_mut((t - t0) as usize) = #val;)
        });
        let updates = k.contributions.iter().zip(&parts).map(|(&(r, _), part)| {
            let acc = &accs[r as usize];
            let id = &identities[r as usize];
            let t = &red_types[r as usize];
            let fold = combine_acc(r as usize, quote!(a), quote!(b));
            let e = combine_acc(
                r as usize,
                quote!(#acc),
                quote!(#rt::cpu::fold_lanes(&#part[..(t1 - t0) as usize], #id, |a: #t, b: #t| #fold)),
            );
            quote!(#acc = #e;)
        });
        let part_writes: Vec<TokenStream> = part_writes.collect();
        let updates: Vec<TokenStream> = updates.collect();
        // The points `from..to` of a row in tiles, each computed by `point`.
        let tiles = |from: TokenStream, to: TokenStream, point: &TokenStream| {
            quote! {
                let (mut t0, end) = (#from, #to);
                while t0 < end {
                    let t1 = end.min(t0 + #rt::cpu::REDUCTION_TILE as isize);
                    for t in t0..t1 {
                        #point
                        #(#part_writes)*
                    }
                    #(#updates)*
                    t0 = t1;
                }
            }
        };
        // As without reductions: the middle points with the edge tests decided. The plain
        // code runs the same tiles of the general code.
        let (tile_loops, plain_loops) = match has_middle.then(|| middle.point(&[])) {
            Some(middle_point) => {
                let m = edges::EDGE_MARGIN as isize;
                let edge = tiles(quote!(from), quote!(to), &point);
                let middle = tiles(
                    quote!(from.max(#m)),
                    quote!(to.min(n[0] as isize - #m)),
                    &middle_point,
                );
                let plain = quote! {
                    let parts = #rt::cpu::split_row(#first, r.i1 as isize, #step, n[0] as isize, #m);
                    for (from, to) in parts {
                        #edge
                    }
                };
                (row_parts(rt, &first, step, middle, edge), Some(plain))
            }
            None => {
                let all = tiles(quote!(points.start), quote!(points.end), &point);
                let loops = quote! {
                    let points = #points;
                    #all
                };
                (loops, None)
            }
        };
        let combine_tuple = (0..k.reductions.len()).map(|r| {
            let idx = syn::Index::from(r);
            combine_acc(r, quote!(a.#idx), quote!(b.#idx))
        });
        let ret = if k.reductions.len() == 1 {
            quote!(#(#red_types)*)
        } else {
            quote!((#(#red_types),*))
        };
        let finish = if k.reductions.len() == 1 {
            quote!(total.0)
        } else {
            quote!(total)
        };
        let reduced_rows = |loops: &TokenStream| {
            row_code(&quote! {
                let (#(mut #accs,)*) = (#(#identities,)*);
                #(#part_decls)*
                #loops
                (#(#accs,)*)
            })
        };
        let row = RowFn {
            ret: quote!(-> (#(#red_types,)*)),
            body: reduced_rows(&tile_loops),
            plain: plain_loops.as_ref().map(reduced_rows),
        };
        let call_row = sig.call_row();
        let item = sig.item(
            quote!(-> #ret),
            quote! {
                let total = #rt::cpu::#reduce(
                    #covers,
                    (#(#identities,)*),
                    |a: (#(#red_types,)*), b: (#(#red_types,)*)| (#(#combine_tuple,)*),
                    move |r: #rt::cpu::Row| #call_row,
                );
                #finish
            },
            Some(&row),
        );
        quote! {
            /// The CPU implementation: every interior point of the domain `n`, rows in
            /// parallel; returns the reductions, combined row by row in a fixed order.
            ///
            /// # Safety
            /// Every view must cover the domain plus the kernel's halo, and outputs must not
            /// overlap inputs or each other.
            #[allow(clippy::all, unused, non_snake_case, unused_parens, unused_mut)]
            #item
        }
    }
}

/// A row's points in three parts (`cpu::split_row`), in order (a reduction's rounding
/// depends on it): those near the low end, the middle ones (`middle`, the code of the
/// range `middle` and of `from..to`) and those near the high end; both ends run `edge`
/// (the code of `from..to`), one copy of the general code. `first` is the row's first
/// point and `step` the step between its points.
fn row_parts(
    rt: &TokenStream,
    first: &TokenStream,
    step: usize,
    middle: TokenStream,
    edge: TokenStream,
) -> TokenStream {
    let m = edges::EDGE_MARGIN as isize;
    quote! {
        let [low, middle, high] =
            #rt::cpu::split_row(#first, r.i1 as isize, #step, n[0] as isize, #m);
        for (side, (from, to)) in [low, middle, high].into_iter().enumerate() {
            if side == 1 {
                #middle
            } else {
                #edge
            }
        }
    }
}

/// `let s_x = s_x;` for every scalar parameter, and `let n = n;`.
fn scalar_locals(k: &Kernel) -> TokenStream {
    let ids = k.scalars.iter().map(|s| scalar_ident(&s.name));
    quote!(let n = n; #(let #ids = #ids;)*)
}

/// A red-black kernel whose rows visit only the points of the updated colour.
#[derive(Clone, Copy)]
struct Strided {
    /// The colour scalar.
    colour: u32,
    /// The node `(i + j [+ k]) % 2 == colour` of the stores' masks, true at every visited
    /// point (when the optimiser left it recognisable).
    parity: Option<u32>,
}

/// How a red-black kernel's CPU rows skip the other colour: every store of a red-black
/// kernel is masked by its colour's parity, so a row visits every other point and does
/// half the work. Kernels with reductions (which see every point) and vertex kernels
/// visit every point.
fn colour_strided(k: &Kernel) -> Option<Strided> {
    let colour = k.red_black?;
    if !k.reductions.is_empty() || k.is_vertex() || k.line.is_some() {
        return None;
    }
    let is_parity = |n: u32| match k.nodes[n as usize] {
        Node::Binary(Binary::Compare(Comparison::Eq), a, b) => {
            matches!(k.nodes[b as usize], Node::Scalar(c) if c == colour)
                && matches!(k.nodes[a as usize], Node::Binary(Binary::Rem, _, two)
                    if matches!(k.nodes[two as usize], Node::IntConst(2)))
        }
        _ => false,
    };
    // The parity is the mask, or the last operand of the mask's `and`.
    let parity_of = |m: u32| match k.nodes[m as usize] {
        _ if is_parity(m) => Some(m),
        Node::Binary(Binary::And, a, b) => [b, a].into_iter().find(|&x| is_parity(x)),
        _ => None,
    };
    let mut parities = k.stores.iter().map(|st| st.mask.and_then(parity_of));
    let first = parities.next().flatten();
    let parity = first.filter(|&p| parities.all(|q| q == Some(p)));
    Some(Strided { colour, parity })
}
