//! The code of one point: the IR nodes' values in order, arms computed under branches,
//! runtime loops over a vertex's neighbours, and the addresses of the point's reads.

use super::*;
use inkwell::basic_block::BasicBlock;
use inkwell::values::PhiValue;

impl<'a, 'ctx> Gen<'a, 'ctx> {
    /// Emits the point computation at `at.idx`: loads, arithmetic and stores. Returns each
    /// reduction's contribution.
    ///
    /// Addresses are taken from `at.bases` (one per field, at the thread's first point)
    /// shifted by `at.shift`. Loads found in `memo` are reused: the points of one thread
    /// share the values their stencils have in common. Stores go to `pending` when given
    /// (the caller emits them), else out at once.
    pub(super) fn point(
        &self,
        args: &EntryArgs<'ctx>,
        at: &PointAt<'ctx, '_>,
        memo: Option<&mut LoadMemo<'ctx>>,
        pending: Option<&mut PendingStores<'ctx>>,
    ) -> R<Vec<(u32, BasicValueEnum<'ctx>)>> {
        let k = self.k;
        let shifted = |off: [i32; 3]| [0, 1, 2].map(|a| off[a] + at.shift[a]);
        let vals = self.values(args, at, memo)?;
        let get = |n: u32| vals[n as usize].expect("operands are lowered before their users");
        // The value stored at the point, as the field holds it.
        let store = |field: u32, value: BasicValueEnum<'ctx>| -> R<()> {
            let fa = &args.fields[field as usize];
            let ptr = self.address(fa, at.bases[field as usize], shifted([0; 3]))?;
            let value = self.narrowed_to_memory(value, k.fields[field as usize].elem)?;
            self.b.build_store(ptr, value)?;
            Ok(())
        };
        for st in &k.stores {
            let value = get(st.value);
            match (st.mask, &pending) {
                (None, Some(_)) => {}
                (None, None) => {
                    store(st.field, value)?;
                }
                (Some(m), _) => {
                    // A masked point: store only where the mask holds.
                    let f = self.current_function();
                    let yes = self.ctx.append_basic_block(f, "masked_store");
                    let next = self.ctx.append_basic_block(f, "after_store");
                    self.b
                        .build_conditional_branch(get(m).into_int_value(), yes, next)?;
                    self.b.position_at_end(yes);
                    store(st.field, value)?;
                    self.b.build_unconditional_branch(next)?;
                    self.b.position_at_end(next);
                }
            }
        }
        if let Some(list) = pending {
            for st in k.stores.iter().filter(|st| st.mask.is_none()) {
                let value =
                    self.narrowed_to_memory(get(st.value), k.fields[st.field as usize].elem)?;
                list.push((st.field, shifted([0; 3]), value));
            }
        }
        Ok(k.contributions.iter().map(|&(r, n)| (r, get(n))).collect())
    }

    /// The function the builder is positioned in.
    pub(super) fn current_function(&self) -> FunctionValue<'ctx> {
        self.b
            .get_insert_block()
            .and_then(|bb| bb.get_parent())
            .expect("the builder is positioned inside a function")
    }

    /// The value of every live node at the point `at` (loads reused from `memo`).
    pub(super) fn values(
        &self,
        args: &EntryArgs<'ctx>,
        at: &PointAt<'ctx, '_>,
        mut memo: Option<&mut LoadMemo<'ctx>>,
    ) -> R<Vec<Option<BasicValueEnum<'ctx>>>> {
        let k = self.k;
        let mut vals: Vec<Option<BasicValueEnum<'ctx>>> = vec![None; k.nodes.len()];
        if let Some(plan) = &self.branches {
            self.guarded_values(args, at, &mut memo, &mut vals, plan, &plan.top)?;
            return Ok(vals);
        }
        // Each run-time loop's carried values after its last iteration.
        let mut results: Vec<Vec<BasicValueEnum<'ctx>>> = vec![Vec::new(); k.loops.len()];
        for step in k.schedule(&k.live_nodes()) {
            match step {
                Step::Loop { index, body } => {
                    results[index as usize] =
                        self.runtime_loop(args, at, index, &body, &mut vals)?;
                }
                Step::Node(n) => {
                    let v = match k.nodes[n as usize] {
                        Node::LoopResult(l, c) => results[l as usize][c as usize],
                        _ => self.node_value(args, at, &mut memo, &vals, n)?,
                    };
                    vals[n as usize] = Some(v);
                }
            }
        }
        Ok(vals)
    }

    /// Computes `units` of the branch plan `plan` into `vals`: nodes in place, branches
    /// as a conditional block per arm joined by a phi per select.
    pub(super) fn guarded_values(
        &self,
        args: &EntryArgs<'ctx>,
        at: &PointAt<'ctx, '_>,
        memo: &mut Option<&mut LoadMemo<'ctx>>,
        vals: &mut Vec<Option<BasicValueEnum<'ctx>>>,
        plan: &Plan,
        units: &[Unit],
    ) -> R<()> {
        let value = |vals: &[Option<BasicValueEnum<'ctx>>], n: NodeId| {
            vals[n as usize].expect("operands are lowered before their users")
        };
        for unit in units {
            match *unit {
                Unit::Node(n) => {
                    let v = self.node_value(args, at, memo, vals, n)?;
                    vals[n as usize] = Some(v);
                }
                Unit::Branch(i) => {
                    let branch = &plan.branches[i];
                    let f = self.current_function();
                    let arms = [
                        self.ctx.append_basic_block(f, "then"),
                        self.ctx.append_basic_block(f, "else"),
                    ];
                    let join = self.ctx.append_basic_block(f, "join");
                    let cond = value(vals, branch.cond).into_int_value();
                    self.b.build_conditional_branch(cond, arms[0], arms[1])?;
                    let mut ends = Vec::with_capacity(2);
                    self.branch_depth.set(self.branch_depth.get() + 1);
                    for (block, arm) in arms.into_iter().zip(&branch.arms) {
                        self.b.position_at_end(block);
                        self.guarded_values(args, at, memo, vals, plan, arm)?;
                        ends.push(self.b.get_insert_block().expect("positioned"));
                        self.b.build_unconditional_branch(join)?;
                    }
                    self.branch_depth.set(self.branch_depth.get() - 1);
                    self.b.position_at_end(join);
                    for &s in &branch.selects {
                        let Node::Select(_, a, b) = self.k.nodes[s as usize] else {
                            unreachable!("a branch joins selects only")
                        };
                        let (a, b) = (value(vals, a), value(vals, b));
                        let phi = self.b.build_phi(a.get_type(), "")?;
                        phi.add_incoming(&[(&a, ends[0]), (&b, ends[1])]);
                        vals[s as usize] = Some(phi.as_basic_value());
                    }
                }
            }
        }
        Ok(())
    }

    /// Opens a loop named `name` at the builder's position: the blocks `name` (its head),
    /// `name_body` and `name_done` (after it), a branch into the head, and in the head the
    /// loop's variable `var` (a phi), `start` on entry. The builder is left in the head; the
    /// caller adds the variable's next value, branches to the body or out, and closes the
    /// body with a branch back to the head.
    pub(super) fn open_loop_head(
        &self,
        f: FunctionValue<'ctx>,
        name: &str,
        start: IntValue<'ctx>,
        var: &str,
    ) -> R<LoopHead<'ctx>> {
        let pre = self.b.get_insert_block().expect("positioned");
        let head = self.ctx.append_basic_block(f, name);
        let body = self.ctx.append_basic_block(f, &format!("{name}_body"));
        let exit = self.ctx.append_basic_block(f, &format!("{name}_done"));
        self.b.build_unconditional_branch(head)?;
        self.b.position_at_end(head);
        let var = self.b.build_phi(start.get_type(), var)?;
        var.add_incoming(&[(&start, pre)]);
        Ok(LoopHead {
            pre,
            head,
            body,
            exit,
            var,
        })
    }

    /// Run-time loop `l` of a vertex kernel: a phi per carried value in the loop header;
    /// the nodes of an iteration (`body`) computed in the loop's body. Returns each carried
    /// value's value after the last iteration.
    pub(super) fn runtime_loop(
        &self,
        args: &EntryArgs<'ctx>,
        at: &PointAt<'ctx, '_>,
        l: u32,
        body_nodes: &[u32],
        vals: &mut [Option<BasicValueEnum<'ctx>>],
    ) -> R<Vec<BasicValueEnum<'ctx>>> {
        let k = self.k;
        let lp = &k.loops[l as usize];
        let mesh = args.mesh.as_ref().ok_or_else(|| LlvmError::Invalid {
            kernel: k.name.clone(),
            message: "a loop over the mesh in a kernel without a mesh".into(),
        })?;
        let starts = match lp.over {
            Around::Neighbours => mesh.neighbour_start,
            Around::Triangles => mesh.triangle_start,
        };
        let v = at.idx[0];
        let first = self.table(starts, v)?;
        let after = self.b.build_int_nuw_add(v, self.i64c(1), "")?;
        let end = self.table(starts, after)?;
        let LoopHead {
            pre,
            head,
            body,
            exit,
            var: pos,
        } = self.open_loop_head(self.current_function(), "mesh_loop", first, "pos")?;
        let get = |vals: &[Option<BasicValueEnum<'ctx>>], n: u32| {
            vals[n as usize].expect("operands are lowered before their users")
        };
        let mut phis = Vec::new();
        for &init in &lp.init {
            let phi = self
                .b
                .build_phi(self.ty(k.types[init as usize]), "carried")?;
            phi.add_incoming(&[(&get(vals, init), pre)]);
            phis.push(phi);
        }
        let p = pos.as_basic_value().into_int_value();
        let mut go = self.b.build_int_compare(IntPredicate::ULT, p, end, "")?;
        // After a `break` the thread leaves the loop (the warp, once all its threads have).
        if let Some(c) = lp.stops_when {
            let alive = phis[c as usize].as_basic_value().into_int_value();
            go = self.b.build_and(go, alive, "")?;
        }
        self.b.build_conditional_branch(go, body, exit)?;
        self.b.position_at_end(body);
        for &n in body_nodes {
            let value = match k.nodes[n as usize] {
                Node::LoopPos(_) => p.into(),
                Node::Carried(_, c) => phis[c as usize].as_basic_value(),
                _ => self.node_value(args, at, &mut None, vals, n)?,
            };
            vals[n as usize] = Some(value);
        }
        let next_pos = self.b.build_int_nuw_add(p, self.i64c(1), "")?;
        let latch = self.b.get_insert_block().expect("positioned");
        pos.add_incoming(&[(&next_pos, latch)]);
        for (phi, &next) in phis.iter().zip(&lp.next) {
            phi.add_incoming(&[(&get(vals, next), latch)]);
        }
        self.b.build_unconditional_branch(head)?;
        self.b.position_at_end(exit);
        Ok(phis.iter().map(|phi| phi.as_basic_value()).collect())
    }

    /// Entry `i` (an `i64`) of a `u32` mesh table, widened to `i64`.
    pub(super) fn table(&self, table: PointerValue<'ctx>, i: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        // SAFETY of the GEP: positions and vertex numbers come from the tables, which the
        // run time checked when it built them.
        let ptr = unsafe { self.b.build_in_bounds_gep(table, &[i], "")? };
        let i32t = self.ctx.i32_type();
        let ldg = self.intrinsic(
            "llvm.nvvm.ldg.global.i",
            &[i32t.into(), ptr.get_type().into()],
        )?;
        let align = i32t.const_int(4, false);
        let v = self
            .call(ldg, &[ptr.into(), align.into()])?
            .into_int_value();
        Ok(self.b.build_int_z_extend(v, self.ctx.i64_type(), "")?)
    }

    /// The value of live node `n` at the point `at`, its operands in `vals`.
    pub(super) fn node_value(
        &self,
        args: &EntryArgs<'ctx>,
        at: &PointAt<'ctx, '_>,
        memo: &mut Option<&mut LoadMemo<'ctx>>,
        vals: &[Option<BasicValueEnum<'ctx>>],
        n: u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let k = self.k;
        let idx = at.idx;
        let get = |vals: &[Option<BasicValueEnum<'ctx>>], n: u32| {
            vals[n as usize].expect("operands are lowered before their users")
        };
        let ty = k.types[n as usize];
        let v: BasicValueEnum<'ctx> = match k.nodes[n as usize] {
            Node::RealConst(bits) => self.real_const(ty, f64::from_bits(bits)),
            Node::IntConst(x) => self.i64c(x).into(),
            Node::BoolConst(x) => self.ctx.bool_type().const_int(x as u64, false).into(),
            Node::Scalar(s) => args.scalars[s as usize],
            Node::Index(a) => idx[a as usize].into(),
            Node::Extent(a) => args.n[a as usize].into(),
            Node::Load { field, offset } => {
                let map = k.fields[field as usize].map;
                let key = (field, map.tile_offset(at.shift, offset));
                match memo.as_ref().and_then(|m| m.get(&key)) {
                    Some(&v) => v,
                    None => {
                        let fa = &args.fields[field as usize];
                        let ptr = self.address(fa, at.bases[field as usize], key.1)?;
                        let v = self.read(fa, ptr, k.fields[field as usize].elem)?;
                        if let Some(m) = memo.as_mut().filter(|_| self.branch_depth.get() == 0) {
                            m.insert(key, v);
                        }
                        v
                    }
                }
            }
            Node::Unary(op, a) => self.unary(op, get(vals, a), ty)?,
            Node::Binary(op, a, c) => {
                let operand_ty = k.types[a as usize];
                self.binary(op, get(vals, a), get(vals, c), operand_ty)?
            }
            Node::Fma(a, c, d) => {
                let f = self.intrinsic("llvm.fma", &[self.ty(ty)])?;
                self.call(f, &[get(vals, a), get(vals, c), get(vals, d)])?
            }
            Node::Select(c, a, d) => self.b.build_select(
                get(vals, c).into_int_value(),
                get(vals, a),
                get(vals, d),
                "",
            )?,
            Node::Cast(a) => self.cast(get(vals, a), k.types[a as usize], ty)?,
            Node::Staged { stage, offset } => self.staged_value(stage, offset, ty)?,
            Node::LineSolution(_) => {
                return Err(LlvmError::Invalid {
                    kernel: k.name.clone(),
                    message: "a line solution is live outside its solve".into(),
                })
            }
            Node::Gather { field, vertex } => {
                let fa = &args.fields[field as usize];
                let i = get(vals, vertex).into_int_value();
                // SAFETY of the GEP: vertex numbers come from the mesh, whose tables
                // the run time checked against the fields' length.
                let ptr = unsafe { self.b.build_in_bounds_gep(fa.ptr, &[i], "")? };
                self.read(fa, ptr, k.fields[field as usize].elem)?
            }
            Node::Sample { grid, x, y } => {
                self.sample(&args.sampled[grid as usize], get(vals, x), get(vals, y), ty)?
            }
            Node::Topo { table, pos } => {
                let mesh = args.mesh.as_ref().ok_or_else(|| LlvmError::Invalid {
                    kernel: k.name.clone(),
                    message: "a mesh table read in a kernel without a mesh".into(),
                })?;
                let p = get(vals, pos).into_int_value();
                let (t, i) = match table {
                    Topo::Neighbour => (mesh.neighbours, p),
                    Topo::Corner1 | Topo::Corner2 => {
                        let two = self.b.build_int_nuw_mul(p, self.i64c(2), "")?;
                        let k = if table == Topo::Corner1 { 0 } else { 1 };
                        (
                            mesh.corners,
                            self.b.build_int_nuw_add(two, self.i64c(k), "")?,
                        )
                    }
                };
                self.table(t, i)?.into()
            }
            Node::LoopPos(_) | Node::Carried(..) | Node::LoopResult(..) => {
                return Err(LlvmError::Invalid {
                    kernel: k.name.clone(),
                    message: "a loop value outside its loop".into(),
                })
            }
        };
        Ok(v)
    }
}

/// The blocks and the variable of a loop that [`Gen::open_loop_head`] opened.
pub(super) struct LoopHead<'ctx> {
    /// The block the loop is entered from.
    pub pre: BasicBlock<'ctx>,
    /// The loop's head, where the builder is left (the latch branches back to it).
    pub head: BasicBlock<'ctx>,
    /// The loop's body, empty.
    pub body: BasicBlock<'ctx>,
    /// The block after the loop, empty.
    pub exit: BasicBlock<'ctx>,
    /// The loop's variable: its start comes from `pre`, the caller adds its next value.
    pub var: PhiValue<'ctx>,
}
