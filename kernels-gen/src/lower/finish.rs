//! Finishing a lowered kernel: its stores (masked where a path leaves a field alone, by
//! colour for red-black kernels), the line solve of a line kernel, and each field's reach
//! from the loads that stay live.

use super::*;

impl Lowerer<'_> {
    pub(super) fn finish(mut self, f: &FnDef) -> Result<Kernel> {
        let mut stores = Vec::new();
        for i in 0..self.fields.len() {
            let field = &self.fields[i];
            match (field.access, self.state.outputs.get(&(i as u32)).copied()) {
                (Access::In, _) => {}
                (Access::Out, Some(OutState::Written(n))) => stores.push(Store { field: i as u32, value: n, mask: None }),
                (Access::Out, Some(OutState::Partial(_, at))) => return err(at, format!("output `{}` is not written on every path through this `if`", field.name), Some("assign it in every branch (add an `else`), or assign a default before the `if`; an `InOut<T>` field may be left unchanged")),
                (Access::Out, _) => return err(self.field_spans[i], format!("output `{}` is never written", field.name), Some(&format!("assign it: `{} = value;`", field.name))),
                (Access::InOut, Some(OutState::Written(v))) => {
                    let (elem, name) = (field.elem.value(), field.name.clone());
                    let old = self.b.add(Node::Load { field: i as u32, offset: [0; 3] }, elem);
                    match self.peel_store(v, old) {
                        Some((mask, value)) => stores.push(Store { field: i as u32, value, mask }),
                        None => return err(self.field_spans[i], format!("in-place field `{name}` is never written"), Some("declare it `In<T>` if the kernel only reads it")),
                    }
                }
                (Access::InOut, _) => unreachable!("in-place fields start written"),
            }
        }
        let red_black = match &f.attrs.red_black {
            None => None,
            Some(id) => {
                let Some(s) = self.scalars.iter().position(|p| p.name == id.name) else {
                    return err(
                        id.span,
                        format!("`red_black = {}` names no scalar parameter", id.name),
                        Some(&format!("declare the colour parameter: `{}: i64`", id.name)),
                    );
                };
                if self.scalars[s].ty != Ty::Int {
                    return err(id.span, format!("the colour parameter `{}` must be an `i64`, not `{}`", id.name, self.scalars[s].ty), Some("declare it `i64`: 0 updates the points with an even index sum, 1 the odd"));
                }
                let parity = self.colour_parity(s as u32);
                for st in &mut stores {
                    st.mask = Some(match st.mask {
                        Some(m) => self.b.binary(Binary::And, m, parity),
                        None => parity,
                    });
                }
                Some(s as u32)
            }
        };
        let line = match self.line_axis {
            Some(axis) => Some(self.line_solve(axis, f, &mut stores)?),
            None => None,
        };
        let mut contributions = Vec::new();
        for (i, r) in self.reductions.iter().enumerate() {
            match self.state.contributions.get(&(i as u32)) {
                Some(&n) => contributions.push((i as u32, n)),
                None => {
                    return err(
                        self.reduction_spans[i],
                        format!("reduction `{}` never receives a value", r.name),
                        Some(&format!("call `{}.reduce(value);` in the body", r.name)),
                    )
                }
            }
        }
        if stores.is_empty() && contributions.is_empty() && line.is_none() {
            return err(
                f.name.span,
                format!(
                    "kernel `{}` has no effect: it has no outputs or reductions",
                    f.name.name
                ),
                Some("add an `Out<T>` field or a `Sum<T>`/`Max<T>`/`Min<T>` reduction"),
            );
        }
        let (nodes, types) = self.b.finish();
        let mut kernel = Kernel {
            name: f.name.name.clone(),
            dims: self.dims,
            fields: self.fields,
            scalars: self.scalars,
            reductions: self.reductions,
            sampled: self.sampled,
            param_order: self.param_order,
            nodes,
            types,
            stores,
            contributions,
            line,
            red_black,
            mesh: self.mesh,
            loops: self.loops,
            consts: self.consts,
            stages: self.stages,
        };
        recompute_reach(&mut kernel);
        // A `stage(..)` call's values are computed together over one box around the tile,
        // which may move a value's reads further than its own reads do.
        let limit = self.declared_halo.map_or(MAX_OFFSET as u32, |h| h);
        let staged = kernel.is_staged();
        if let Some(far) = kernel.fields.iter().find(|p| staged && p.halo() > limit) {
            return err(f.name.span, format!("the staged values of `{}` reach field `{}` {} points away, beyond {}", f.name.name, far.name, far.halo(), match self.declared_halo { Some(h) => format!("the declared halo ({h})"), None => format!("the largest supported offset ({MAX_OFFSET})") }), Some("the values of one `stage(..)` call are computed over the box of all their reads: read them closer, stage them in separate calls, or split the kernel"));
        }
        if let Some((_, at)) = self.tridiagonal {
            let live = kernel.live_nodes();
            if live
                .iter()
                .any(|&n| matches!(kernel.nodes[n as usize], Node::LineSolution(_)))
            {
                return err(at, "the result of `tridiagonal` is used in an expression", Some("assign it to the in-place field as it is: `u = tridiagonal(lower, diag, upper, rhs);`"));
            }
        }
        Ok(kernel)
    }

    /// Splits the final value of an in-place field into (mask, value): the branches that
    /// keep the old value `old` become a mask. `None` when no path writes the field.
    pub(super) fn peel_store(
        &mut self,
        v: NodeId,
        old: NodeId,
    ) -> Option<(Option<NodeId>, NodeId)> {
        if v == old {
            return None;
        }
        let Node::Select(c, a, b) = self.b.node(v) else {
            return Some((None, v));
        };
        match (self.peel_store(a, old), self.peel_store(b, old)) {
            (None, None) => None,
            (Some((m, x)), None) => Some((Some(self.and_mask(c, m)), x)),
            (None, Some((m, y))) => {
                let not_c = self.b.unary(Unary::Not, c);
                Some((Some(self.and_mask(not_c, m)), y))
            }
            (Some((ma, x)), Some((mb, y))) => {
                let value = self.b.select(c, x, y);
                let mask = match (ma, mb) {
                    (None, None) => None,
                    (ma, mb) => {
                        let yes = self.b.boolean(true);
                        Some(self.b.select(c, ma.unwrap_or(yes), mb.unwrap_or(yes)))
                    }
                };
                Some((mask, value))
            }
        }
    }

    pub(super) fn and_mask(&mut self, c: NodeId, m: Option<NodeId>) -> NodeId {
        match m {
            Some(m) => self.b.binary(Binary::And, c, m),
            None => c,
        }
    }

    /// `(sum of the point's indices) % 2 == colour`, over the axes a line kernel's lines do
    /// not run along.
    pub(super) fn colour_parity(&mut self, colour: u32) -> NodeId {
        let mut sum = None;
        for a in 0..self.dims {
            if Some(a) == self.line_axis {
                continue;
            }
            let i = self.b.add(Node::Index(a), Ty::Int);
            sum = Some(match sum {
                Some(s) => self.b.binary(Binary::Add, s, i),
                None => i,
            });
        }
        let sum = sum.unwrap_or_else(|| self.b.int(0));
        let two = self.b.int(2);
        let parity = self.b.binary(Binary::Rem, sum, two);
        let c = self.b.add(Node::Scalar(colour), Ty::Int);
        self.b.binary(Binary::Compare(Comparison::Eq), parity, c)
    }

    /// Turns the one store of a line kernel, the result of `tridiagonal`, into its solve.
    pub(super) fn line_solve(
        &mut self,
        axis: u8,
        f: &FnDef,
        stores: &mut Vec<Store>,
    ) -> Result<LineSolve> {
        if let Some(&span) = self.reduction_spans.first() {
            return err(
                span,
                "a line kernel cannot have reductions",
                Some("compute the reduction in a separate point kernel"),
            );
        }
        let Some((coeffs, at)) = self.tridiagonal else {
            return err(
                f.name.span,
                "this line kernel never calls `tridiagonal`",
                Some("assign the line's unknowns: `u = tridiagonal(lower, diag, upper, rhs);`"),
            );
        };
        let mut solve = None;
        for st in stores.iter() {
            let field = &self.fields[st.field as usize];
            let is_solution = matches!(self.b.node(st.value), Node::LineSolution(_));
            if !is_solution && self.depends_on_solution(st.value) {
                return err(at, "the result of `tridiagonal` is used in an expression", Some("assign it to the in-place field as it is: `u = tridiagonal(lower, diag, upper, rhs);`"));
            }
            if !is_solution {
                return err(self.field_spans[st.field as usize], format!("a line kernel writes only the result of `tridiagonal`, but `{}` gets another value", field.name), Some("compute other outputs in a separate point kernel"));
            }
            if field.access != Access::InOut {
                return err(self.field_spans[st.field as usize], format!("the solution of a line kernel goes to an in-place field, and `{}` is `Out<T>`", field.name), Some("declare it `InOut<T>`: its halo holds the values beyond each line's ends"));
            }
            if solve.is_some() {
                return err(
                    at,
                    "the result of `tridiagonal` is assigned to two fields",
                    Some("assign it to one `InOut<T>` field"),
                );
            }
            let ty = self.b.ty(coeffs[0]);
            if ty != field.elem {
                return err(
                    at,
                    format!(
                        "`tridiagonal` solves in `{ty}` but `{}` holds `{}`",
                        field.name, field.elem
                    ),
                    Some("convert the coefficients with `as`"),
                );
            }
            solve = Some((st.field, st.mask));
        }
        let Some((field, mask)) = solve else {
            return err(
                at,
                "the result of `tridiagonal` is never assigned",
                Some("assign it: `u = tridiagonal(lower, diag, upper, rhs);`"),
            );
        };
        if let Some(m) = mask {
            if !self.is_line_uniform(m, axis) {
                return err(at, "this `tridiagonal` is under a condition that varies along the line", Some("a line is solved whole or not at all: make the condition depend only on scalars and on the indices of the other axes"));
            }
        }
        stores.clear();
        let [lower, diag, upper, rhs] = coeffs;
        Ok(LineSolve {
            axis,
            field,
            lower,
            diag,
            upper,
            rhs,
            mask,
        })
    }

    /// Whether node `n` uses the unknown of the line solve.
    pub(super) fn depends_on_solution(&self, n: NodeId) -> bool {
        let mut stack = vec![n];
        while let Some(m) = stack.pop() {
            match self.b.node(m) {
                Node::LineSolution(_) => return true,
                node => stack.extend(crate::ir::operands(&node)),
            }
        }
        false
    }

    /// Whether node `n` has the same value at every point of a line along `axis`.
    pub(super) fn is_line_uniform(&self, n: NodeId, axis: u8) -> bool {
        let mut stack = vec![n];
        while let Some(m) = stack.pop() {
            match self.b.node(m) {
                Node::Load { .. } | Node::LineSolution(_) => return false,
                Node::Index(a) if a == axis => return false,
                node => stack.extend(crate::ir::operands(&node)),
            }
        }
        true
    }
}

/// Recomputes each field's reach from the loads that are live (dead reads need no halo),
/// and each stage's from its live reads and the stages that read it. A field read by a
/// stage reaches that read's offset moved to each corner of the box of offsets its
/// `stage(..)` call's values are read at ([`crate::ir::StageGroup`]): a staging back end
/// computes them together over their tile and that box.
pub(super) fn recompute_reach(k: &mut Kernel) {
    for s in &mut k.stages {
        s.reach_lo = [0; 3];
        s.reach_hi = [0; 3];
    }
    for n in k.live_nodes() {
        if let Node::Staged { stage, offset } = k.nodes[n as usize] {
            let s = &mut k.stages[stage as usize];
            for (a, &o) in offset.iter().enumerate() {
                s.reach_lo[a] = s.reach_lo[a].min(o);
                s.reach_hi[a] = s.reach_hi[a].max(o);
            }
        }
    }
    // A stage read by another is read over the box that one's `stage(..)` call is
    // computed over (the union of its values' reaches) moved by the read's offset. Calls
    // read only earlier calls: one pass from the last call covers every chain, each
    // call's box final before it is passed on.
    let read = k.stages_read();
    let mut calls: Vec<u32> = k.stages.iter().map(|s| s.call).collect();
    calls.dedup();
    for &call in calls.iter().rev() {
        let parts: Vec<usize> = (0..k.stages.len())
            .filter(|&p| k.stages[p].call == call && read[p])
            .collect();
        let (mut lo, mut hi) = ([0; 3], [0; 3]);
        for &p in &parts {
            for a in 0..3 {
                lo[a] = lo[a].min(k.stages[p].reach_lo[a]);
                hi[a] = hi[a].max(k.stages[p].reach_hi[a]);
            }
        }
        for &p in &parts {
            for (t, o) in k.staged_reads(&[k.stages[p].value]) {
                let t = &mut k.stages[t as usize];
                for a in 0..3 {
                    t.reach_lo[a] = t.reach_lo[a].min(lo[a] + o[a]);
                    t.reach_hi[a] = t.reach_hi[a].max(hi[a] + o[a]);
                }
            }
        }
    }
    for f in &mut k.fields {
        f.reach_lo = [0; 3];
        f.reach_hi = [0; 3];
    }
    let mut loads: Vec<Node> = k
        .live_nodes()
        .into_iter()
        .map(|n| k.nodes[n as usize])
        .collect();
    if let Some(layout) = k.stage_layout() {
        for group in &layout.groups {
            let roots: Vec<NodeId> = group
                .stages
                .iter()
                .map(|&i| k.stages[layout.stages[i].0 as usize].value)
                .collect();
            for n in k.reachable(&roots) {
                if let Node::Load { field, offset } = k.nodes[n as usize] {
                    for corner in [group.lo, group.hi] {
                        let offset = [0, 1, 2].map(|a| offset[a] + corner[a]);
                        loads.push(Node::Load { field, offset });
                    }
                }
            }
        }
    }
    for node in loads {
        if let Node::Load { field, offset } = node {
            let f = &mut k.fields[field as usize];
            for (a, &o) in offset.iter().enumerate() {
                f.reach_lo[a] = f.reach_lo[a].min(o);
                f.reach_hi[a] = f.reach_hi[a].max(o);
            }
        }
    }
    // A line solve reads the values just beyond each line's ends.
    if let Some(l) = k.line {
        let f = &mut k.fields[l.field as usize];
        let a = l.axis as usize;
        f.reach_lo[a] = f.reach_lo[a].min(-1);
        f.reach_hi[a] = f.reach_hi[a].max(1);
    }
}
