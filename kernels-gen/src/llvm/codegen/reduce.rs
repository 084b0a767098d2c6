//! Reductions in a GPU kernel: per-thread accumulators, and the combination of a thread
//! block's contributions into one partial result per block.

use super::*;

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
        let (tx, ty_, tz) = (
            self.sreg("tid.x")?,
            self.sreg("tid.y")?,
            self.sreg("tid.z")?,
        );
        let (nx, ny, nz) = (
            self.sreg("ntid.x")?,
            self.sreg("ntid.y")?,
            self.sreg("ntid.z")?,
        );
        let nxy = b.build_int_mul(nx, ny, "")?;
        let nthreads = b.build_int_mul(nxy, nz, "")?;
        let tid = b.build_int_add(
            b.build_int_add(tx, b.build_int_mul(ty_, nx, "")?, "")?,
            b.build_int_mul(tz, nxy, "")?,
            "tid",
        )?;
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
        let (bx, by, bz) = (
            self.sreg("ctaid.x")?,
            self.sreg("ctaid.y")?,
            self.sreg("ctaid.z")?,
        );
        let (gx, gy) = (self.sreg("nctaid.x")?, self.sreg("nctaid.y")?);
        let ext = |v| b.build_int_z_extend(v, i64t, "");
        let (bx, by, bz, gx, gy) = (ext(bx)?, ext(by)?, ext(bz)?, ext(gx)?, ext(gy)?);
        let gxy = b.build_int_mul(gx, gy, "")?;
        let block = b.build_int_add(
            b.build_int_add(bx, b.build_int_mul(by, gx, "")?, "")?,
            b.build_int_mul(bz, gxy, "")?,
            "",
        )?;
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
