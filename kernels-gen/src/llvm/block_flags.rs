//! Block flags: per listed block of a block grid, where a field is non-zero (the run
//! time's `BlockField::flags`; shallow water finds its wet blocks with it). Generated
//! through the same NVPTX back end as the kernels.
//!
//! Thread `r` scans one row (along x) of block `r / (b1 b2)`: row `j = r' % b1`, layer
//! `k = r' / b1` of the block, `r' = r % (b1 b2)`, its points inside the domain. If any is
//! non-zero (NaN counts), it ORs into the block's flag (`u32`): bit 0, and per axis `a` bit
//! `1 + 2a` if a non-zero point lies within `margin` points of the block's low side along
//! `a`, bit `2 + 2a` within `margin` of its high side.
//!
//! Entry parameters: `rows` (`i64`), `records` (`i64*`, four per block: origin x, y, z,
//! the slot's first element), `b0, b1, b2` (block size), `n0, n1, n2` (domain),
//! `first` (the element of the block's point (0, 0, 0) in its slot), `s1, s2` (the slot's
//! strides), `margin` (all `i64`), `field` (`T*`), `flags` (`u32*`, zero before).

use super::raw::{by_precision, global_ptr, raw_types, RawKernel};
use super::LlvmError;
use crate::ir::Precision;
use inkwell::context::Context;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::{AtomicOrdering, AtomicRMWBinOp, FloatPredicate, IntPredicate};

/// The name of the flags' PTX entry at a precision.
pub fn flags_entry(p: Precision) -> &'static str {
    by_precision(p, ["block_flags_f32", "block_flags_f64"])
}

/// The PTX of the block flags at one precision.
pub fn block_flags_ptx(p: Precision) -> Result<String, LlvmError> {
    let ctx = Context::create();
    let (i32t, i64t, real) = raw_types(&ctx, p);
    let wide: BasicMetadataTypeEnum<'_> = i64t.into();
    let mut params = vec![wide, global_ptr(i64t.into())];
    params.extend([wide; 10]);
    params.extend([global_ptr(real.into()), global_ptr(i32t.into())]);
    let k = RawKernel::new(&ctx, flags_entry(p), &params)?;
    let rows = k.int_param(0);
    let records = k.ptr_param(1);
    let [b0, b1, b2, n0, n1, n2, first, s1, s2, margin] =
        [2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map(|i| k.int_param(i));
    let field = k.ptr_param(12);
    let flags = k.ptr_param(13);
    let b = &k.b;

    let [start, head, body, after, flag, done] =
        k.blocks(["start", "head", "body", "after", "flag", "done"]);
    let r = k.branch_on_thread(rows, start, done)?;

    b.position_at_end(start);
    let per_block = k.ok(b.build_int_nuw_mul(b1, b2, ""))?;
    let blk = k.ok(b.build_int_unsigned_div(r, per_block, ""))?;
    let rest = k.ok(b.build_int_nuw_sub(r, k.ok(b.build_int_nuw_mul(blk, per_block, ""))?, ""))?;
    let kk = k.ok(b.build_int_unsigned_div(rest, b1, ""))?;
    let j = k.ok(b.build_int_nuw_sub(rest, k.ok(b.build_int_nuw_mul(kk, b1, ""))?, ""))?;
    let [o0, o1, o2, shift] = k.load_record(i64t, records, blk, 4)?;
    let gj = k.ok(b.build_int_nuw_add(o1, j, ""))?;
    let gk = k.ok(b.build_int_nuw_add(o2, kk, ""))?;
    let row_in = k.ok(b.build_and(
        k.ok(b.build_int_compare(IntPredicate::ULT, gj, n1, ""))?,
        k.ok(b.build_int_compare(IntPredicate::ULT, gk, n2, ""))?,
        "",
    ))?;
    // The row's points inside the domain: min(b0, n0 - o0).
    let left = k.ok(b.build_int_nuw_sub(n0, o0, ""))?;
    let shorter = k.ok(b.build_int_compare(IntPredicate::ULT, left, b0, ""))?;
    let len = k
        .ok(b.build_select(shorter, left, b0, ""))?
        .into_int_value();
    let row = k.ok(b.build_int_nuw_add(shift, first, ""))?;
    let row = k.ok(b.build_int_nuw_add(row, k.ok(b.build_int_nuw_mul(j, s1, ""))?, ""))?;
    let row = k.ok(b.build_int_nuw_add(row, k.ok(b.build_int_nuw_mul(kk, s2, ""))?, ""))?;
    let none = i64t.const_all_ones();
    let entry_block = b.get_insert_block().expect("positioned");
    let len = k
        .ok(b.build_select(row_in, len, k.c64(0), ""))?
        .into_int_value();
    k.ok(b.build_unconditional_branch(head))?;

    // for i in 0..len: the lowest and highest non-zero point (`none`: no such point).
    b.position_at_end(head);
    let i = k.ok(b.build_phi(i64t, "i"))?;
    let lo = k.ok(b.build_phi(i64t, "lo"))?;
    let hi = k.ok(b.build_phi(i64t, "hi"))?;
    let (iv, lov, hiv) = (
        i.as_basic_value().into_int_value(),
        lo.as_basic_value().into_int_value(),
        hi.as_basic_value().into_int_value(),
    );
    let more = k.ok(b.build_int_compare(IntPredicate::ULT, iv, len, ""))?;
    k.ok(b.build_conditional_branch(more, body, after))?;

    b.position_at_end(body);
    let v = k
        .load_nc(field, k.ok(b.build_int_nuw_add(row, iv, ""))?)?
        .into_float_value();
    let active = k.ok(b.build_float_compare(FloatPredicate::UNE, v, real.const_zero(), ""))?;
    let first_seen = k.ok(b.build_int_compare(IntPredicate::EQ, lov, none, ""))?;
    let take_lo = k.ok(b.build_and(active, first_seen, ""))?;
    let lo_next = k.ok(b.build_select(take_lo, iv, lov, ""))?.into_int_value();
    let hi_next = k.ok(b.build_select(active, iv, hiv, ""))?.into_int_value();
    let i_next = k.ok(b.build_int_nuw_add(iv, k.c64(1), ""))?;
    k.ok(b.build_unconditional_branch(head))?;
    i.add_incoming(&[(&k.c64(0), entry_block), (&i_next, body)]);
    lo.add_incoming(&[(&none, entry_block), (&lo_next, body)]);
    hi.add_incoming(&[(&none, entry_block), (&hi_next, body)]);

    b.position_at_end(after);
    let found = k.ok(b.build_int_compare(IntPredicate::NE, lov, none, ""))?;
    k.ok(b.build_conditional_branch(found, flag, done))?;

    b.position_at_end(flag);
    // Bit `bit` if `cond`.
    let bit = |cond, bit: u64| -> Result<_, LlvmError> {
        let one = i32t.const_int(1 << bit, false);
        Ok(k.ok(b.build_select(cond, one, i32t.const_zero(), ""))?
            .into_int_value())
    };
    let near_low = |x| k.ok(b.build_int_compare(IntPredicate::ULT, x, margin, ""));
    // x >= extent - margin, as x + margin >= extent.
    let near_high = |x, extent| {
        let reach = k.ok(b.build_int_nuw_add(x, margin, ""))?;
        k.ok(b.build_int_compare(IntPredicate::UGE, reach, extent, ""))
    };
    let mut bits = i32t.const_int(1, false);
    for (cond, k_bit) in [
        (near_low(lov)?, 1),
        (near_high(hiv, b0)?, 2),
        (near_low(j)?, 3),
        (near_high(j, b1)?, 4),
        (near_low(kk)?, 5),
        (near_high(kk, b2)?, 6),
    ] {
        bits = k.ok(b.build_or(bits, bit(cond, k_bit)?, ""))?;
    }
    let target = k.ok(k.at(flags, blk))?;
    k.ok(b.build_atomicrmw(AtomicRMWBinOp::Or, target, bits, AtomicOrdering::Monotonic))?;
    k.ok(b.build_unconditional_branch(done))?;

    k.finish(done)
}
