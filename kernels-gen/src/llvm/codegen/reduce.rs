//! Reductions in a GPU kernel: per-thread accumulators, and the combination of a thread
//! block's contributions into one partial result per block.

use super::*;
use inkwell::basic_block::BasicBlock;

impl<'a, 'ctx> Gen<'a, 'ctx> {
    /// One accumulator per reduction for a thread's contributions, holding the identity.
    pub(super) fn contribution_slots(&self) -> R<Vec<PointerValue<'ctx>>> {
        (0..self.k.reductions.len())
            .map(|r| {
                let t = self.ty(self.k.reductions[r].ty);
                let slot = self.b.build_alloca(t, "contribution")?;
                self.b.build_store(slot, self.identity(r))?;
                Ok(slot)
            })
            .collect()
    }

    /// Combines contributions into the per-thread accumulators, in point order.
    pub(super) fn accumulate(
        &self,
        slots: &[PointerValue<'ctx>],
        contributions: Vec<(u32, BasicValueEnum<'ctx>)>,
    ) -> R<()> {
        for (r, v) in contributions {
            let red = &self.k.reductions[r as usize];
            let old = self.b.build_load(slots[r as usize], "")?;
            let new = self.combine(red.op, red.ty, old, v)?;
            self.b.build_store(slots[r as usize], new)?;
        }
        Ok(())
    }

    /// `f` of the point at `idx`, the fields' bases taken there.
    pub(super) fn with_point_at<T>(
        &self,
        args: &EntryArgs<'ctx>,
        idx: [IntValue<'ctx>; 3],
        f: impl FnOnce(&PointAt<'ctx, '_>) -> R<T>,
    ) -> R<T> {
        let bases = self.bases(&args.fields, idx)?;
        f(&PointAt {
            idx,
            bases: &bases,
            shift: [0; 3],
        })
    }

    /// The point at `idx` computed (no loads shared, no stores deferred), its reduction
    /// contributions added into `slots`.
    pub(super) fn point_at_index(
        &self,
        args: &EntryArgs<'ctx>,
        idx: [IntValue<'ctx>; 3],
        slots: &[PointerValue<'ctx>],
    ) -> R<()> {
        self.with_point_at(args, idx, |at| self.point_into(args, at, slots))
    }

    /// The point `at` computed (no loads shared, no stores deferred), its reduction
    /// contributions added into `slots`.
    pub(super) fn point_into(
        &self,
        args: &EntryArgs<'ctx>,
        at: &PointAt<'ctx, '_>,
        slots: &[PointerValue<'ctx>],
    ) -> R<()> {
        let contributions = self.point(args, at, None, None)?;
        self.accumulate(slots, contributions)
    }

    /// Ends a PTX entry: on to `join`, where the thread block reduces `slots` (if the
    /// kernel has reductions) and the entry returns.
    pub(super) fn end_at_join(
        &self,
        f: FunctionValue<'ctx>,
        args: &EntryArgs<'ctx>,
        slots: &[PointerValue<'ctx>],
        join: BasicBlock<'ctx>,
    ) -> R<()> {
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        if !self.k.reductions.is_empty() {
            self.block_reduce(f, args, slots)?;
        }
        self.b.build_return(None)?;
        Ok(())
    }

    /// The special registers `name.x`, `name.y` and `name.z`, read in that order.
    pub(super) fn sregs(&self, name: &str) -> R<[IntValue<'ctx>; 3]> {
        Ok([
            self.sreg(&format!("{name}.x"))?,
            self.sreg(&format!("{name}.y"))?,
            self.sreg(&format!("{name}.z"))?,
        ])
    }

    /// `x + y nx + z nxy` (named `name`): the linear index of `(x, y, z)` in a box `nx`
    /// wide with planes of `nxy`.
    fn linear_index(
        &self,
        [x, y, z]: [IntValue<'ctx>; 3],
        nx: IntValue<'ctx>,
        nxy: IntValue<'ctx>,
        name: &str,
    ) -> R<IntValue<'ctx>> {
        let b = &self.b;
        let row = b.build_int_add(x, b.build_int_mul(y, nx, "")?, "")?;
        Ok(b.build_int_add(row, b.build_int_mul(z, nxy, "")?, name)?)
    }

    /// Reduction of each contribution over the thread block: within each warp by
    /// shuffles (lane `l` combines lane `l + 16`'s value, then `l + 8`'s, ... `l + 1`'s),
    /// the warps' results through shared memory (one value per warp), and those again by
    /// shuffles in every warp; thread 0 writes the block's partial. Fixed order:
    /// deterministic for a given launch shape. One barrier, and [`WARPS_PER_BLOCK`] values
    /// of shared memory per reduction.
    pub(super) fn block_reduce(
        &self,
        f: FunctionValue<'ctx>,
        args: &EntryArgs<'ctx>,
        slots: &[PointerValue<'ctx>],
    ) -> R<()> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let i64t = self.ctx.i64_type();
        let c32 = |v: u64| i32t.const_int(v, false);
        let t = self.sregs("tid")?;
        let [nx, ny, nz] = self.sregs("ntid")?;
        let nxy = b.build_int_mul(nx, ny, "")?;
        let nthreads = b.build_int_mul(nxy, nz, "")?;
        let tid = self.linear_index(t, nx, nxy, "tid")?;
        let lane = b.build_and(tid, c32(31), "lane")?;
        let warp = b.build_right_shift(tid, c32(5), false, "warp")?;
        let barrier = self.intrinsic("llvm.nvvm.barrier0", &[])?;
        let shared: Vec<PointerValue> = self
            .k
            .reductions
            .iter()
            .enumerate()
            .map(|(r, red)| {
                let arr = self.ty(red.ty).array_type(WARPS_PER_BLOCK);
                let g = self.module.add_global(
                    arr,
                    Some(AddressSpace::from(3u16)),
                    &format!("reduce_{r}"),
                );
                g.set_linkage(Linkage::Internal);
                g.set_initializer(&arr.get_undef());
                g.set_alignment(8);
                g.as_pointer_value()
            })
            .collect();
        let elem = |r: usize, index: IntValue<'ctx>| -> R<PointerValue<'ctx>> {
            let zero = i32t.const_zero();
            Ok(unsafe { b.build_in_bounds_gep(shared[r], &[zero, index], "")? })
        };

        // Each warp's result into `shared[r][warp]` (by its lane 0).
        let warp_first = b.build_int_sub(tid, lane, "")?;
        let mine = slots.iter().map(|slot| b.build_load(*slot, ""));
        let mine = mine.collect::<Result<Vec<_>, _>>()?;
        let values = self.warp_reduce(mine, lane, warp_first, nthreads)?;
        let first_lane = b.build_int_compare(IntPredicate::EQ, lane, c32(0), "")?;
        let stored = self.open_if(f, first_lane, "reduce_store")?;
        for (r, v) in values.into_iter().enumerate() {
            b.build_store(elem(r, warp)?, v)?;
        }
        self.close_if(stored)?;
        self.call_void(barrier, &[])?;

        // Every warp combines the warps' results (lanes past the last warp hold the
        // identity); thread 0's is the block's.
        let warps = b.build_right_shift(
            b.build_int_add(nthreads, c32(31), "")?,
            c32(5),
            false,
            "warps",
        )?;
        let has_warp = b.build_int_compare(IntPredicate::ULT, lane, warps, "")?;
        // A lane past the last warp reads element 0 (in bounds) and uses the identity.
        let index = b.build_select(has_warp, lane, c32(0), "")?.into_int_value();
        let warps_values = (0..slots.len()).map(|r| -> R<BasicValueEnum<'ctx>> {
            let v = b.build_load(elem(r, index)?, "")?;
            Ok(b.build_select(has_warp, v, self.identity(r), "")?)
        });
        let warps_values = warps_values.collect::<R<Vec<_>>>()?;
        let values = self.warp_reduce(warps_values, lane, warp_first, nthreads)?;

        let first = b.build_int_compare(IntPredicate::EQ, tid, c32(0), "")?;
        let exit = self.open_if(f, first, "reduce_write")?;
        let [bx, by, bz] = self.sregs("ctaid")?;
        let (gx, gy) = (self.sreg("nctaid.x")?, self.sreg("nctaid.y")?);
        let ext = |v| b.build_int_z_extend(v, i64t, "");
        let (bx, by, bz, gx, gy) = (ext(bx)?, ext(by)?, ext(bz)?, ext(gx)?, ext(gy)?);
        let gxy = b.build_int_mul(gx, gy, "")?;
        let block = self.linear_index([bx, by, bz], gx, gxy, "")?;
        for (out, v) in args.reductions.iter().zip(values) {
            let dst = unsafe { b.build_in_bounds_gep(*out, &[block], "")? };
            b.build_store(dst, v)?;
        }
        self.close_if(exit)
    }

    /// Opens `if cond { .. }`: a block `name` that the builder is left in, and the block
    /// after it, returned for [`Gen::close_if`].
    fn open_if(
        &self,
        f: FunctionValue<'ctx>,
        cond: IntValue<'ctx>,
        name: &str,
    ) -> R<BasicBlock<'ctx>> {
        let then = self.ctx.append_basic_block(f, name);
        let after = self.ctx.append_basic_block(f, &format!("{name}_done"));
        self.b.build_conditional_branch(cond, then, after)?;
        self.b.position_at_end(then);
        Ok(after)
    }

    /// Closes what [`Gen::open_if`] opened: on to `after`, where the builder is left.
    fn close_if(&self, after: BasicBlock<'ctx>) -> R<()> {
        self.b.build_unconditional_branch(after)?;
        self.b.position_at_end(after);
        Ok(())
    }

    /// Each reduction's `values` combined over the lanes of the calling warp, whose first
    /// thread is `warp_first` of the block's `nthreads`: lane 0 ends with the warp's
    /// result. A last warp of fewer than 32 threads shuffles among its own threads only
    /// and skips the lanes it lacks.
    fn warp_reduce(
        &self,
        mut values: Vec<BasicValueEnum<'ctx>>,
        lane: IntValue<'ctx>,
        warp_first: IntValue<'ctx>,
        nthreads: IntValue<'ctx>,
    ) -> R<Vec<BasicValueEnum<'ctx>>> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let c32 = |v: u64| i32t.const_int(v, false);
        let left = b.build_int_sub(nthreads, warp_first, "")?;
        let whole = b.build_int_compare(IntPredicate::UGE, left, c32(32), "")?;
        let present = b.build_select(whole, c32(32), left, "")?.into_int_value();
        // (1 << present) - 1 for a partial warp; a whole one takes all lanes (the shift by
        // 32 is computed then too, but the select does not take it).
        let low = b.build_int_sub(b.build_left_shift(c32(1), present, "")?, c32(1), "")?;
        let mask = b.build_select(whole, c32(u32::MAX as u64), low, "mask")?;
        let mask = mask.into_int_value();
        for delta in [16, 8, 4, 2, 1] {
            let from = b.build_int_add(lane, c32(delta), "")?;
            let there = b.build_int_compare(IntPredicate::ULT, from, present, "")?;
            for (r, v) in values.iter_mut().enumerate() {
                let red = &self.k.reductions[r];
                let theirs = self.shuffle_down(*v, c32(delta), mask)?;
                let combined = self.combine(red.op, red.ty, *v, theirs)?;
                *v = b.build_select(there, combined, *v, "")?;
            }
        }
        Ok(values)
    }

    /// `v` of the lane `delta` above the calling one (`shfl.sync.down` among the lanes in
    /// `mask`); a 64-bit value moves as two 32-bit halves.
    fn shuffle_down(
        &self,
        v: BasicValueEnum<'ctx>,
        delta: IntValue<'ctx>,
        mask: IntValue<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let i64t = self.ctx.i64_type();
        let shfl = self.intrinsic("llvm.nvvm.shfl.sync.down.i32", &[])?;
        // Lanes beyond the last read their own value (the caller ignores it).
        let clamp = i32t.const_int(31, false);
        let word = |w: IntValue<'ctx>| -> R<IntValue<'ctx>> {
            Ok(self
                .call(shfl, &[mask.into(), w.into(), delta.into(), clamp.into()])?
                .into_int_value())
        };
        if v.get_type() == self.ctx.f32_type().into() {
            let bits = b.build_bit_cast(v, i32t, "")?.into_int_value();
            return Ok(b.build_bit_cast(word(bits)?, self.ctx.f32_type(), "")?);
        }
        let bits = b.build_bit_cast(v, i64t, "")?.into_int_value();
        let lo = b.build_int_truncate(bits, i32t, "")?;
        let hi = b.build_right_shift(bits, i64t.const_int(32, false), false, "")?;
        let hi = b.build_int_truncate(hi, i32t, "")?;
        let (lo, hi) = (word(lo)?, word(hi)?);
        let lo = b.build_int_z_extend(lo, i64t, "")?;
        let hi = b.build_int_z_extend(hi, i64t, "")?;
        let hi = b.build_left_shift(hi, i64t.const_int(32, false), "")?;
        let bits = b.build_or(hi, lo, "")?;
        Ok(b.build_bit_cast(bits, v.get_type(), "")?)
    }
}
