//! The CPU back end: IR -> Rust tokens.
//!
//! Emits `unsafe fn cpu<T: Real>(n, fields.., scalars..) -> (reductions..)`, parallel over
//! grid rows with rayon (through `stencil_runtime::cpu`), with one pointer per (field, row
//! offset) hoisted out of the inner loop so that the inner loop is plain pointer arithmetic
//! that LLVM can vectorise. Each IR node becomes one `let`, in dependency order, so the
//! generated code performs exactly the operations of the IR in the same order as the LLVM
//! back end: the two paths agree to rounding.

use crate::ir::{
    Access, Around, Binary, IndexMap, Kernel, Node, ParamKind, ReduceOp, Step, Topo, Ty, Unary,
};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::BTreeSet;

/// The Rust name of an IR type, with `T` for the generic real.
pub fn ty_tokens(t: Ty) -> TokenStream {
    match t {
        Ty::Real => quote!(T),
        Ty::F32 => quote!(f32),
        Ty::F64 => quote!(f64),
        Ty::Int => quote!(i64),
        Ty::Bool => quote!(bool),
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

/// The signature of a kernel's `cpu` function.
struct Signature<'a> {
    /// The path of the runtime crate.
    rt: &'a TokenStream,
    /// `<T: Real>` for a generic kernel, else nothing.
    generics: &'a TokenStream,
    /// The parameters after the domain `n`, with their types.
    params: &'a [TokenStream],
    /// The parameters' names, in order.
    args: &'a [Ident],
}

impl Signature<'_> {
    /// `pub unsafe fn cpu(n, params..) ret { body }` (attributes go before it). On x86-64
    /// the body is also compiled for AVX (8 f32 or 4 f64 lanes, where the baseline has
    /// SSE2's 4 and 2) and that copy runs where the CPU has it
    /// ([`cpu::wide_vectors`](../../stencil_runtime/cpu/fn.wide_vectors.html)): the
    /// closures inside inherit the target feature.
    fn item(&self, ret: TokenStream, body: TokenStream) -> TokenStream {
        let Signature {
            rt,
            generics,
            params,
            args,
        } = self;
        let turbofish = if generics.is_empty() {
            quote!()
        } else {
            quote!(::<T>)
        };
        quote! {
            pub unsafe fn cpu #generics (n: [usize; 3], #(#params),*) #ret {
                #[cfg(target_arch = "x86_64")]
                {
                    #[target_feature(enable = "avx")]
                    unsafe fn wide #generics (n: [usize; 3], #(#params),*) #ret {
                        #body
                    }
                    if #rt::cpu::wide_vectors() {
                        return wide #turbofish (n, #(#args),*);
                    }
                }
                #body
            }
        }
    }
}

/// The `cpu` function of a kernel. `rt` is the path of the runtime crate.
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
    let row_ptrs = rows.iter().map(|&(f, dy, dz)| {
        let id = row_ident(f, dy, dz);
        let field = &k.fields[f as usize];
        let fid = field_ident(&field.name);
        let (j, k) = (mapped(field.map, quote!(j)), mapped(field.map, quote!(k)));
        quote!(let #id = #fid.row(#j + (#dy as isize), #k + (#dz as isize));)
    });

    let strided = colour_strided(k);
    let body = point_body(
        k,
        &live,
        &real,
        LoadForm::Rows,
        strided.and_then(|s| s.parity),
    );
    // The scalars and extents as locals of the row's closure: read once per row, kept in
    // registers (through the captured references LLVM reloads them at every point, as a
    // store to an output might alias them).
    let locals = scalar_locals(k);
    let stores = k.stores.iter().map(|st| {
        let row = row_ident(st.field, 0, 0);
        let val = v(st.value);
        match st.mask {
            Some(m) => {
                let m = v(m);
                quote!(if #m { *#row.offset(i) = #val; })
            }
            None => quote!(*#row.offset(i) = #val;),
        }
    });

    // A vertex kernel's points are heavy: its runner splits the set into small chunks.
    let (for_each, reduce) = if k.is_vertex() {
        (quote!(for_each_vertex_chunk), quote!(reduce_vertex_chunks))
    } else {
        (quote!(for_each_row), quote!(reduce_rows))
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
    let point = if k.is_vertex() {
        quote! {
            let i = mesh_view.vertex(t);
            #(#body)*
            #(#stores)*
        }
    } else {
        quote! {
            let i = t;
            #(#body)*
            #(#stores)*
        }
    };
    if k.reductions.is_empty() {
        let row_loops = quote! {
            for t in #points {
                #point
            }
        };
        let item = sig.item(
            quote!(),
            quote! {
                    #rt::cpu::#for_each(n, move |r: #rt::cpu::Row| {
                        let (j, k) = (r.j as isize, r.k as isize);
                        #locals
                    #(#row_ptrs)*
                    #row_loops
                });
            },
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
        let part_decls = k.contributions.iter().zip(&parts).map(|(&(r, _), part)| {
            let id = &identities[r as usize];
            quote!(let mut #part = [#id; #rt::cpu::REDUCTION_TILE];)
        });
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
        let item = sig.item(
            quote!(-> #ret),
            quote! {
                    let total = #rt::cpu::#reduce(
                        n,
                        (#(#identities,)*),
                        |a: (#(#red_types,)*), b: (#(#red_types,)*)| (#(#combine_tuple,)*),
                        move |r: #rt::cpu::Row| {
                            let (j, k) = (r.j as isize, r.k as isize);
                            #locals
                            #(#row_ptrs)*
                            let (#(mut #accs,)*) = (#(#identities,)*);
                            #(#part_decls)*
                            let points = #points;
                            let (mut t0, end) = (points.start, points.end);
                            while t0 < end {
                                let t1 = end.min(t0 + #rt::cpu::REDUCTION_TILE as isize);
                                for t in t0..t1 {
                                    #point
                                    #(#part_writes)*
                                }
                                #(#updates)*
                                t0 = t1;
                            }
                            (#(#accs,)*)
                        },
                    );
                    #finish
            },
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
        Node::Binary(Binary::Eq, a, b) => {
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

/// A field index through the field's map: `x`, `2 * x` or `x >> 1` (indices are >= 0).
fn mapped(map: IndexMap, x: TokenStream) -> TokenStream {
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
enum LoadForm {
    /// Through the row pointers hoisted out of the inner loop.
    Rows,
    /// From the view at the point `(i, j, k)` directly (line kernels).
    Point,
}

/// The `cpu` function of a line kernel: lines in parallel, each solved by the Thomas
/// algorithm (forward elimination into per-thread scratch, then back substitution), with
/// the same operations in the same order as the interpreter and the LLVM back end.
fn line_function(k: &Kernel, line: &crate::ir::LineSolve, sig: &Signature) -> TokenStream {
    let rt = sig.rt;
    let real = quote!(#rt::Real);
    let axis = line.axis as usize;
    let live = k.live_nodes();
    let body: Vec<TokenStream> = live
        .iter()
        .map(|&n| node_let(k, n, &real, LoadForm::Point))
        .collect();
    let field = &k.fields[line.field as usize];
    let fid = field_ident(&field.name);
    let t = ty_tokens(field.elem);
    let (lo, di, up, rh) = (v(line.lower), v(line.diag), v(line.upper), v(line.rhs));
    let mask = match line.mask {
        Some(m) => {
            let m = v(m);
            quote!(#m)
        }
        None => quote!(true),
    };
    let at = |c: usize| -> TokenStream {
        if c == axis {
            quote!(x)
        } else {
            quote!(s[#c])
        }
    };
    let (ai, aj, ak) = (at(0), at(1), at(2));
    let item = sig.item(quote!(), quote! {
            let len = n[#axis] as isize;
            #rt::cpu::for_each_line(n, #axis, |scratch: &mut (Vec<#t>, Vec<#t>), s: [isize; 3]| {
                if len == 0 {
                    return;
                }
                let (cp, dp) = scratch;
                cp.resize(len as usize, <#t as #real>::from_f64(0.0));
                dp.resize(len as usize, <#t as #real>::from_f64(0.0));
                let coefficients = |x: isize| -> (#t, #t, #t, #t, bool) {
                    let (i, j, k) = (#ai, #aj, #ak);
                    #(#body)*
                    (#lo, #di, #up, #rh, #mask)
                };
                if !coefficients(0).4 {
                    return;
                }
                let at = |x: isize, dx: isize| -> *mut #t {
                    let mut p = [s[0], s[1], s[2]];
                    p[#axis] = x + dx;
                    #fid.row(p[1], p[2]).offset(p[0])
                };
                let before = *at(0, -1);
                let after = *at(len - 1, 1);
                for x in 0..len {
                    let (a, b, c, mut d, _) = coefficients(x);
                    if x == 0 {
                        d = d - a * before;
                    }
                    if x == len - 1 {
                        d = d - c * after;
                    }
                    let xi = x as usize;
                    let (denom, d) = if x == 0 {
                        (b, d)
                    } else {
                        (b - a * cp[xi - 1], d - a * dp[xi - 1])
                    };
                    cp[xi] = c / denom;
                    dp[xi] = d / denom;
                }
                let mut next = dp[len as usize - 1];
                *at(len - 1, 0) = next;
                for x in (0..len - 1).rev() {
                    let xi = x as usize;
                    next = dp[xi] - cp[xi] * next;
                    *at(x, 0) = next;
                }
            });
    });
    quote! {
        /// The CPU implementation of a line kernel: every line of the domain `n`, in
        /// parallel, solved by the Thomas algorithm.
        ///
        /// # Safety
        /// Every view must cover the domain plus the kernel's halo, and the solved field must
        /// not overlap the others.
        #[allow(clippy::all, unused, non_snake_case, unused_parens, unused_variables)]
        #item
    }
}

/// The `let`s of a point's live nodes, in the kernel's schedule: a run-time loop with
/// the nodes of its iterations inside it.
fn point_body(
    k: &Kernel,
    live: &[u32],
    real: &TokenStream,
    form: LoadForm,
    known_true: Option<u32>,
) -> Vec<TokenStream> {
    k.schedule(live)
        .into_iter()
        .map(|step| match step {
            Step::Node(n) if Some(n) == known_true => {
                let id = v(n);
                quote!(let #id: bool = true;)
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
    quote! {
        #(let mut #carried: #types = #inits;)*
        for p in #range {
            #(#body)*
            #(#carried = #nexts;)*
        }
    }
}

/// `let vN: Ty = <expr>;` for one node.
fn node_let(k: &Kernel, n: u32, real: &TokenStream, form: LoadForm) -> TokenStream {
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
            let x = mapped(f.map, quote!(i));
            match form {
                LoadForm::Rows => {
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
                    let (y, z) = (mapped(f.map, quote!(j)), mapped(f.map, quote!(k)));
                    quote!(*#fid.row(#y + #dy, #z + #dz).offset(#x + #dx))
                }
            }
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
                (Unary::Exp, _) => fl("exp", &[x]),
                (Unary::Ln, _) => fl("ln", &[x]),
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
                Binary::Add => quote!(#x + #y),
                Binary::Sub => quote!(#x - #y),
                Binary::Mul => quote!(#x * #y),
                Binary::Div => quote!(#x / #y),
                Binary::Rem => quote!(#x % #y),
                Binary::Min => fl("min", &[x, y]),
                Binary::Max => fl("max", &[x, y]),
                Binary::CopySign => fl("copysign", &[x, y]),
                Binary::Pow => fl("powf", &[x, y]),
                Binary::And => quote!(#x & #y),
                Binary::Or => quote!(#x | #y),
                Binary::Eq => quote!(#x == #y),
                Binary::Ne => quote!(#x != #y),
                Binary::Lt => quote!(#x < #y),
                Binary::Le => quote!(#x <= #y),
                Binary::Gt => quote!(#x > #y),
                Binary::Ge => quote!(#x >= #y),
            }
        }
        Node::Fma(x, y, z) => fl("fma", &[a(x), a(y), a(z)]),
        Node::Select(c, x, y) => {
            let (c, x, y) = (a(c), a(x), a(y));
            quote!(if #c { #x } else { #y })
        }
        Node::LineSolution(_) => unreachable!("never live in a finished kernel"),
        Node::Gather { field, vertex } => {
            let row = row_ident(field, 0, 0);
            let at = a(vertex);
            quote!(*#row.offset(#at as isize))
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
