//! The halo points of several weighted sources (`stencil_runtime::blocks`: halos past a
//! `Side::Extrapolate`, predicted from a coarser level, and the sums of level
//! transfers), generated through the same NVPTX back end as the kernels.
//!
//! Thread `e` fills entry `e` of `count`: three `u32` of `weighted`, the arena element to
//! fill, the first of its terms in `sources` and `weights` and their number;
//! `arena[dst] = sum of weights[t] * arena[sources[t]]`, summed from 0 in the terms'
//! order, as the CPU does. Every source is a point of a block that no entry fills, so the
//! order of the entries does not matter. One launch fills up to
//! [`MAX_FIELDS`](super::halo::MAX_FIELDS) fields of the same grid and layout: thread
//! blocks along y are fields.
//!
//! Entry parameters: `count` (`i64`), `weighted` (`u32*`), `sources` (`u32*`), `weights`
//! (`T*`), then [`MAX_FIELDS`](super::halo::MAX_FIELDS) arenas (`T*`).

use super::raw::{by_precision, global_ptr, raw_types, RawKernel};
use super::LlvmError;
use crate::ir::Precision;
use inkwell::context::Context;
use inkwell::IntPredicate;

/// The name of the weighted fill's PTX entry at a precision.
pub fn weighted_entry(p: Precision) -> &'static str {
    by_precision(p, ["halo_weighted_f32", "halo_weighted_f64"])
}

/// The PTX of the weighted fill at one precision.
pub fn halo_weighted_ptx(p: Precision) -> Result<String, LlvmError> {
    let ctx = Context::create();
    let (i32t, i64t, real) = raw_types(&ctx, p);
    let u32s = global_ptr(i32t.into());
    let params = [i64t.into(), u32s, u32s, global_ptr(real.into())];
    // This thread block row's field.
    let (k, [arena]) = RawKernel::over_fields(&ctx, weighted_entry(p), &params, real)?;
    let count = k.int_param(0);
    let [weighted, sources, weights] = [1, 2, 3].map(|i| k.ptr_param(i));
    let b = &k.b;

    let [work, head, body, store, done] =
        k.blocks(["entry_work", "term_test", "term", "store", "done"]);
    let e = k.branch_on_thread(count, work, done)?;

    b.position_at_end(work);
    let [dst, first, terms] = k.load_record(i32t, weighted, e, 3)?;
    let end = k.ok(b.build_int_nuw_add(first, terms, ""))?;
    k.ok(b.build_unconditional_branch(head))?;

    // for t in first..end { v = v + weights[t] * arena[sources[t]] }
    b.position_at_end(head);
    let t = k.ok(b.build_phi(i64t, "t"))?;
    let v = k.ok(b.build_phi(real, "v"))?;
    let t_val = t.as_basic_value().into_int_value();
    let more = k.ok(b.build_int_compare(IntPredicate::ULT, t_val, end, ""))?;
    k.ok(b.build_conditional_branch(more, body, store))?;

    b.position_at_end(body);
    let source = k.load_i32(sources, t_val, false)?;
    let weight = k.load_nc(weights, t_val)?.into_float_value();
    let x = k.load_nc(arena, source)?.into_float_value();
    let term = k.ok(b.build_float_mul(weight, x, ""))?;
    let sum = k.ok(b.build_float_add(v.as_basic_value().into_float_value(), term, ""))?;
    let next = k.ok(b.build_int_nuw_add(t_val, k.c64(1), ""))?;
    k.ok(b.build_unconditional_branch(head))?;

    t.add_incoming(&[(&first, work), (&next, body)]);
    v.add_incoming(&[(&real.const_zero(), work), (&sum, body)]);

    b.position_at_end(store);
    let at = k.ok(k.at(arena, dst))?;
    k.ok(b.build_store(at, v.as_basic_value()))?;
    k.ok(b.build_unconditional_branch(done))?;

    k.finish(done)
}
