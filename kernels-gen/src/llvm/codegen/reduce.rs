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

    /// Tree reduction of each contribution over the thread block in shared memory; thread
    /// 0 writes the block's partial. Fixed order: deterministic for a given launch shape.
    pub(super) fn block_reduce(
        &self,
        f: FunctionValue<'ctx>,
        args: &EntryArgs<'ctx>,
        slots: &[PointerValue<'ctx>],
    ) -> R<()> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let i64t = self.ctx.i64_type();
        let t = self.sregs("tid")?;
        let [nx, ny, nz] = self.sregs("ntid")?;
        let nxy = b.build_int_mul(nx, ny, "")?;
        let nthreads = b.build_int_mul(nxy, nz, "")?;
        let tid = self.linear_index(t, nx, nxy, "tid")?;
        let barrier = self.intrinsic("llvm.nvvm.barrier0", &[])?;
        let shared: Vec<PointerValue> = self
            .k
            .reductions
            .iter()
            .enumerate()
            .map(|(r, red)| {
                let t = self.ty(red.ty);
                let arr = t.array_type(MAX_BLOCK_THREADS);
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
        for (r, slot) in slots.iter().enumerate() {
            let v = b.build_load(*slot, "")?;
            b.build_store(elem(r, tid)?, v)?;
        }
        self.call_void(barrier, &[])?;
        // s = largest power of two below nthreads; halve until 0.
        let nm1 = b.build_int_sub(nthreads, i32t.const_int(1, false), "")?;
        let ctlz = self.intrinsic("llvm.ctlz", &[i32t.into()])?;
        let lz = self
            .call(
                ctlz,
                &[nm1.into(), self.ctx.bool_type().const_zero().into()],
            )?
            .into_int_value();
        let shift = b.build_int_sub(i32t.const_int(31, false), lz, "")?;
        let start = b.build_left_shift(i32t.const_int(1, false), shift, "")?;
        let one_thread =
            b.build_int_compare(IntPredicate::ULE, nthreads, i32t.const_int(1, false), "")?;
        let start = b.build_select(one_thread, i32t.const_zero(), start, "")?;

        let pre = b.get_insert_block().expect("positioned");
        let head = self.ctx.append_basic_block(f, "reduce_head");
        let step = self.ctx.append_basic_block(f, "reduce_step");
        let add = self.ctx.append_basic_block(f, "reduce_add");
        let sync = self.ctx.append_basic_block(f, "reduce_sync");
        let done = self.ctx.append_basic_block(f, "reduce_done");
        let write = self.ctx.append_basic_block(f, "reduce_write");
        let exit = self.ctx.append_basic_block(f, "reduce_exit");
        b.build_unconditional_branch(head)?;
        b.position_at_end(head);
        let s = b.build_phi(i32t, "s")?;
        s.add_incoming(&[(&start, pre)]);
        let sv = s.as_basic_value().into_int_value();
        let more = b.build_int_compare(IntPredicate::NE, sv, i32t.const_zero(), "")?;
        b.build_conditional_branch(more, step, done)?;

        b.position_at_end(step);
        let partner = b.build_int_add(tid, sv, "")?;
        let lower = b.build_int_compare(IntPredicate::ULT, tid, sv, "")?;
        let valid = b.build_int_compare(IntPredicate::ULT, partner, nthreads, "")?;
        let active = b.build_and(lower, valid, "")?;
        b.build_conditional_branch(active, add, sync)?;

        b.position_at_end(add);
        for (r, red) in self.k.reductions.iter().enumerate() {
            let mine = b.build_load(elem(r, tid)?, "")?;
            let theirs = b.build_load(elem(r, partner)?, "")?;
            let c = self.combine(red.op, red.ty, mine, theirs)?;
            b.build_store(elem(r, tid)?, c)?;
        }
        b.build_unconditional_branch(sync)?;

        b.position_at_end(sync);
        self.call_void(barrier, &[])?;
        let next = b.build_right_shift(sv, i32t.const_int(1, false), false, "")?;
        s.add_incoming(&[(&next, sync)]);
        b.build_unconditional_branch(head)?;

        b.position_at_end(done);
        let first = b.build_int_compare(IntPredicate::EQ, tid, i32t.const_zero(), "")?;
        b.build_conditional_branch(first, write, exit)?;

        b.position_at_end(write);
        let [bx, by, bz] = self.sregs("ctaid")?;
        let (gx, gy) = (self.sreg("nctaid.x")?, self.sreg("nctaid.y")?);
        let ext = |v| b.build_int_z_extend(v, i64t, "");
        let (bx, by, bz, gx, gy) = (ext(bx)?, ext(by)?, ext(bz)?, ext(gx)?, ext(gy)?);
        let gxy = b.build_int_mul(gx, gy, "")?;
        let block = self.linear_index([bx, by, bz], gx, gxy, "")?;
        for (r, out) in args.reductions.iter().enumerate() {
            let v = b.build_load(elem(r, i32t.const_zero())?, "")?;
            let dst = unsafe { b.build_in_bounds_gep(*out, &[block], "")? };
            b.build_store(dst, v)?;
        }
        b.build_unconditional_branch(exit)?;
        b.position_at_end(exit);
        Ok(())
    }
}
