//! The host entries (the JIT's loop nest over the domain, line kernels' host loops) and
//! the PTX entries of line and vertex kernels.

use super::*;

impl<'a, 'ctx> Gen<'a, 'ctx> {
    /// The host entry `void name_host(const u64 *slots)`: a loop nest over the domain.
    pub(super) fn host_entry(&mut self) -> R<()> {
        let i64t = self.ctx.i64_type();
        let slot_ptr = i64t.ptr_type(AddressSpace::default());
        let fn_ty = self.ctx.void_type().fn_type(&[slot_ptr.into()], false);
        let name = format!("{}_host", self.k.name);
        let f = self.module.add_function(&name, fn_ty, None);
        let entry = self.ctx.append_basic_block(f, "entry");
        self.b.position_at_end(entry);
        let slots = f.get_nth_param(0).expect("param").into_pointer_value();
        let slot = |g: &Self, i: u64| -> R<IntValue<'ctx>> {
            let p = unsafe { g.b.build_in_bounds_gep(slots, &[g.i64c(i as i64)], "")? };
            Ok(g.b.build_load(p, "")?.into_int_value())
        };
        let mut args = EntryArgs::new([slot(self, 0)?, slot(self, 1)?, slot(self, 2)?]);
        let mut pos = 3u64;
        for &(kind, i) in &self.k.param_order {
            match kind {
                ParamKind::Field => {
                    let raw = slot(self, pos)?;
                    let field = &self.k.fields[i as usize];
                    let pt = self.elem_ptr_type(field.elem);
                    args.fields.push(FieldArgs {
                        ptr: self.b.build_int_to_ptr(raw, pt, "")?,
                        sy: slot(self, pos + 1)?,
                        sz: slot(self, pos + 2)?,
                        map: field.map,
                        written: field.access.is_written(),
                    });
                    pos += 3;
                }
                ParamKind::Scalar => {
                    let raw = slot(self, pos)?;
                    let t = self.k.scalars[i as usize].ty.concrete(self.p);
                    let v: BasicValueEnum = match t {
                        Ty::Int => raw.into(),
                        Ty::Bool => self
                            .b
                            .build_int_compare(IntPredicate::NE, raw, self.i64c(0), "")?
                            .into(),
                        Ty::F64 => self.b.build_bit_cast(raw, self.ctx.f64_type(), "")?,
                        _ => {
                            let low = self.b.build_int_truncate(raw, self.ctx.i32_type(), "")?;
                            self.b.build_bit_cast(low, self.ctx.f32_type(), "")?
                        }
                    };
                    args.scalars.push(v);
                    pos += 1;
                }
                ParamKind::Reduction => {
                    let raw = slot(self, pos)?;
                    let pt = self.elem_ptr_type(self.k.reductions[i as usize].ty);
                    args.reductions.push(self.b.build_int_to_ptr(raw, pt, "")?);
                    pos += 1;
                }
                ParamKind::Mesh | ParamKind::Sampled => {
                    unreachable!("refused by build_module_with")
                }
            }
        }
        if let Some(line) = self.k.line {
            let raw = slot(self, pos)?;
            let pt = self.elem_ptr_type(self.k.fields[line.field as usize].elem);
            args.scratch = Some(self.b.build_int_to_ptr(raw, pt, "")?);
            return self.host_lines(f, &args, &line);
        }
        let accs: Vec<PointerValue> = (0..self.k.reductions.len())
            .map(|r| {
                let a = self
                    .b
                    .build_alloca(self.ty(self.k.reductions[r].ty), "acc")?;
                self.b.build_store(a, self.identity(r))?;
                Ok(a)
            })
            .collect::<R<_>>()?;

        // for k { for j { for i { point } } }
        let mut idx = [self.i64c(0); 3];
        let mut latches = Vec::new();
        for axis in (0..3).rev() {
            let latch = self.open_loop(f, args.n[axis])?;
            idx[axis] = latch.index;
            latches.push(latch);
        }
        self.point_at_index(&args, idx, &accs)?;
        self.close_loops(latches)?;
        for (r, out) in args.reductions.iter().enumerate() {
            let v = self.b.build_load(accs[r], "")?;
            self.b.build_store(*out, v)?;
        }
        self.b.build_return(None)?;
        Ok(())
    }

    /// Opens a loop `for i in 0..bound` at the builder's position and leaves the builder
    /// in its body; [`Gen::close_loops`] ends it.
    fn open_loop(&self, f: FunctionValue<'ctx>, bound: IntValue<'ctx>) -> R<Latch<'ctx>> {
        let pre = self.b.get_insert_block().expect("positioned");
        let head = self.ctx.append_basic_block(f, "loop");
        self.b.build_unconditional_branch(head)?;
        self.b.position_at_end(head);
        let phi = self.b.build_phi(self.ctx.i64_type(), "")?;
        phi.add_incoming(&[(&self.i64c(0), pre)]);
        let index = phi.as_basic_value().into_int_value();
        let body = self.ctx.append_basic_block(f, "body");
        let exit = self.ctx.append_basic_block(f, "exit");
        let go = self
            .b
            .build_int_compare(IntPredicate::SLT, index, bound, "")?;
        self.b.build_conditional_branch(go, body, exit)?;
        self.b.position_at_end(body);
        Ok(Latch {
            phi,
            head,
            exit,
            index,
        })
    }

    /// Closes loops opened by [`Gen::open_loop`], innermost (last) first, leaving the
    /// builder after the outermost.
    fn close_loops(&self, latches: Vec<Latch<'ctx>>) -> R<()> {
        for l in latches.into_iter().rev() {
            let next = self.b.build_int_add(l.index, self.i64c(1), "")?;
            let here = self.b.get_insert_block().expect("positioned");
            l.phi.add_incoming(&[(&next, here)]);
            self.b.build_unconditional_branch(l.head)?;
            self.b.position_at_end(l.exit);
        }
        Ok(())
    }

    /// The two axes a line along `axis` does not run along, in order.
    pub(super) fn other_axes(axis: usize) -> [usize; 2] {
        match axis {
            0 => [1, 2],
            1 => [0, 2],
            _ => [0, 1],
        }
    }

    /// The PTX entry of a line kernel: one thread per line, threads along x covering the
    /// first other axis (so that lines along axis 1 or 2 read coalesced rows), along y the
    /// second.
    pub(super) fn line_ptx_entry(&mut self) -> R<()> {
        let line = self.k.line.expect("a line kernel");
        let name = crate::llvm::sampled_entry_name(self.k, self.p, self.sampling);
        let f = self.begin_kernel(&name)?;
        let body = self.ctx.append_basic_block(f, "line");
        let exit = self.ctx.append_basic_block(f, "exit");
        let args = self.unpack_params(f)?;
        let others = Self::other_axes(line.axis as usize);
        let mut start = [self.i64c(0); 3];
        let mut inside = self.ctx.bool_type().const_int(1, false);
        for (k, name) in ["x", "y"].iter().enumerate() {
            let a = others[k];
            start[a] = self.global_thread(name)?;
            let ok = self
                .b
                .build_int_compare(IntPredicate::ULT, start[a], args.n[a], "")?;
            inside = self.b.build_and(inside, ok, "")?;
        }
        self.b.build_conditional_branch(inside, body, exit)?;
        self.b.position_at_end(body);
        self.solve_line(&args, &line, start)?;
        self.b.build_unconditional_branch(exit)?;
        self.b.position_at_end(exit);
        self.b.build_return(None)?;
        Ok(())
    }

    /// The thread's index along `axis` (`x`, `y` or `z`) in the whole launch, as `i64`.
    fn global_thread(&self, axis: &str) -> R<IntValue<'ctx>> {
        let ctaid = self.sreg(&format!("ctaid.{axis}"))?;
        let ntid = self.sreg(&format!("ntid.{axis}"))?;
        let tid = self.sreg(&format!("tid.{axis}"))?;
        let g = self
            .b
            .build_int_nuw_add(self.b.build_int_nuw_mul(ctaid, ntid, "")?, tid, "")?;
        Ok(self.b.build_int_z_extend(g, self.ctx.i64_type(), "")?)
    }

    /// The PTX entry of a vertex kernel: thread `t` (along x) computes the vertex at
    /// position `t` of the set; block partials for reductions.
    pub(super) fn vertex_ptx_entry(&mut self) -> R<()> {
        let name = crate::llvm::sampled_entry_name(self.k, self.p, self.sampling);
        let f = self.begin_kernel(&name)?;
        let body = self.ctx.append_basic_block(f, "vertex");
        let join = self.ctx.append_basic_block(f, "join");
        let args = self.unpack_params(f)?;
        let t = self.global_thread("x")?;
        let slots = self.contribution_slots()?;
        let inside = self
            .b
            .build_int_compare(IntPredicate::ULT, t, args.n[0], "")?;
        self.b.build_conditional_branch(inside, body, join)?;
        self.b.position_at_end(body);
        let mesh = args.mesh.as_ref().ok_or_else(|| LlvmError::Invalid {
            kernel: self.k.name.clone(),
            message: "a vertex kernel without its mesh".into(),
        })?;
        let v = self.table(mesh.set, t)?;
        let zero = self.i64c(0);
        let idx = [v, zero, zero];
        self.point_at_index(&args, idx, &slots)?;
        self.end_at_join(f, &args, &slots, join)
    }

    /// The host entry of a line kernel: every line in turn.
    pub(super) fn host_lines(
        &self,
        f: FunctionValue<'ctx>,
        args: &EntryArgs<'ctx>,
        line: &LineSolve,
    ) -> R<()> {
        let others = Self::other_axes(line.axis as usize);
        let mut start = [self.i64c(0); 3];
        let mut latches = Vec::new();
        for &a in others.iter().rev() {
            let latch = self.open_loop(f, args.n[a])?;
            start[a] = latch.index;
            latches.push(latch);
        }
        self.solve_line(args, line, start)?;
        self.close_loops(latches)?;
        self.b.build_return(None)?;
        Ok(())
    }

    /// The Thomas algorithm along the line that starts at `start`: forward elimination
    /// (upper coefficients to the scratch, at `x * lines + line`; right-hand sides in place
    /// in the solved field), then back substitution. The same operations in the same order
    /// as the interpreter and the Rust back end.
    pub(super) fn solve_line(
        &self,
        args: &EntryArgs<'ctx>,
        line: &LineSolve,
        start: [IntValue<'ctx>; 3],
    ) -> R<()> {
        let b = &self.b;
        let f = self.current_function();
        let axis = line.axis as usize;
        let others = Self::other_axes(axis);
        let len = args.n[axis];
        let zero = self.i64c(0);
        let one = self.i64c(1);
        let lines = b.build_int_mul(args.n[others[0]], args.n[others[1]], "")?;
        let line_no = b.build_int_add(
            start[others[0]],
            b.build_int_mul(start[others[1]], args.n[others[0]], "")?,
            "",
        )?;
        let scratch = args.scratch.expect("line kernels take a scratch");
        let scratch_at = |x: IntValue<'ctx>| -> R<PointerValue<'ctx>> {
            let lin = b.build_int_add(b.build_int_mul(x, lines, "")?, line_no, "")?;
            Ok(unsafe { b.build_in_bounds_gep(scratch, &[lin], "")? })
        };
        let point = |x: IntValue<'ctx>| {
            let mut idx = start;
            idx[axis] = x;
            idx
        };
        let fa = &args.fields[line.field as usize];
        let u_at = |x: IntValue<'ctx>, dx: i32| -> R<PointerValue<'ctx>> {
            let base = self.base(fa, point(x))?;
            let mut off = [0; 3];
            off[axis] = dx;
            self.address(fa, base, off)
        };
        let eval = |x: IntValue<'ctx>| -> R<Vec<Option<BasicValueEnum<'ctx>>>> {
            self.with_point_at(args, point(x), |at| self.values(args, at, None))
        };
        let elem = self
            .ty(self.k.fields[line.field as usize].elem)
            .into_float_type();
        let solve = self.ctx.append_basic_block(f, "solve");
        let done = self.ctx.append_basic_block(f, "line_done");
        let nonempty = b.build_int_compare(IntPredicate::SGT, len, zero, "")?;
        let check = self.ctx.append_basic_block(f, "line_mask");
        b.build_conditional_branch(nonempty, check, done)?;
        b.position_at_end(check);
        match line.mask {
            Some(m) => {
                let vals = eval(zero)?;
                let on = vals[m as usize].expect("mask is live").into_int_value();
                b.build_conditional_branch(on, solve, done)?;
            }
            None => {
                b.build_unconditional_branch(solve)?;
            }
        }
        b.position_at_end(solve);
        let last = b.build_int_sub(len, one, "")?;
        let before = b.build_load(u_at(zero, -1)?, "")?.into_float_value();
        let after = b.build_load(u_at(last, 1)?, "")?.into_float_value();
        let pre = b.get_insert_block().expect("positioned");
        let head = self.ctx.append_basic_block(f, "forward");
        b.build_unconditional_branch(head)?;
        b.position_at_end(head);
        let x_phi = b.build_phi(self.ctx.i64_type(), "x")?;
        let cp_phi = b.build_phi(elem, "cp")?;
        let dp_phi = b.build_phi(elem, "dp")?;
        let undef = elem.get_undef();
        x_phi.add_incoming(&[(&zero, pre)]);
        cp_phi.add_incoming(&[(&undef, pre)]);
        dp_phi.add_incoming(&[(&undef, pre)]);
        let x = x_phi.as_basic_value().into_int_value();
        let (cp_prev, dp_prev) = (
            cp_phi.as_basic_value().into_float_value(),
            dp_phi.as_basic_value().into_float_value(),
        );
        let vals = eval(x)?;
        let get = |n: u32| {
            vals[n as usize]
                .expect("coefficient is live")
                .into_float_value()
        };
        let (a, bd, c, d) = (
            get(line.lower),
            get(line.diag),
            get(line.upper),
            get(line.rhs),
        );
        let is_first = b.build_int_compare(IntPredicate::EQ, x, zero, "")?;
        let is_last = b.build_int_compare(IntPredicate::EQ, x, last, "")?;
        let d_first = b.build_float_sub(d, b.build_float_mul(a, before, "")?, "")?;
        let d = b.build_select(is_first, d_first, d, "")?.into_float_value();
        let d_last = b.build_float_sub(d, b.build_float_mul(c, after, "")?, "")?;
        let d = b.build_select(is_last, d_last, d, "")?.into_float_value();
        let denom_rest = b.build_float_sub(bd, b.build_float_mul(a, cp_prev, "")?, "")?;
        let denom = b
            .build_select(is_first, bd, denom_rest, "")?
            .into_float_value();
        let d_rest = b.build_float_sub(d, b.build_float_mul(a, dp_prev, "")?, "")?;
        let d = b.build_select(is_first, d, d_rest, "")?.into_float_value();
        let cp = b.build_float_div(c, denom, "")?;
        let dp = b.build_float_div(d, denom, "")?;
        b.build_store(scratch_at(x)?, cp)?;
        b.build_store(u_at(x, 0)?, dp)?;
        let x_next = b.build_int_add(x, one, "")?;
        let here = b.get_insert_block().expect("positioned");
        x_phi.add_incoming(&[(&x_next, here)]);
        cp_phi.add_incoming(&[(&cp, here)]);
        dp_phi.add_incoming(&[(&dp, here)]);
        let more = b.build_int_compare(IntPredicate::SLT, x_next, len, "")?;
        let back = self.ctx.append_basic_block(f, "backward");
        let back_body = self.ctx.append_basic_block(f, "backward_step");
        b.build_conditional_branch(more, head, back)?;
        // Back substitution: u[x] = dp[x] - cp[x] * u[x + 1], for x = len - 2 down to 0.
        b.position_at_end(back);
        let go = b.build_int_compare(IntPredicate::SGT, last, zero, "")?;
        let y0 = b.build_int_sub(last, one, "")?;
        let entry_back = b.get_insert_block().expect("positioned");
        b.build_conditional_branch(go, back_body, done)?;
        b.position_at_end(back_body);
        let y_phi = b.build_phi(self.ctx.i64_type(), "y")?;
        let next_phi = b.build_phi(elem, "next")?;
        y_phi.add_incoming(&[(&y0, entry_back)]);
        next_phi.add_incoming(&[(&dp, entry_back)]);
        let y = y_phi.as_basic_value().into_int_value();
        let dpy = b.build_load(u_at(y, 0)?, "")?.into_float_value();
        let cpy = b.build_load(scratch_at(y)?, "")?.into_float_value();
        let next = next_phi.as_basic_value().into_float_value();
        let uy = b.build_float_sub(dpy, b.build_float_mul(cpy, next, "")?, "")?;
        b.build_store(u_at(y, 0)?, uy)?;
        let y_next = b.build_int_sub(y, one, "")?;
        let here = b.get_insert_block().expect("positioned");
        y_phi.add_incoming(&[(&y_next, here)]);
        next_phi.add_incoming(&[(&uy, here)]);
        let more = b.build_int_compare(IntPredicate::SGE, y_next, zero, "")?;
        b.build_conditional_branch(more, back_body, done)?;
        b.position_at_end(done);
        Ok(())
    }
}

/// A host loop opened by `Gen::open_loop`: its index's phi, header, exit and index.
struct Latch<'ctx> {
    phi: inkwell::values::PhiValue<'ctx>,
    head: inkwell::basic_block::BasicBlock<'ctx>,
    exit: inkwell::basic_block::BasicBlock<'ctx>,
    index: IntValue<'ctx>,
}
