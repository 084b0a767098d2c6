//! The point entry of a tile variant: where a thread's tile lies, the fast path that
//! issues every load of the tile first, the edge path, and the vector loads and stores.

use super::*;

impl<'a, 'ctx> Gen<'a, 'ctx> {
    /// A CUDA kernel in which each thread computes a [`Tile`] of points: `vector`
    /// consecutive points along axis 0 times `points` along the kernel's last axis,
    /// sharing the loads their stencils have in common; block partials for reductions.
    ///
    /// Threads whose points all lie inside the domain take a fast path without per-point
    /// guards, with vector loads and stores where a row of the tile is whole; the others
    /// (at the domain's far edges) check each point.
    pub(super) fn ptx_entry(&mut self, vector: u32, points: u32) -> R<()> {
        let name = crate::llvm::variant_entry(
            &crate::llvm::sampled_entry_name(self.k, self.p, self.sampling),
            vector,
            points,
        );
        let f = self.begin_kernel(&name)?;
        let fast = self.ctx.append_basic_block(f, "all_points_inside");
        let edge = self.ctx.append_basic_block(f, "edge");
        let join = self.ctx.append_basic_block(f, "join");
        let args = self.unpack_params(f)?;
        let i64t = self.ctx.i64_type();
        let tile = Tile {
            vector,
            points,
            axis: (self.k.dims as usize).max(1) - 1,
        };
        let mut first = [self.i64c(0); 3];
        // Within a block of a block grid, `local` indices address the fields (from the
        // block's slot) and `first` (offset by the block's origin) is what the kernel sees.
        let mut local = first;
        let place = self.block_place(f)?;
        let mut any_inside = self.ctx.bool_type().const_int(1, false);
        let mut all_inside = any_inside;
        for (a, name) in ["x", "y", "z"].iter().enumerate() {
            let ctaid = if a == 2 {
                place.tile_z
            } else {
                self.sreg(&format!("ctaid.{name}"))?
            };
            let ntid = self.sreg(&format!("ntid.{name}"))?;
            let tid = self.sreg(&format!("tid.{name}"))?;
            let base = self.b.build_int_nuw_mul(ctaid, ntid, "")?;
            let g = self.b.build_int_nuw_add(base, tid, "")?;
            local[a] = self.b.build_int_z_extend(g, i64t, "")?;
            let span = self.i64c(tile.span(a) as i64);
            local[a] = self.b.build_int_nuw_mul(local[a], span, "")?;
            first[a] = self.b.build_int_nuw_add(local[a], place.origin[a], "")?;
            let some = self
                .b
                .build_int_compare(IntPredicate::ULT, first[a], args.n[a], "")?;
            any_inside = self.b.build_and(any_inside, some, "")?;
            let end = self.b.build_int_nuw_add(first[a], span, "")?;
            let all = self
                .b
                .build_int_compare(IntPredicate::ULE, end, args.n[a], "")?;
            all_inside = self.b.build_and(all_inside, all, "")?;
            if a >= self.k.dims as usize {
                // An axis the kernel does not use has extent 1: a thread inside the
                // domain is at 0 there, and its addresses need no term for it.
                first[a] = self.i64c(0);
                local[a] = self.i64c(0);
            }
        }
        let slot_fields = self.shifted(&args.fields, place.shift)?;
        let bases = self.bases(&slot_fields, local)?;
        // Contributions of points outside the domain are the identity.
        let slots = self.contribution_slots()?;
        self.b.build_conditional_branch(all_inside, fast, edge)?;

        // Every point inside: unguarded, loads shared between points, vector accesses. In
        // a red-black tile LLVM sees the parity of the first point (its indices are
        // multiples of the tile's even spans) and branches once on the colour, so only the
        // updated colour's points are computed (`tests/tiles.rs` checks that).
        self.b.position_at_end(fast);
        let mut memo = LoadMemo::new();
        let shifts = tile.shifts();
        self.issue_loads(&args, &bases, &shifts, vector, &mut memo)?;
        let mut pending = PendingStores::new();
        for &shift in &shifts {
            let at = self.point_at(first, &bases, shift)?;
            let contributions = self.point(&args, &at, Some(&mut memo), Some(&mut pending))?;
            self.accumulate(&slots, contributions)?;
        }
        self.emit_stores(&args, &bases, pending, vector)?;
        self.b.build_unconditional_branch(join)?;

        // At the far edges: each point guarded.
        self.b.position_at_end(edge);
        let check_first = self.ctx.append_basic_block(f, "edge_points");
        self.b
            .build_conditional_branch(any_inside, check_first, join)?;
        self.b.position_at_end(check_first);
        for &shift in &shifts {
            let at = self.point_at(first, &bases, shift)?;
            let mut inside = self.ctx.bool_type().const_int(1, false);
            for (a, &along) in shift.iter().enumerate() {
                if along != 0 {
                    let ok =
                        self.b
                            .build_int_compare(IntPredicate::ULT, at.idx[a], args.n[a], "")?;
                    inside = self.b.build_and(inside, ok, "")?;
                }
            }
            let body = self.ctx.append_basic_block(f, "edge_point");
            let next = self.ctx.append_basic_block(f, "edge_next");
            self.b.build_conditional_branch(inside, body, next)?;
            self.b.position_at_end(body);
            self.point_into(&args, &at, &slots)?;
            self.b.build_unconditional_branch(next)?;
            self.b.position_at_end(next);
        }
        self.end_at_join(f, &args, &slots, join)
    }

    /// The offsets (from the thread's first point) every point of the tile loads, by
    /// field, in first-use order.
    pub(super) fn tile_loads(&self, shifts: &[[i32; 3]]) -> Vec<(u32, [i32; 3], Ty)> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for s in shifts {
            for n in self.k.live_nodes() {
                if let Node::Load { field, offset } = self.k.nodes[n as usize] {
                    let off = self.k.fields[field as usize].map.tile_offset(*s, offset);
                    if seen.insert((field, off)) {
                        out.push((field, off, self.k.types[n as usize]));
                    }
                }
            }
        }
        out
    }

    /// Emits every load of the tile, so that all of a thread's loads are in flight before
    /// the first arithmetic uses them: one vector load for each aligned run of `vector`
    /// values of a row that the tile reads whole, scalar loads for the rest. (A `Coarse`
    /// field's index of the first point is aligned to half the vector only: its runs are
    /// read with scalar loads.)
    ///
    /// Every read goes through the non-coherent path, also of fields the kernel writes:
    /// before any store, and only at points that no other thread writes during the launch
    /// (its own points, or a red-black kernel's other colour; the updated colour's values
    /// that a vector load brings in from a neighbouring tile are not used).
    pub(super) fn issue_loads(
        &self,
        args: &EntryArgs<'ctx>,
        bases: &[PointerValue<'ctx>],
        shifts: &[[i32; 3]],
        vector: u32,
        memo: &mut LoadMemo<'ctx>,
    ) -> R<()> {
        let loads = self.tile_loads(shifts);
        let wanted: std::collections::HashSet<(u32, [i32; 3])> =
            loads.iter().map(|&(f, o, _)| (f, o)).collect();
        let v = vector as i32;
        for &(field, off, ty) in &loads {
            if memo.contains_key(&(field, off)) {
                continue;
            }
            let fa = &args.fields[field as usize];
            let start = off[0].div_euclid(v) * v;
            let run = |x: i32| (field, [x, off[1], off[2]]);
            let aligned = fa.map != IndexMap::Coarse;
            if v > 1 && aligned && (start..start + v).all(|x| wanted.contains(&run(x))) {
                let ptr = self.address(fa, bases[field as usize], run(start).1)?;
                let values = self.load_vector(ptr, ty, vector)?;
                for (x, value) in (start..start + v).zip(values) {
                    memo.insert(run(x), value);
                }
            } else {
                let ptr = self.address(fa, bases[field as usize], off)?;
                let stored = self.k.fields[field as usize].elem;
                memo.insert(
                    (field, off),
                    self.widened_from_memory(self.load(ptr, stored)?, stored)?,
                );
            }
        }
        Ok(())
    }

    /// Emits a tile's stores: one vector store for each aligned run of `vector` values of
    /// a row, scalar stores for the rest.
    pub(super) fn emit_stores(
        &self,
        args: &EntryArgs<'ctx>,
        bases: &[PointerValue<'ctx>],
        pending: PendingStores<'ctx>,
        vector: u32,
    ) -> R<()> {
        let v = vector as i32;
        let by_place: HashMap<(u32, [i32; 3]), BasicValueEnum<'ctx>> =
            pending.iter().map(|&(f, o, x)| ((f, o), x)).collect();
        let mut done = std::collections::HashSet::new();
        for &(field, off, value) in &pending {
            if done.contains(&(field, off)) {
                continue;
            }
            let fa = &args.fields[field as usize];
            let start = off[0].div_euclid(v) * v;
            let run: Vec<(u32, [i32; 3])> = (start..start + v)
                .map(|x| (field, [x, off[1], off[2]]))
                .collect();
            if v > 1 && run.iter().all(|key| by_place.contains_key(key)) {
                let ptr = self.address(fa, bases[field as usize], run[0].1)?;
                let values: Vec<BasicValueEnum> = run.iter().map(|key| by_place[key]).collect();
                self.store_vector(ptr, &values)?;
                done.extend(run);
            } else {
                let ptr = self.address(fa, bases[field as usize], off)?;
                self.b.build_store(ptr, value)?;
                done.insert((field, off));
            }
        }
        Ok(())
    }

    /// A value of field `fa` at `ptr` outside a tile's fast path: through the
    /// non-coherent path for an input, a plain load for a field the kernel also writes.
    pub(super) fn read(
        &self,
        fa: &FieldArgs<'ctx>,
        ptr: PointerValue<'ctx>,
        stored: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let raw = if fa.written {
            self.b.build_load(ptr, "")?
        } else {
            self.load(ptr, stored)?
        };
        self.widened_from_memory(raw, stored)
    }

    /// Loads `n` consecutive values of type `ty` at `ptr` (aligned to their total size)
    /// through the non-coherent path, as one vector instruction.
    pub(super) fn load_vector(
        &self,
        ptr: PointerValue<'ctx>,
        ty: Ty,
        n: u32,
    ) -> R<Vec<BasicValueEnum<'ctx>>> {
        let elem = self.ty(ty).into_float_type();
        let vt = elem.vec_type(n);
        let vptr = self
            .b
            .build_pointer_cast(ptr, vt.ptr_type(self.addr_space()), "")?;
        let f = self.intrinsic(
            "llvm.nvvm.ldg.global.f",
            &[vt.into(), vptr.get_type().into()],
        )?;
        let bytes = n as u64 * if ty.concrete(self.p) == Ty::F32 { 4 } else { 8 };
        let align = self.ctx.i32_type().const_int(bytes, false);
        let v = self
            .call(f, &[vptr.into(), align.into()])?
            .into_vector_value();
        (0..n)
            .map(|i| {
                let idx = self.ctx.i32_type().const_int(i as u64, false);
                Ok(self.b.build_extract_element(v, idx, "")?)
            })
            .collect()
    }

    /// Stores `values` (all of one float type) at `ptr` as one vector instruction.
    pub(super) fn store_vector(
        &self,
        ptr: PointerValue<'ctx>,
        values: &[BasicValueEnum<'ctx>],
    ) -> R<()> {
        let elem = values[0].get_type().into_float_type();
        let vt = elem.vec_type(values.len() as u32);
        let mut v = vt.get_undef();
        for (i, &x) in values.iter().enumerate() {
            let idx = self.ctx.i32_type().const_int(i as u64, false);
            v = self.b.build_insert_element(v, x, idx, "")?;
        }
        let vptr = self
            .b
            .build_pointer_cast(ptr, vt.ptr_type(self.addr_space()), "")?;
        let bytes = values.len() as u32 * if elem == self.ctx.f32_type() { 4 } else { 8 };
        let st = self.b.build_store(vptr, v)?;
        st.set_alignment(bytes).map_err(|e| LlvmError::Invalid {
            kernel: self.k.name.clone(),
            message: e.to_string(),
        })?;
        Ok(())
    }

    /// The point at offset `shift` from a thread's first point `first`.
    pub(super) fn point_at<'b>(
        &self,
        first: [IntValue<'ctx>; 3],
        bases: &'b [PointerValue<'ctx>],
        shift: [i32; 3],
    ) -> R<PointAt<'ctx, 'b>> {
        let mut idx = first;
        for a in 0..3 {
            if shift[a] != 0 {
                idx[a] = self
                    .b
                    .build_int_nuw_add(first[a], self.i64c(shift[a] as i64), "")?;
            }
        }
        Ok(PointAt { idx, bases, shift })
    }
}
