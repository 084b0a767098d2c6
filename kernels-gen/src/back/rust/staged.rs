//! Staged values on the CPU: a row buffer per stage and row offset (the thread's, kept and
//! reused from row to row: `stencil_runtime::cpu::StageBuffers`).
//!
//! Before a row's points, the stages of each `stage(..)` call the kernel reads at row
//! offset `(dy, dz)` are computed together along the row `j + dy`, `k + dz` over the
//! points their reads reach (from the row's first point plus the smallest `dx` the kernel
//! reads them at there to its last plus the largest: within the call's box, which the
//! fields' halos cover) into a buffer each; the points then read `f[(dx, dy, dz)]` from it. So a value read by several
//! points of a row (a face flux read by the cells on both sides) is computed once per
//! row it is read from, with the operations the point would compute (the same bits as
//! [`Kernel::unstaged`]). The stage's nodes are the point's code with the row's indices
//! and row pointers moved by `(dy, dz)`. As a row's points do (`middle.rs`), the buffer's
//! points at least [`EDGE_MARGIN`] from the row's ends run with the stage's tests of the
//! index along axis 0 against the ends decided, and, on rows at least that far from the
//! ends of axes 1 and 2, those of `j` and `k` too: what a boundary branch guards then
//! folds away.
//!
//! A chain (stages that read earlier stages) fills its buffers level by level: the
//! buffers of a call that later buffers read are filled first, along the rows and over
//! the stretch those read them at, and a later buffer's nodes name them as if at row
//! offset 0 (its block rebinds each name to the buffer of the row it stands for, as it
//! does the row pointers).

use super::nodes::{point_body, LoadForm};
use super::{row_ident, ty_tokens, v};
use crate::back::edges::{self, EDGE_MARGIN};
use crate::ir::{Kernel, Node, NodeId};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::{BTreeMap, BTreeSet};

/// An offset's part in an identifier: `3`, or `m3` for -3.
fn part(x: i32) -> String {
    if x < 0 {
        format!("m{}", -x)
    } else {
        x.to_string()
    }
}

/// The buffer of stage `s` along the row `(dy, dz)` away.
pub(super) fn buffer_ident(s: u32, dy: i32, dz: i32) -> Ident {
    format_ident!("stage_{}_{}_{}", s, part(dy), part(dz))
}

/// The index along axis 0 of the first point of the buffers of `stage(..)` call `call` at
/// row offset `(dy, dz)`.
pub(super) fn base_ident(call: u32, dy: i32, dz: i32) -> Ident {
    format_ident!("stage_first_{}_{}_{}", call, part(dy), part(dz))
}

/// What is read of one `stage(..)` call at one row offset: the stages and the smallest
/// and largest `dx`, and the call's level (a buffer of a chain is filled after those of
/// the lower levels it reads).
struct RowReads {
    stages: BTreeSet<u32>,
    lo: i32,
    hi: i32,
    level: usize,
}

/// A call's buffers at one row offset: `(dy, dz, call)`.
type RowKey = (i32, i32, u32);

/// The buffers a row fills: those of the stages the kernel's points (`live`) read, by row
/// offset `(dy, dz)` and call, and, for a chain, those of the stages that those buffers'
/// own computation reads, at the row offsets and along the stretch of the row it reads
/// them at. In the order they are filled: by level, then by row offset and call.
fn reads(k: &Kernel, live: &[NodeId]) -> Vec<(RowKey, RowReads)> {
    let levels = k.stage_levels();
    let mut out: BTreeMap<RowKey, RowReads> = BTreeMap::new();
    let add =
        |out: &mut BTreeMap<RowKey, RowReads>, stage: u32, offset: [i32; 3], lo: i32, hi: i32| {
            let call = k.stages[stage as usize].call;
            let e = out.entry((offset[1], offset[2], call)).or_insert(RowReads {
                stages: BTreeSet::new(),
                lo: offset[0] + lo,
                hi: offset[0] + hi,
                level: levels[stage as usize],
            });
            e.stages.insert(stage);
            e.lo = e.lo.min(offset[0] + lo);
            e.hi = e.hi.max(offset[0] + hi);
        };
    for &n in live {
        if let Node::Staged { stage, offset } = k.nodes[n as usize] {
            add(&mut out, stage, offset, 0, 0);
        }
    }
    // A buffer's stages read only lower levels: from the highest down, each level's
    // buffers add what they read before that level is met.
    let top = levels.iter().copied().max().unwrap_or(0);
    for level in (1..=top).rev() {
        let here: Vec<(RowKey, Vec<NodeId>, i32, i32)> = out
            .iter()
            .filter(|(_, r)| r.level == level)
            .map(|(&key, r)| (key, stage_nodes(k, r), r.lo, r.hi))
            .collect();
        for ((dy, dz, _), nodes, lo, hi) in here {
            for n in nodes {
                if let Node::Staged { stage, offset } = k.nodes[n as usize] {
                    let moved = [offset[0], offset[1] + dy, offset[2] + dz];
                    add(&mut out, stage, moved, lo, hi);
                }
            }
        }
    }
    let mut ordered: Vec<(RowKey, RowReads)> = out.into_iter().collect();
    ordered.sort_by_key(|(key, r)| (r.level, *key));
    ordered
}

/// The nodes that compute the stages of one row offset.
fn stage_nodes(k: &Kernel, reads: &RowReads) -> Vec<NodeId> {
    let roots: Vec<NodeId> = reads
        .stages
        .iter()
        .map(|&s| k.stages[s as usize].value)
        .collect();
    k.reachable(&roots)
}

/// Where each buffer lives among the row's (`(stage, dy, dz)` -> its index in the
/// thread's `StageBuffers`), and which buffers the next row along axis 1 takes from this
/// one instead of computing them: a call's buffers at row offset `dy` are its buffers at
/// `dy + 1` of the row before when those hold the same stages over the same stretch
/// (`rolls`: the pairs (index at `dy`, index at `dy + 1`), in the order to swap them;
/// `taken`: the buffers' calls and row offsets).
struct Plan {
    index: BTreeMap<(u32, i32, i32), usize>,
    rolls: Vec<(usize, usize)>,
    taken: BTreeSet<RowKey>,
}

fn plan(groups: &[(RowKey, RowReads)]) -> Plan {
    let mut index = BTreeMap::new();
    for ((dy, dz, _), r) in groups {
        for &s in &r.stages {
            let next = index.len();
            index.insert((s, *dy, *dz), next);
        }
    }
    let mut taken = BTreeSet::new();
    let mut rolls = Vec::new();
    for &((dy, dz, call), ref r) in groups {
        let above = groups.iter().find(|(key, _)| *key == (dy + 1, dz, call));
        let Some((_, a)) = above else { continue };
        if a.lo != r.lo || a.hi != r.hi || !r.stages.is_subset(&a.stages) {
            continue;
        }
        taken.insert((dy, dz, call));
        for &s in &r.stages {
            rolls.push(((dz, dy), (index[&(s, dy, dz)], index[&(s, dy + 1, dz)])));
        }
    }
    // Along each column of row offsets upwards: the buffer at `dy` takes `dy + 1`'s
    // before that one takes `dy + 2`'s.
    rolls.sort_by_key(|&(order, _)| order);
    Plan {
        index,
        rolls: rolls.into_iter().map(|(_, pair)| pair).collect(),
        taken,
    }
}

/// The rows (field, dy, dz) the buffers' computation reads, beside the points' own.
pub(super) fn rows(k: &Kernel, live: &[NodeId]) -> BTreeSet<(u32, i32, i32)> {
    let mut rows = BTreeSet::new();
    for ((dy, dz, _), r) in reads(k, live) {
        for n in stage_nodes(k, &r) {
            if let Node::Load { field, offset } = k.nodes[n as usize] {
                rows.insert((field, offset[1] + dy, offset[2] + dz));
            }
        }
    }
    rows
}

/// The code, at the top of a row's closure after its row pointers, that fills every
/// buffer the row's points read.
/// `rt` is the runtime crate's path and `real` its `Real` trait's.
pub(super) fn fill(
    k: &Kernel,
    live: &[NodeId],
    rt: &TokenStream,
    real: &TokenStream,
) -> TokenStream {
    let mut out = TokenStream::new();
    let groups = reads(k, live);
    if groups.is_empty() {
        return out;
    }
    let plan = plan(&groups);
    for ((dy, dz, call), r) in groups {
        let base = base_ident(call, dy, dz);
        let nodes = stage_nodes(k, &r);
        // The row pointers the stage's loads name, moved to the row `(dy, dz)` away.
        let mut named = BTreeSet::new();
        for &n in &nodes {
            if let Node::Load { field, offset } = k.nodes[n as usize] {
                named.insert((field, offset[1], offset[2]));
            }
        }
        // All at once: a pointer moved first must not be what another moves to.
        let (here, there): (Vec<Ident>, Vec<Ident>) = named
            .into_iter()
            .map(|(f, oy, oz)| (row_ident(f, oy, oz), row_ident(f, oy + dy, oz + dz)))
            .unzip();
        let moved = quote!(let (#(#here,)*) = (#(#there,)*););
        // The buffers of lower levels this one reads, named as at row offset 0: a read
        // at `(dx, oy, oz)` is the buffer of the row `(dy + oy, dz + oz)` away.
        let mut lower = BTreeSet::new();
        for &n in &nodes {
            if let Node::Staged { stage, offset } = k.nodes[n as usize] {
                let call = k.stages[stage as usize].call;
                lower.insert((stage, call, offset[1], offset[2]));
            }
        }
        // Each buffer's name, and its base's, once per call and row offset (the stages of
        // a call share a base).
        let bases: BTreeSet<(u32, i32, i32)> = lower
            .iter()
            .map(|&(_, call, oy, oz)| (call, oy, oz))
            .collect();
        let buffers = lower
            .iter()
            .map(|&(s, _, oy, oz)| (buffer_ident(s, oy, oz), buffer_ident(s, oy + dy, oz + dz)));
        let bases = bases
            .iter()
            .map(|&(call, oy, oz)| (base_ident(call, oy, oz), base_ident(call, oy + dy, oz + dz)));
        let (read_here, read_there): (Vec<Ident>, Vec<Ident>) = buffers.chain(bases).unzip();
        let lower_moved = quote!(let (#(#read_here,)*) = (#(#read_there,)*););
        let along_row = edges::decided_in_middle(k, &nodes);
        let across = edges::decided_in_interior_rows(k, &nodes);
        let known_inside: Vec<(NodeId, bool)> = along_row.iter().chain(&across).copied().collect();
        let body = point_body(k, &nodes, real, LoadForm::Rows, &[]);
        let middle = point_body(k, &nodes, real, LoadForm::Rows, &along_row);
        let interior = point_body(k, &nodes, real, LoadForm::Rows, &known_inside);
        let mut decls = Vec::new();
        let mut pushes = Vec::new();
        for &s in &r.stages {
            let buf = buffer_ident(s, dy, dz);
            let value = k.stages[s as usize].value;
            let t = ty_tokens(k.types[value as usize]);
            let val = v(value);
            // The thread's buffer, sized first and written by index (a `push` checks the
            // capacity at every point, which keeps the loop from vectorising).
            let index = plan.index[&(s, dy, dz)];
            decls.push(quote!(let #buf: *mut #t = stage_buffers.buffer::<#t>(#index, stage_len);));
            pushes.push(quote!(*#buf.add((t - #base) as usize) = #val;));
        }
        // A buffer the row before computed is taken as it is.
        let compute = if plan.taken.contains(&(dy, dz, call)) {
            quote!(!rolled)
        } else {
            quote!(true)
        };
        let (dy, dz, lo, hi) = (dy as isize, dz as isize, r.lo as isize, r.hi as isize);
        let m = EDGE_MARGIN as isize;
        let points = |body: &[TokenStream], range: TokenStream| {
            quote! {
                for t in #range {
                    let i = t;
                    let ia = t - o0;
                    let iac = ia >> 1;
                    #(#body)*
                    #(#pushes)*
                }
            }
        };
        let low = points(&body, quote!(low.0..low.1));
        let high = points(&body, quote!(high.0..high.1));
        let middle = points(&middle, quote!(middle.0..middle.1));
        let interior = points(&interior, quote!(middle.0..middle.1));
        let inside =
            |axis: usize, x: TokenStream| quote!((#x >= #m && #x <= n[#axis] as isize - 1 - #m));
        let interior_row = match k.dims {
            1 => quote!(true),
            2 => inside(1, quote!(j)),
            _ => {
                let (y, z) = (inside(1, quote!(j)), inside(2, quote!(k)));
                quote!(#y && #z)
            }
        };
        out.extend(quote! {
            let #base: isize = r.i0 as isize + #lo;
            let stage_len = (r.i1 as isize + #hi - #base).max(0) as usize;
            #(#decls)*
            if #compute {
                let j = j + #dy;
                let k = k + #dz;
                #moved
                #lower_moved
                // The buffer's points in order: the low edge, the middle, the high edge.
                let [low, middle, high] = #rt::cpu::split_row(
                    #base, r.i1 as isize + #hi, 1, n[0] as isize, #m,
                );
                #low
                if #interior_row {
                    #interior
                } else {
                    #middle
                }
                #high
            }
        });
    }
    let rolls = plan.rolls.iter().map(|&(to, from)| quote!((#to, #from)));
    quote! {
        let mut stage_buffers = #rt::cpu::StageBuffers::take();
        let rolled = stage_buffers.follows(&r, &[#(#rolls),*]);
        #out
    }
}
