//! The PTX entry of a kernel with staged values (`let f = stage(..)`, `ir/stages.rs`).
//!
//! A thread block computes one point per thread over a tile of `ntid.x x ntid.y x ntid.z`
//! points, in two phases:
//!
//! 1. The block's threads compute every staged value over the tile extended by the box of
//!    offsets it is read at ([`crate::ir::StageLayout`]). The values of one `stage(..)`
//!    call are computed together ([`crate::ir::StageGroup`]), the points of the group's
//!    box around the tile visited by the threads in turn, each value into an array of
//!    those points in dynamic shared memory (`(ntid.x + hi.x - lo.x) x ..` points of the
//!    group's box), the arrays one after the other in stage order, each starting on an
//!    8-byte boundary (the run time sizes the shared memory the same way:
//!    `stencil_runtime::cuda::Staging`). A group that reads another's values (a chain)
//!    is of a higher level ([`crate::ir::StageGroup::level`]) and reads them from their
//!    arrays: the groups are computed by level with a barrier between two levels.
//!    A group is computed only at the points whose reads stay within what the kernel's
//!    halo allows: from `lo` to `n - 1 + hi` of its box along each axis.
//! 2. After a barrier, each thread computes its points, reading a staged value at an offset
//!    from the region's arrays ([`Gen::staged_value`]).
//!
//! No thread leaves before the barrier: threads past the domain's end take part in phase
//! 1 and skip phase 2.

use super::point::LoopHead;
use super::*;
use crate::ir::{StageGroup, StageLayout};

/// What phase 1 works over: a thread block's region of points around its tile.
struct Region<'r, 'ctx> {
    /// The entry being generated.
    f: FunctionValue<'ctx>,
    /// The entry's parameters.
    args: &'r EntryArgs<'ctx>,
    /// The stages read and the box of their reads.
    layout: &'r StageLayout,
    /// Each read stage's array, in the order of `layout.stages`.
    arrays: &'r [StagedArray<'ctx>],
    /// The same arrays by stage number (`None` for a stage not read).
    by_stage: &'r [Option<StagedArray<'ctx>>],
    /// The fields, their pointers in the block's slot.
    fields: &'r [FieldArgs<'ctx>],
    /// Where the thread block's tile lies.
    place: &'r blocks::BlockPlace<'ctx>,
    /// The local index of the tile's first point.
    corner: [IntValue<'ctx>; 3],
    /// The tile's span per axis (`i32`; 1 past the kernel's axes).
    span: [IntValue<'ctx>; 3],
}

/// A read stage's array in shared memory, laid out over its group's box around the tile.
#[derive(Clone, Copy)]
pub(super) struct StagedArray<'ctx> {
    /// The first value, typed as the values are held.
    ptr: PointerValue<'ctx>,
    /// The box's low corner: the array's first point is this far from the tile's.
    lo: [i32; 3],
    /// The array's row length and plane size (`i32`).
    row: IntValue<'ctx>,
    plane: IntValue<'ctx>,
}

/// Where a thread finds the staged values in shared memory: during phase 1 for a chain,
/// during phase 2 for its points.
pub(super) struct StagedTile<'ctx> {
    /// Each stage's array (by stage number; `None` for a stage the kernel does not read).
    arrays: Vec<Option<StagedArray<'ctx>>>,
    /// The current point's position from the tile's first point, per axis of the kernel
    /// (`i32`; below 0 in the box around the tile).
    at: Vec<IntValue<'ctx>>,
}

impl<'a, 'ctx> Gen<'a, 'ctx> {
    /// The entry of a staged kernel whose threads compute `points` points each along the
    /// last axis, `ntid` apart (so that a warp's points of one row are consecutive): a
    /// thread block's tile is `ntid.x x .. x (points ntid)` along the last axis.
    pub(super) fn staged_entry(&mut self, points: u32) -> R<()> {
        let layout = self.k.stage_layout().ok_or_else(|| LlvmError::Invalid {
            kernel: self.k.name.clone(),
            message: "a staged entry for a kernel that reads no staged value".into(),
        })?;
        let name = crate::llvm::variant_entry(
            &crate::llvm::sampled_entry_name(self.k, self.p, self.sampling),
            1,
            points,
        );
        let f = self.begin_kernel(&name)?;
        let args = self.unpack_params(f)?;
        let place = self.block_place(f)?;
        let slots = self.contribution_slots()?;
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        let dims = self.k.dims as usize;
        let last = dims.max(1) - 1;
        let mut tid = [i32t.const_zero(); 3];
        let mut ntid = [i32t.const_int(1, false); 3];
        // The tile's span along each axis and the local index (in the block's slot) of
        // its first point.
        let mut span = ntid;
        let mut corner = [self.i64c(0); 3];
        for (a, axis) in ["x", "y", "z"].iter().enumerate().take(dims) {
            let ctaid = if a == 2 {
                place.tile_z
            } else {
                self.sreg(&format!("ctaid.{axis}"))?
            };
            tid[a] = self.sreg(&format!("tid.{axis}"))?;
            ntid[a] = self.sreg(&format!("ntid.{axis}"))?;
            span[a] = if a == last {
                self.b
                    .build_int_nuw_mul(ntid[a], i32t.const_int(points as u64, false), "")?
            } else {
                ntid[a]
            };
            let c = self.b.build_int_nuw_mul(ctaid, span[a], "")?;
            corner[a] = self.b.build_int_z_extend(c, i64t, "")?;
        }
        let arrays = self.stage_arrays(&layout, span)?;
        let by_stage: Vec<Option<StagedArray<'ctx>>> = (0..self.k.stages.len() as u32)
            .map(|s| {
                layout
                    .stages
                    .iter()
                    .position(|&(t, _)| t == s)
                    .map(|i| arrays[i])
            })
            .collect();
        let fields = self.shifted(&args.fields, place.shift)?;

        let region = Region {
            f,
            args: &args,
            layout: &layout,
            arrays: &arrays,
            by_stage: &by_stage,
            fields: &fields,
            place: &place,
            corner,
            span,
        };
        let barrier = self.intrinsic("llvm.nvvm.barrier0", &[])?;
        for (g, group) in layout.groups.iter().enumerate() {
            if g > 0 && layout.groups[g - 1].level < group.level {
                self.call_void(barrier, &[])?;
            }
            self.compute_stages(&region, group)?;
        }
        self.call_void(barrier, &[])?;
        *self.staged.borrow_mut() = None;

        // Phase 2: the thread's points.
        let join = self.ctx.append_basic_block(f, "join");
        for p in 0..points {
            // The point's position in the tile along each axis.
            let mut at_tile = tid;
            let apart =
                self.b
                    .build_int_nuw_mul(ntid[last], i32t.const_int(p as u64, false), "")?;
            at_tile[last] = self.b.build_int_nuw_add(tid[last], apart, "")?;
            let mut local = [self.i64c(0); 3];
            let mut first = local;
            let mut inside = self.ctx.bool_type().const_int(1, false);
            for a in 0..3 {
                if a < dims {
                    let t = self.b.build_int_z_extend(at_tile[a], i64t, "")?;
                    local[a] = self.b.build_int_nuw_add(corner[a], t, "")?;
                    first[a] = self.b.build_int_nuw_add(local[a], place.origin[a], "")?;
                    let ok =
                        self.b
                            .build_int_compare(IntPredicate::ULT, first[a], args.n[a], "")?;
                    inside = self.b.build_and(inside, ok, "")?;
                } else {
                    // A block wider than 1 along an axis the kernel lacks: only its
                    // first layer computes points (the others help with the stages).
                    let t = self.sreg(&format!("tid.{}", ["x", "y", "z"][a]))?;
                    let first_layer =
                        self.b
                            .build_int_compare(IntPredicate::EQ, t, i32t.const_zero(), "")?;
                    inside = self.b.build_and(inside, first_layer, "")?;
                }
            }
            *self.staged.borrow_mut() = Some(StagedTile {
                arrays: by_stage.clone(),
                at: at_tile[..dims].to_vec(),
            });
            let body = self.ctx.append_basic_block(f, "point");
            let next = self.ctx.append_basic_block(f, "next_point");
            self.b.build_conditional_branch(inside, body, next)?;
            self.b.position_at_end(body);
            let bases = self.bases(&fields, local)?;
            let at = PointAt {
                idx: first,
                bases: &bases,
                shift: [0; 3],
            };
            self.point_into(&args, &at, &slots)?;
            self.b.build_unconditional_branch(next)?;
            self.b.position_at_end(next);
        }
        self.end_at_join(f, &args, &slots, join)?;
        *self.staged.borrow_mut() = None;
        Ok(())
    }

    /// Each read stage's array in the dynamic shared memory, over its group's box around a
    /// tile of `span` points per axis: one after the other in stage order, each on an
    /// 8-byte boundary.
    fn stage_arrays(
        &self,
        layout: &StageLayout,
        span: [IntValue<'ctx>; 3],
    ) -> R<Vec<StagedArray<'ctx>>> {
        let i8t = self.ctx.i8_type();
        let shared = AddressSpace::from(3u16);
        let tile = self
            .module
            .add_global(i8t.array_type(0), Some(shared), "stage_tile");
        tile.set_linkage(Linkage::External);
        tile.set_alignment(16);
        let base = self
            .b
            .build_pointer_cast(tile.as_pointer_value(), i8t.ptr_type(shared), "")?;
        let i32t = self.ctx.i32_type();
        let dims = self.k.dims as usize;
        let mut offset = i32t.const_zero();
        let mut arrays = Vec::new();
        let boxes = layout.array_boxes();
        for ((&(_, ty), bytes), (lo, hi)) in layout
            .stages
            .iter()
            .zip(layout.value_bytes(self.p))
            .zip(boxes)
        {
            let mut extent = [i32t.const_int(1, false); 3];
            for a in 0..dims {
                let more = i32t.const_int((hi[a] - lo[a]) as u64, false);
                extent[a] = self.b.build_int_nuw_add(span[a], more, "")?;
            }
            let plane = self.b.build_int_nuw_mul(extent[0], extent[1], "")?;
            let points = self.b.build_int_nuw_mul(plane, extent[2], "")?;
            // SAFETY (of the generated code): the launch gives the entry as many bytes of
            // shared memory as the arrays take (`Staging::shared_bytes`).
            let start = unsafe { self.b.build_in_bounds_gep(base, &[offset], "")? };
            let elem = self.memory_ty(ty);
            let ptr = self
                .b
                .build_pointer_cast(start, elem.ptr_type(shared), "stage")?;
            arrays.push(StagedArray {
                ptr,
                lo,
                row: extent[0],
                plane,
            });
            let size = self
                .b
                .build_int_nuw_mul(points, i32t.const_int(bytes as u64, false), "")?;
            let padded = self.b.build_and(
                self.b
                    .build_int_nuw_add(size, i32t.const_int(7, false), "")?,
                i32t.const_int(!7u32 as u64, false),
                "",
            )?;
            offset = self.b.build_int_nuw_add(offset, padded, "")?;
        }
        Ok(arrays)
    }

    /// The index in `array` of the point `offset` away from the point `at` (positions
    /// from the tile's first point, per axis of the kernel).
    fn array_index(
        &self,
        array: &StagedArray<'ctx>,
        at: &[IntValue<'ctx>],
        offset: [i32; 3],
    ) -> R<IntValue<'ctx>> {
        let i32t = self.ctx.i32_type();
        let mut index = i32t.const_zero();
        for (a, (&p, step)) in at
            .iter()
            .zip([i32t.const_int(1, false), array.row, array.plane])
            .enumerate()
        {
            // From the array's first point: at least 0 for every read the box covers.
            let shift = i32t.const_int((offset[a] - array.lo[a]) as i64 as u64, true);
            let along = self.b.build_int_add(p, shift, "")?;
            let term = self.b.build_int_mul(along, step, "")?;
            index = self.b.build_int_add(index, term, "")?;
        }
        Ok(index)
    }

    /// Phase 1 for one group: the block's threads compute the group's stages over its box
    /// around the tile, a point per thread in turn (points numbered along x first: a
    /// warp's points are consecutive), at the points from `lo` to `n - 1 + hi` of the box
    /// (whose reads the kernel's halo covers).
    fn compute_stages(&self, region: &Region<'_, 'ctx>, group: &StageGroup) -> R<()> {
        let dims = self.k.dims as usize;
        let i32t = self.ctx.i32_type();
        let mut extent = region.span;
        for (a, e) in extent.iter_mut().enumerate().take(dims) {
            let more = (group.hi[a] - group.lo[a]) as u64;
            *e = self
                .b
                .build_int_nuw_add(*e, i32t.const_int(more, false), "")?;
        }
        let [tx, ty, tz] = self.sregs("tid")?;
        let [nx, ny, nz] = self.sregs("ntid")?;
        let nxy = self.b.build_int_nuw_mul(nx, ny, "")?;
        let threads = self.b.build_int_nuw_mul(nxy, nz, "")?;
        let ty_nx = self.b.build_int_nuw_mul(ty, nx, "")?;
        let tz_nxy = self.b.build_int_nuw_mul(tz, nxy, "")?;
        let linear =
            self.b
                .build_int_nuw_add(tx, self.b.build_int_nuw_add(ty_nx, tz_nxy, "")?, "")?;
        let mut points = i32t.const_int(1, false);
        for e in extent.iter().take(dims) {
            points = self.b.build_int_nuw_mul(points, *e, "")?;
        }
        let l = self.open_strided_loop(region.f, linear, points)?;
        let r = l.var.as_basic_value().into_int_value();
        // The point's position in the group's box along each axis: `r` in mixed radix of
        // the extents.
        let mut along = Vec::with_capacity(dims);
        let mut rest = r;
        for (a, e) in extent.iter().enumerate().take(dims) {
            if a + 1 == dims {
                along.push(rest);
            } else {
                along.push(self.b.build_int_unsigned_rem(rest, *e, "")?);
                rest = self.b.build_int_unsigned_div(rest, *e, "")?;
            }
        }
        self.stage_point(region, group, &along)?;
        let next = self.b.build_int_nuw_add(r, threads, "")?;
        let latch = self.b.get_insert_block().expect("positioned");
        l.var.add_incoming(&[(&next, latch)]);
        self.b.build_unconditional_branch(l.head)?;
        self.b.position_at_end(l.exit);
        Ok(())
    }

    /// Opens `for x in (start..end).step_by(..)`: returns the loop (the caller adds the
    /// variable's step and branches back to the head); the builder is left in the body.
    fn open_strided_loop(
        &self,
        f: FunctionValue<'ctx>,
        start: IntValue<'ctx>,
        end: IntValue<'ctx>,
    ) -> R<LoopHead<'ctx>> {
        let l = self.open_loop_head(f, "stage_loop", start, "region")?;
        let x = l.var.as_basic_value().into_int_value();
        let more = self.b.build_int_compare(IntPredicate::ULT, x, end, "")?;
        self.b.build_conditional_branch(more, l.body, l.exit)?;
        self.b.position_at_end(l.body);
        Ok(l)
    }

    /// The group's stages at the point `along` (positions per axis in the group's box),
    /// stored into their arrays, where the point is within `lo ..= n - 1 + hi` of the
    /// domain.
    fn stage_point(
        &self,
        region: &Region<'_, 'ctx>,
        group: &StageGroup,
        along: &[IntValue<'ctx>],
    ) -> R<()> {
        let Region {
            f,
            args,
            layout,
            arrays,
            by_stage,
            fields,
            place,
            corner,
            ..
        } = *region;
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        let mut local = [self.i64c(0); 3];
        let mut global = local;
        let mut inside = self.ctx.bool_type().const_int(1, false);
        // The point's position from the tile's first point.
        let mut at = Vec::with_capacity(along.len());
        for (a, &p) in along.iter().enumerate() {
            let low = i32t.const_int(group.lo[a] as i64 as u64, true);
            at.push(self.b.build_int_add(p, low, "")?);
            let p = self.b.build_int_z_extend(p, i64t, "")?;
            let shifted = self.b.build_int_add(p, self.i64c(group.lo[a] as i64), "")?;
            local[a] = self.b.build_int_add(corner[a], shifted, "")?;
            global[a] = self.b.build_int_add(local[a], place.origin[a], "")?;
            let low = self.b.build_int_compare(
                IntPredicate::SGE,
                global[a],
                self.i64c(group.lo[a] as i64),
                "",
            )?;
            let end = self
                .b
                .build_int_add(args.n[a], self.i64c(group.hi[a] as i64), "")?;
            let high = self
                .b
                .build_int_compare(IntPredicate::SLT, global[a], end, "")?;
            inside = self
                .b
                .build_and(inside, self.b.build_and(low, high, "")?, "")?;
        }
        let compute = self.ctx.append_basic_block(f, "stage_values");
        let next = self.ctx.append_basic_block(f, "stage_values_done");
        self.b.build_conditional_branch(inside, compute, next)?;
        self.b.position_at_end(compute);
        // A chained stage reads the groups before from their arrays around this point.
        *self.staged.borrow_mut() = Some(StagedTile {
            arrays: by_stage.to_vec(),
            at: at.clone(),
        });
        let bases = self.bases(fields, local)?;
        let point = PointAt {
            idx: global,
            bases: &bases,
            shift: [0; 3],
        };
        let roots: Vec<NodeId> = group
            .stages
            .iter()
            .map(|&i| self.k.stages[layout.stages[i].0 as usize].value)
            .collect();
        // Costly arms computed only where taken, as at a point (`crate::branches`).
        let live = self.k.reachable(&roots);
        let mut vals: Vec<Option<BasicValueEnum<'ctx>>> = vec![None; self.k.nodes.len()];
        match crate::branches::plan_for(self.k, &live, &roots) {
            Some(plan) => {
                self.guarded_values(args, &point, &mut None, &mut vals, &plan, &plan.top)?
            }
            None => {
                for n in live {
                    let v = self.node_value(args, &point, &mut None, &vals, n)?;
                    vals[n as usize] = Some(v);
                }
            }
        }
        for (&i, &root) in group.stages.iter().zip(&roots) {
            let value = vals[root as usize].expect("a stage's value is computed with its nodes");
            let value = self.narrowed_to_memory(value, layout.stages[i].1)?;
            let index = self.array_index(&arrays[i], &at, [0; 3])?;
            // SAFETY (of the generated code): the point lies in the array's box.
            let ptr = unsafe { self.b.build_in_bounds_gep(arrays[i].ptr, &[index], "")? };
            self.b.build_store(ptr, value)?;
        }
        self.b.build_unconditional_branch(next)?;
        self.b.position_at_end(next);
        Ok(())
    }

    /// Phase 2's read of stage `stage` at `offset` from the thread's point.
    pub(super) fn staged_value(
        &self,
        stage: u32,
        offset: [i32; 3],
        ty: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let tile = self.staged.borrow();
        let missing = || LlvmError::Invalid {
            kernel: self.k.name.clone(),
            message: format!("staged value {stage} is read outside a staged entry"),
        };
        let tile = tile.as_ref().ok_or_else(missing)?;
        let array = tile.arrays[stage as usize].ok_or_else(missing)?;
        let index = self.array_index(&array, &tile.at, offset)?;
        // SAFETY (of the generated code): the offset is within the box the array covers
        // around the tile.
        let ptr = unsafe { self.b.build_in_bounds_gep(array.ptr, &[index], "")? };
        let raw = self.b.build_load(ptr, "")?;
        self.widened_from_memory(raw, ty)
    }
}
