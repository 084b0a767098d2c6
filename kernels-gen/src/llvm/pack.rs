//! Points of block-grid fields packed into a message buffer and unpacked from one
//! (`stencil_runtime::blocks::PointPack`: what ranks send each other), generated through
//! the same NVPTX back end as the kernels.
//!
//! Thread `e` of `count` moves element `elements[e]` (a `u32` arena element) of the field
//! of its thread block row `y`: where `unpack` is 0, `buffer[y count + e] =
//! arena_y[elements[e]]`; otherwise the other way. One launch moves up to
//! [`MAX_FIELDS`](super::halo::MAX_FIELDS) fields of the same grid and layout.
//!
//! Entry parameters: `count` (`i64`), `elements` (`u32*`), `buffer` (`T*`), `unpack`
//! (`i64`), then [`MAX_FIELDS`](super::halo::MAX_FIELDS) arenas (`T*`).

use super::raw::{by_precision, global_ptr, raw_types, RawKernel};
use super::LlvmError;
use crate::ir::Precision;
use inkwell::context::Context;
use inkwell::IntPredicate;

/// The name of the pack's PTX entry at a precision.
pub fn pack_entry(p: Precision) -> &'static str {
    by_precision(p, ["pack_points_f32", "pack_points_f64"])
}

/// The PTX of the pack at one precision.
pub fn pack_points_ptx(p: Precision) -> Result<String, LlvmError> {
    let ctx = Context::create();
    let (i32t, i64t, real) = raw_types(&ctx, p);
    let params = [
        i64t.into(),
        global_ptr(i32t.into()),
        global_ptr(real.into()),
        i64t.into(),
    ];
    // This thread block row's field.
    let (k, [arena]) = RawKernel::over_fields(&ctx, pack_entry(p), &params, real)?;
    let [count, unpack] = [0, 3].map(|i| k.int_param(i));
    let [elements, buffer] = [1, 2].map(|i| k.ptr_param(i));
    let b = &k.b;

    let [work, pack, unpack_block, done] = k.blocks(["point", "pack", "unpack", "done"]);
    let e = k.branch_on_thread(count, work, done)?;

    b.position_at_end(work);
    let element = k.load_i32(elements, e, false)?;
    let row = k.ok(k.block_y())?;
    let first = k.ok(b.build_int_nuw_mul(row, count, ""))?;
    let slot = k.ok(b.build_int_nuw_add(first, e, ""))?;
    let inward = k.ok(b.build_int_compare(IntPredicate::NE, unpack, k.c64(0), ""))?;
    k.ok(b.build_conditional_branch(inward, unpack_block, pack))?;

    // buffer[y count + e] = arena[element]
    b.position_at_end(pack);
    let v = k.load_nc(arena, element)?;
    let to = k.ok(k.at(buffer, slot))?;
    k.ok(b.build_store(to, v))?;
    k.ok(b.build_unconditional_branch(done))?;

    // arena[element] = buffer[y count + e]
    b.position_at_end(unpack_block);
    let v = k.load_nc(buffer, slot)?;
    let to = k.ok(k.at(arena, element))?;
    k.ok(b.build_store(to, v))?;
    k.ok(b.build_unconditional_branch(done))?;

    k.finish(done)
}
