//! The halo exchange of block grids (`stencil_runtime::blocks::HaloExchange`), generated
//! through the same NVPTX back end as the kernels. One launch fills every listed block's
//! halo; its threads are in two parts.
//!
//! **Structured part** (blocks whose neighbours all lie inside the domain or across a
//! periodic side): a *template* lists the halo points of one block, four `u32` each: the
//! point's element in the slot, the direction of the neighbour that holds it (`sum d_a
//! 3^a`, `d_a` 0 below, 1 inside, 2 above the block along axis `a`), its element in that
//! neighbour's slot, and the element of the block's own nearest point. A *table* gives per
//! block (`stride` `i32` each) its slot, then its neighbours' slots by direction (-1:
//! absent). Thread `t` fills template point `t % points` of block `t / points`: from the
//! neighbour, or where it is absent by `mode`: 0 a value (`ops[2 absent + 1]`), 1 the
//! block's own nearest point, 2 the companion field's value at the same element (a field
//! launched without a companion takes the value `ops[2 absent + 1]` there too).
//!
//! **Per-point part** (the other blocks: edges of the domain, absent neighbours with a
//! value per point): a list of entries, three `u32` each: the arena element to fill, the
//! element to read (`u32::MAX`: none) and an operation, an index into a table of two reals
//! each, `(scale, add)`, or `u32::MAX` for the entry's own value. Thread `structured + e`
//! fills entry `e`: `arena[dst] = scale * arena[src] + add`, or `add` without a source, or
//! `own[e]`, or for the operation `u32::MAX - 1` the companion field's `companion[dst]`.
//!
//! Every point is filled from interior points only, so the order does not matter.
//!
//! A table value below -1 is a neighbour past a side of fixed value: `ops[2 (-2 - v) + 1]`.
//!
//! One launch fills up to [`MAX_FIELDS`] fields of the same grid and layout: thread
//! blocks along y are fields, block row `y` filling `arena_y` (with `companion_y`).
//!
//! Entry parameters: `structured` (`i64`, threads of the structured part), `points`
//! (`i64`), `template` (`u32*`), `table` (`i32*`), `stride` (`i64`), `slot_len` (`i64`),
//! `mode` (`i64`), `absent` (`i64`), `count` (`i64`, entries), `entries` (`u32*`), `ops`
//! (`T*`), `own` (`T*`, null when no entry has its own value), then [`MAX_FIELDS`] arenas
//! (`T*`) and as many companions (`T*`, null unless used).

use super::raw::{by_precision, global_ptr, raw_types, RawKernel};
use super::LlvmError;
use crate::ir::Precision;
use inkwell::context::Context;
use inkwell::IntPredicate;

/// The fields one launch fills at most.
pub const MAX_FIELDS: usize = 8;

/// The name of the exchange's PTX entry at a precision.
pub fn halo_entry(p: Precision) -> &'static str {
    by_precision(p, ["halo_exchange_f32", "halo_exchange_f64"])
}

/// The PTX of the halo exchange at one precision.
pub fn halo_exchange_ptx(p: Precision) -> Result<String, LlvmError> {
    let ctx = Context::create();
    let (i32t, i64t, real) = raw_types(&ctx, p);
    let (wide, u32s, reals) = (
        i64t.into(),
        global_ptr(i32t.into()),
        global_ptr(real.into()),
    );
    let params = [
        wide, wide, u32s, u32s, wide, wide, wide, wide, wide, u32s, reals, reals,
    ];
    // This thread block row's field and its companion.
    let (k, [arena, companion]) = RawKernel::over_fields(&ctx, halo_entry(p), &params, real)?;
    let [structured, points, stride, slot_len, mode, absent, count] =
        [0, 1, 4, 5, 6, 7, 8].map(|i| k.int_param(i));
    let [template, table, entries, ops, own] = [2, 3, 9, 10, 11].map(|i| k.ptr_param(i));
    let b = &k.b;
    let has_companion = k.ok(b.build_is_not_null(companion, ""))?;
    let read = |base, i| -> Result<_, LlvmError> { Ok(k.load_nc(base, i)?.into_float_value()) };
    // Block `block`: `base[i]` read, then on to `next`.
    let read_in = |block, base, i, next| -> Result<_, LlvmError> {
        b.position_at_end(block);
        let v = read(base, i)?;
        k.ok(b.build_unconditional_branch(next))?;
        Ok(v)
    };

    let [s_work, s_present, s_past, s_side, s_absent] = k.blocks([
        "structured",
        "neighbour",
        "past_or_absent",
        "side_value",
        "absent",
    ]);
    let [s_clamp, s_test_field, s_field, s_value, s_store] = k.blocks([
        "clamp",
        "companion_or_value",
        "companion",
        "value",
        "store_structured",
    ]);
    let [p_test, p_work, p_own, p_test_companion, p_companion, p_table, p_read, p_store, done] = k
        .blocks([
            "points_test",
            "points",
            "own_value",
            "companion_or_table",
            "point_companion",
            "table",
            "read",
            "store_point",
            "done",
        ]);
    let t = k.branch_on_thread(structured, s_work, p_test)?;

    // The structured part.
    b.position_at_end(s_work);
    let block = k.ok(b.build_int_unsigned_div(t, points, ""))?;
    let first = k.ok(b.build_int_nuw_mul(block, points, ""))?;
    let h = k.ok(b.build_int_nuw_sub(t, first, ""))?;
    let [dst_off, dir, src_off, clamp_off] = k.load_record(i32t, template, h, 4)?;
    let row = k.ok(b.build_int_nuw_mul(block, stride, ""))?;
    let own_slot = k.load_i32(table, row, true)?;
    let at_dir = k.ok(b.build_int_nuw_add(row, k.c64(1), ""))?;
    let at_dir = k.ok(b.build_int_nuw_add(at_dir, dir, ""))?;
    let neighbour = k.load_i32(table, at_dir, true)?;
    let base = k.ok(b.build_int_nuw_mul(own_slot, slot_len, ""))?;
    let dst = k.ok(b.build_int_nuw_add(base, dst_off, ""))?;
    let present = k.ok(b.build_int_compare(IntPredicate::SGE, neighbour, k.c64(0), ""))?;
    k.ok(b.build_conditional_branch(present, s_present, s_past))?;

    b.position_at_end(s_past);
    let minus_one = i64t.const_all_ones();
    let past = k.ok(b.build_int_compare(IntPredicate::SLT, neighbour, minus_one, ""))?;
    k.ok(b.build_conditional_branch(past, s_side, s_absent))?;

    b.position_at_end(s_side);
    // ops[2 (-2 - v) + 1] = ops[-2 v - 3]
    let side_at = k.ok(b.build_int_mul(neighbour, i64t.const_int((-2i64) as u64, true), ""))?;
    let side_at = k.ok(b.build_int_sub(side_at, k.c64(3), ""))?;
    let side_value = read(ops, side_at)?;
    k.ok(b.build_unconditional_branch(s_store))?;

    b.position_at_end(s_present);
    let nbase = k.ok(b.build_int_nuw_mul(neighbour, slot_len, ""))?;
    let src = k.ok(b.build_int_nuw_add(nbase, src_off, ""))?;
    let from_neighbour = read(arena, src)?;
    k.ok(b.build_unconditional_branch(s_store))?;

    b.position_at_end(s_absent);
    let is_clamp = k.ok(b.build_int_compare(IntPredicate::EQ, mode, k.c64(1), ""))?;
    k.ok(b.build_conditional_branch(is_clamp, s_clamp, s_test_field))?;

    b.position_at_end(s_clamp);
    let nearest = k.ok(b.build_int_nuw_add(base, clamp_off, ""))?;
    let from_nearest = read(arena, nearest)?;
    k.ok(b.build_unconditional_branch(s_store))?;

    b.position_at_end(s_test_field);
    let is_field = k.ok(b.build_int_compare(IntPredicate::EQ, mode, k.c64(2), ""))?;
    let is_field = k.ok(b.build_and(is_field, has_companion, ""))?;
    k.ok(b.build_conditional_branch(is_field, s_field, s_value))?;

    let from_field = read_in(s_field, companion, dst, s_store)?;

    b.position_at_end(s_value);
    let value_at = k.ok(b.build_int_nuw_mul(absent, k.c64(2), ""))?;
    let value_at = k.ok(b.build_int_nuw_add(value_at, k.c64(1), ""))?;
    let fixed = read(ops, value_at)?;

    let incoming = [
        (from_neighbour, s_present),
        (side_value, s_side),
        (from_nearest, s_clamp),
        (from_field, s_field),
        (fixed, s_value),
    ];
    k.store_joined(s_store, "structured_value", &incoming, (arena, dst), done)?;

    // The per-point part.
    b.position_at_end(p_test);
    let entry = k.ok(b.build_int_nuw_sub(t, structured, ""))?;
    let inside = k.ok(b.build_int_compare(IntPredicate::ULT, entry, count, ""))?;
    k.ok(b.build_conditional_branch(inside, p_work, done))?;

    b.position_at_end(p_work);
    let [dst, src, op] = k.load_record(i32t, entries, entry, 3)?;
    let marker = k.c64(u32::MAX as u64);
    let is_own = k.ok(b.build_int_compare(IntPredicate::EQ, op, marker, ""))?;
    k.ok(b.build_conditional_branch(is_own, p_own, p_test_companion))?;

    let mine = read_in(p_own, own, entry, p_store)?;

    b.position_at_end(p_test_companion);
    let companion_marker = k.c64(u32::MAX as u64 - 1);
    let is_companion = k.ok(b.build_int_compare(IntPredicate::EQ, op, companion_marker, ""))?;
    let from_companion = k.ok(b.build_and(is_companion, has_companion, ""))?;
    // A companion entry of a field without a companion takes the absent value.
    let op = k
        .ok(b.build_select(is_companion, absent, op, ""))?
        .into_int_value();
    k.ok(b.build_conditional_branch(from_companion, p_companion, p_table))?;

    let theirs = read_in(p_companion, companion, dst, p_store)?;

    b.position_at_end(p_table);
    let op2 = k.ok(b.build_int_nuw_mul(op, k.c64(2), ""))?;
    let scale = read(ops, op2)?;
    let add_at = k.ok(b.build_int_nuw_add(op2, k.c64(1), ""))?;
    let add = read(ops, add_at)?;
    let none = k.ok(b.build_int_compare(IntPredicate::EQ, src, marker, ""))?;
    k.ok(b.build_conditional_branch(none, p_store, p_read))?;

    b.position_at_end(p_read);
    let x = read(arena, src)?;
    let scaled = k.ok(b.build_float_mul(scale, x, ""))?;
    let sum = k.ok(b.build_float_add(scaled, add, ""))?;

    let incoming = [
        (add, p_table),
        (sum, p_read),
        (mine, p_own),
        (theirs, p_companion),
    ];
    k.store_joined(p_store, "point_value", &incoming, (arena, dst), done)?;
    k.finish(done)
}
