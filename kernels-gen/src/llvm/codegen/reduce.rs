//! Reductions in a GPU kernel: per-thread accumulators, and the combination of a thread
//! block's contributions into one partial result per block.

use super::*;

/// A launch finishes its reductions in its last thread block when it has at most this
/// many thread blocks per thread of a block (each thread of the last block then folds at
/// most this many partials, one after another); larger launches leave the partials to
/// the run time's final passes (`stencil_runtime::cuda`, `FOLD_LIMIT` there too).
pub const FOLD_LIMIT: u32 = 8;
use inkwell::values::BasicValue;
use inkwell::{AtomicOrdering, AtomicRMWBinOp};

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
    /// With a ticket counter (PTX), the last block to finish then combines every block's
    /// partial in a fixed order into the first partial and resets the counter, so that a
    /// reduction takes one launch (see [`Gen::finish_reduction`]).
    pub(super) fn block_reduce(
        &self,
        f: FunctionValue<'ctx>,
        args: &EntryArgs<'ctx>,
        slots: &[PointerValue<'ctx>],
    ) -> R<()> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let i64t = self.ctx.i64_type();
        let threads = self.block_threads()?;
        let shared: Vec<PointerValue> = self
            .k
            .reductions
            .iter()
            .enumerate()
            .map(|(r, red)| {
                self.shared_array(self.ty(red.ty), MAX_BLOCK_THREADS, &format!("reduce_{r}"))
            })
            .collect();
        for (r, slot) in slots.iter().enumerate() {
            let v = b.build_load(*slot, "")?;
            b.build_store(self.shared_elem(shared[r], threads.tid)?, v)?;
        }
        self.call_void(self.intrinsic("llvm.nvvm.barrier0", &[])?, &[])?;
        self.tree_reduce(f, &threads, &shared)?;

        let write = self.ctx.append_basic_block(f, "reduce_write");
        let exit = self.ctx.append_basic_block(f, "reduce_exit");
        let first = b.build_int_compare(IntPredicate::EQ, threads.tid, i32t.const_zero(), "")?;
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
            let v = b.build_load(self.shared_elem(shared[r], i32t.const_zero())?, "")?;
            let dst = unsafe { b.build_in_bounds_gep(*out, &[block], "")? };
            b.build_store(dst, v)?;
        }
        b.build_unconditional_branch(exit)?;
        b.position_at_end(exit);
        if let Some(counter) = args.counter {
            self.finish_reduction(f, args, &threads, &shared, counter)?;
        }
        Ok(())
    }

    /// In a launch of at most [`FOLD_LIMIT`] thread blocks per thread, the last thread
    /// block to write its partials (the one that draws the last ticket from `counter`
    /// after a fence) combines all of them: each thread folds
    /// every `ntid`-th partial (loads that bypass the non-coherent caches), the block
    /// reduces those as before, and thread 0 writes the value into the first partial and
    /// sets the counter back to 0 for the next launch. The order is fixed by the launch
    /// shape, so the value is deterministic.
    fn finish_reduction(
        &self,
        f: FunctionValue<'ctx>,
        args: &EntryArgs<'ctx>,
        threads: &BlockThreads<'ctx>,
        shared: &[PointerValue<'ctx>],
        counter: PointerValue<'ctx>,
    ) -> R<()> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let barrier = self.intrinsic("llvm.nvvm.barrier0", &[])?;
        let fence = self.intrinsic("llvm.nvvm.membar.gl", &[])?;
        let last_flag = self.shared_array(i32t.into(), 1, "reduce_last");
        let flag_at = self.shared_elem(last_flag, i32t.const_zero())?;
        let (gx, gy, gz) = (
            self.sreg("nctaid.x")?,
            self.sreg("nctaid.y")?,
            self.sreg("nctaid.z")?,
        );
        let blocks = b.build_int_mul(b.build_int_mul(gx, gy, "")?, gz, "blocks")?;
        let limit = b.build_int_mul(threads.count, i32t.const_int(FOLD_LIMIT as u64, false), "")?;
        let small = b.build_int_compare(IntPredicate::ULE, blocks, limit, "")?;

        let ticket = self.ctx.append_basic_block(f, "reduce_ticket");
        let decided = self.ctx.append_basic_block(f, "reduce_decided");
        let done = self.ctx.append_basic_block(f, "reduce_done_all");
        let draw = self.ctx.append_basic_block(f, "reduce_draw");
        // The whole block takes the same branch: no barrier is left unreached.
        b.build_conditional_branch(small, draw, done)?;
        b.position_at_end(draw);
        let first = b.build_int_compare(IntPredicate::EQ, threads.tid, i32t.const_zero(), "")?;
        b.build_conditional_branch(first, ticket, decided)?;
        b.position_at_end(ticket);
        // The partials written above are visible to every block before the ticket is.
        self.call_void(fence, &[])?;
        let drawn = b.build_atomicrmw(
            AtomicRMWBinOp::Add,
            counter,
            i32t.const_int(1, false),
            AtomicOrdering::Monotonic,
        )?;
        let last_ticket = b.build_int_sub(blocks, i32t.const_int(1, false), "")?;
        let is_last = b.build_int_compare(IntPredicate::EQ, drawn, last_ticket, "")?;
        b.build_store(flag_at, b.build_int_z_extend(is_last, i32t, "")?)?;
        b.build_unconditional_branch(decided)?;
        b.position_at_end(decided);
        self.call_void(barrier, &[])?;
        let flag = b.build_load(flag_at, "")?.into_int_value();
        let last = b.build_int_compare(IntPredicate::NE, flag, i32t.const_zero(), "")?;
        let gather = self.ctx.append_basic_block(f, "reduce_gather");
        b.build_conditional_branch(last, gather, done)?;

        // The last block: fold the partials, thread t taking t, t + ntid, ...
        b.position_at_end(gather);
        self.call_void(fence, &[])?;
        let pre = b.get_insert_block().expect("positioned");
        let head = self.ctx.append_basic_block(f, "reduce_fold");
        let body = self.ctx.append_basic_block(f, "reduce_fold_body");
        let folded = self.ctx.append_basic_block(f, "reduce_folded");
        b.build_unconditional_branch(head)?;
        b.position_at_end(head);
        let i = b.build_phi(i32t, "i")?;
        i.add_incoming(&[(&threads.tid, pre)]);
        let accs: Vec<_> = self
            .k
            .reductions
            .iter()
            .enumerate()
            .map(|(r, red)| {
                let phi = b.build_phi(self.ty(red.ty), "fold")?;
                phi.add_incoming(&[(&self.identity(r), pre)]);
                Ok(phi)
            })
            .collect::<R<_>>()?;
        let iv = i.as_basic_value().into_int_value();
        let more = b.build_int_compare(IntPredicate::ULT, iv, blocks, "")?;
        b.build_conditional_branch(more, body, folded)?;
        b.position_at_end(body);
        let wide = b.build_int_z_extend(iv, self.ctx.i64_type(), "")?;
        let mut next_accs = Vec::with_capacity(accs.len());
        for (r, red) in self.k.reductions.iter().enumerate() {
            let at = unsafe { b.build_in_bounds_gep(args.reductions[r], &[wide], "")? };
            let v = b.build_load(at, "partial")?;
            if let Some(load) = v.as_instruction_value() {
                load.set_volatile(true).map_err(|e| LlvmError::Invalid {
                    kernel: self.k.name.clone(),
                    message: format!("a volatile load: {e}"),
                })?;
            }
            let acc = accs[r].as_basic_value();
            next_accs.push(self.combine(red.op, red.ty, acc, v)?);
        }
        let next = b.build_int_add(iv, threads.count, "")?;
        let body_end = b.get_insert_block().expect("positioned");
        i.add_incoming(&[(&next, body_end)]);
        for (phi, v) in accs.iter().zip(&next_accs) {
            phi.add_incoming(&[(v, body_end)]);
        }
        b.build_unconditional_branch(head)?;

        b.position_at_end(folded);
        for (r, phi) in accs.iter().enumerate() {
            b.build_store(
                self.shared_elem(shared[r], threads.tid)?,
                phi.as_basic_value(),
            )?;
        }
        self.call_void(barrier, &[])?;
        self.tree_reduce(f, threads, shared)?;
        let write = self.ctx.append_basic_block(f, "reduce_write_value");
        let first = b.build_int_compare(IntPredicate::EQ, threads.tid, i32t.const_zero(), "")?;
        b.build_conditional_branch(first, write, done)?;
        b.position_at_end(write);
        for (r, out) in args.reductions.iter().enumerate() {
            let v = b.build_load(self.shared_elem(shared[r], i32t.const_zero())?, "")?;
            b.build_store(*out, v)?;
        }
        b.build_store(counter, i32t.const_zero())?;
        b.build_unconditional_branch(done)?;
        b.position_at_end(done);
        Ok(())
    }

    /// This thread's index in its block (x fastest) and the block's thread count.
    fn block_threads(&self) -> R<BlockThreads<'ctx>> {
        let b = &self.b;
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
        let count = b.build_int_mul(nxy, nz, "")?;
        let tid = b.build_int_add(
            b.build_int_add(tx, b.build_int_mul(ty_, nx, "")?, "")?,
            b.build_int_mul(tz, nxy, "")?,
            "tid",
        )?;
        Ok(BlockThreads { tid, count })
    }

    /// A module-internal array of `len` elements of `t` in shared memory.
    fn shared_array(&self, t: BasicTypeEnum<'ctx>, len: u32, name: &str) -> PointerValue<'ctx> {
        let arr = t.array_type(len);
        let g = self
            .module
            .add_global(arr, Some(AddressSpace::from(3u16)), name);
        g.set_linkage(Linkage::Internal);
        g.set_initializer(&arr.get_undef());
        g.set_alignment(8);
        g.as_pointer_value()
    }

    /// Element `index` of a shared array.
    fn shared_elem(
        &self,
        array: PointerValue<'ctx>,
        index: IntValue<'ctx>,
    ) -> R<PointerValue<'ctx>> {
        let zero = self.ctx.i32_type().const_zero();
        Ok(unsafe { self.b.build_in_bounds_gep(array, &[zero, index], "")? })
    }

    /// Halves the values in `shared` (one per thread, stored, then a barrier) down to
    /// element 0, in a fixed order; ends after a barrier.
    fn tree_reduce(
        &self,
        f: FunctionValue<'ctx>,
        threads: &BlockThreads<'ctx>,
        shared: &[PointerValue<'ctx>],
    ) -> R<()> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let barrier = self.intrinsic("llvm.nvvm.barrier0", &[])?;
        let (tid, nthreads) = (threads.tid, threads.count);
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
            let mine = b.build_load(self.shared_elem(shared[r], tid)?, "")?;
            let theirs = b.build_load(self.shared_elem(shared[r], partner)?, "")?;
            let c = self.combine(red.op, red.ty, mine, theirs)?;
            b.build_store(self.shared_elem(shared[r], tid)?, c)?;
        }
        b.build_unconditional_branch(sync)?;

        b.position_at_end(sync);
        self.call_void(barrier, &[])?;
        let next = b.build_right_shift(sv, i32t.const_int(1, false), false, "")?;
        s.add_incoming(&[(&next, sync)]);
        b.build_unconditional_branch(head)?;
        b.position_at_end(done);
        Ok(())
    }
}

/// A thread's index within its block and the block's number of threads.
pub(super) struct BlockThreads<'ctx> {
    tid: IntValue<'ctx>,
    count: IntValue<'ctx>,
}
