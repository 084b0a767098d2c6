//! Lowering of a kernel to an LLVM module: the point computation and the two entries.

use super::math::{Accuracy, MathLib, Trig};
use super::{LlvmError, Target};
use crate::branches::{Plan, Unit};
use crate::ir::{
    Access, Around, Binary, IndexMap, Kernel, LineSolve, Node, NodeId, ParamKind, Precision,
    ReduceOp, Step, Topo, Ty, Unary,
};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
#[allow(deprecated)]
use inkwell::passes::{PassManager, PassManagerBuilder};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, CallableValue, FloatValue, FunctionValue, IntValue,
    PointerValue,
};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate, OptimizationLevel};
use std::collections::HashMap;

mod blocks;
mod host;
mod ops;
mod reduce;
mod sample;
pub use sample::Sampling;
use sample::{SampledArgs, SAMPLED_PARAMS};

/// Largest thread block the reduction's shared-memory buffer supports.
pub const MAX_BLOCK_THREADS: u32 = 1024;

impl From<BuilderError> for LlvmError {
    fn from(e: BuilderError) -> Self {
        LlvmError::Invalid {
            kernel: String::new(),
            message: e.to_string(),
        }
    }
}

type R<T> = Result<T, LlvmError>;

/// Values loaded so far by one thread, by (field, offset from the thread's first point).
type LoadMemo<'ctx> = HashMap<(u32, [i32; 3]), BasicValueEnum<'ctx>>;

/// Stores a thread defers so that neighbouring values can go out as one vector store:
/// (field, offset from the thread's first point, value).
type PendingStores<'ctx> = Vec<(u32, [i32; 3], BasicValueEnum<'ctx>)>;

/// Where one point of a thread lies.
struct PointAt<'ctx, 'b> {
    /// The point's index.
    idx: [IntValue<'ctx>; 3],
    /// Each field's pointer at the thread's first point.
    bases: &'b [PointerValue<'ctx>],
    /// The point's offset from the thread's first point.
    shift: [i32; 3],
}

/// The points one thread of a PTX entry computes: `vector` consecutive points along axis
/// 0 (read and written with vector instructions) times `points` along the kernel's last
/// axis.
#[derive(Clone, Copy)]
struct Tile {
    vector: u32,
    points: u32,
    axis: usize,
}

impl Tile {
    /// How many points the tile spans along axis `a`.
    fn span(&self, a: usize) -> u32 {
        let mut n = 1;
        if a == 0 {
            n *= self.vector;
        }
        if a == self.axis {
            n *= self.points;
        }
        n
    }

    /// Offsets of the tile's points from its first, in order.
    fn shifts(&self) -> Vec<[i32; 3]> {
        let mut out = Vec::new();
        for p in 0..self.points as i32 {
            for v in 0..self.vector as i32 {
                let mut s = [v, 0, 0];
                s[self.axis] += p;
                out.push(s);
            }
        }
        out
    }
}

/// Per-field values a point needs: base pointer and strides.
#[derive(Clone, Copy)]
struct FieldArgs<'ctx> {
    ptr: PointerValue<'ctx>,
    sy: IntValue<'ctx>,
    sz: IntValue<'ctx>,
    map: IndexMap,
    /// Whether the kernel also writes the field (then loads bypass the read-only cache).
    written: bool,
}

/// The values of all parameters inside an entry.
struct EntryArgs<'ctx> {
    n: [IntValue<'ctx>; 3],
    fields: Vec<FieldArgs<'ctx>>,
    scalars: Vec<BasicValueEnum<'ctx>>,
    reductions: Vec<PointerValue<'ctx>>,
    /// A line kernel's scratch for the eliminated upper coefficients.
    scratch: Option<PointerValue<'ctx>>,
    /// A vertex kernel's mesh tables.
    mesh: Option<MeshArgs<'ctx>>,
    /// The sampled grids, in declaration order.
    sampled: Vec<SampledArgs<'ctx>>,
}

/// A vertex kernel's mesh tables (`u32` each; see `stencil_runtime::cpu::MeshView`).
struct MeshArgs<'ctx> {
    set: PointerValue<'ctx>,
    neighbour_start: PointerValue<'ctx>,
    neighbours: PointerValue<'ctx>,
    triangle_start: PointerValue<'ctx>,
    corners: PointerValue<'ctx>,
}

/// The number of pointer parameters a mesh takes.
const MESH_TABLES: u32 = 5;

pub(super) struct Gen<'a, 'ctx> {
    pub ctx: &'ctx Context,
    pub module: Module<'ctx>,
    pub b: Builder<'ctx>,
    k: &'a Kernel,
    p: Precision,
    target: Target,
    math: MathLib<'ctx>,
    /// How the PTX reads sampled grids.
    sampling: Sampling,
    /// The `if` arms computed under branches (`None`: every select computes both arms).
    branches: Option<Plan>,
    /// How many branches deep the code being emitted is: loads emitted inside a branch
    /// are not remembered for later points (their values exist only on that path). On
    /// the fast path a tile's reads are all issued before the arithmetic, so there a
    /// guarded read finds its value already loaded; this keeps the memo sound anyway.
    branch_depth: std::cell::Cell<u32>,
}

/// Builds the module of one kernel at one precision for one target, reading sampled
/// grids in software.
pub fn build_module<'ctx>(
    ctx: &'ctx Context,
    k: &Kernel,
    p: Precision,
    target: Target,
) -> R<Module<'ctx>> {
    build_module_with(ctx, k, p, target, Sampling::Software)
}

/// Builds the module of one kernel at one precision for one target, reading sampled grids
/// as `sampling` says (PTX only).
pub fn build_module_with<'ctx>(
    ctx: &'ctx Context,
    k: &Kernel,
    p: Precision,
    target: Target,
    sampling: Sampling,
) -> R<Module<'ctx>> {
    let module = ctx.create_module(&k.name);
    let mut g = Gen {
        ctx,
        b: ctx.create_builder(),
        math: MathLib::new(ctx, &module),
        module,
        k,
        p,
        target,
        sampling,
        branches: crate::branches::plan(k, &k.live_nodes()),
        branch_depth: std::cell::Cell::new(0),
    };
    match target {
        Target::Host if k.is_vertex() || !k.sampled.is_empty() => {
            return Err(LlvmError::Invalid {
                kernel: k.name.clone(),
                message: "vertex kernels and kernels that sample grids have no host entry: on the CPU they run as generated Rust"
                    .into(),
            })
        }
        Target::Ptx if k.is_vertex() => g.vertex_ptx_entry()?,
        Target::Ptx if k.line.is_some() => g.line_ptx_entry()?,
        Target::Ptx => {
            let width = super::vector_width(k, p);
            let vectors: &[u32] = if width > 1 { &[1, width] } else { &[1] };
            for &vector in vectors {
                for &points in super::point_variants(k) {
                    g.ptx_entry(vector, points)?;
                }
            }
        }
        Target::Host => g.host_entry()?,
    }
    g.module.verify().map_err(|e| LlvmError::Invalid {
        kernel: k.name.clone(),
        message: e.to_string(),
    })?;
    Ok(g.module)
}

/// Runs LLVM's -O3 module pipeline (the legacy pass manager: LLVM 14's C API has no other).
#[allow(deprecated)]
pub fn optimise(module: &Module) {
    let pmb = PassManagerBuilder::create();
    pmb.set_optimization_level(OptimizationLevel::Aggressive);
    pmb.set_inliner_with_threshold(1000);
    let pm = PassManager::create(());
    pmb.populate_module_pass_manager(&pm);
    pm.run_on(module);
}

impl<'a, 'ctx> Gen<'a, 'ctx> {
    fn ty(&self, t: Ty) -> BasicTypeEnum<'ctx> {
        match t.concrete(self.p) {
            Ty::F32 => self.ctx.f32_type().into(),
            Ty::F64 | Ty::Real => self.ctx.f64_type().into(),
            Ty::Int => self.ctx.i64_type().into(),
            Ty::Bool => self.ctx.bool_type().into(),
        }
    }

    fn addr_space(&self) -> AddressSpace {
        match self.target {
            Target::Ptx => AddressSpace::from(1u16),
            Target::Host => AddressSpace::default(),
        }
    }

    fn elem_ptr_type(&self, t: Ty) -> inkwell::types::PointerType<'ctx> {
        self.ty(t).ptr_type(self.addr_space())
    }

    fn i64c(&self, v: i64) -> IntValue<'ctx> {
        self.ctx.i64_type().const_int(v as u64, true)
    }

    fn intrinsic(&self, name: &str, types: &[BasicTypeEnum<'ctx>]) -> R<FunctionValue<'ctx>> {
        Intrinsic::find(name)
            .and_then(|i| i.get_declaration(&self.module, types))
            .ok_or_else(|| LlvmError::Invalid {
                kernel: self.k.name.clone(),
                message: format!("intrinsic {name} is not available"),
            })
    }

    fn call(
        &self,
        f: FunctionValue<'ctx>,
        args: &[BasicValueEnum<'ctx>],
    ) -> R<BasicValueEnum<'ctx>> {
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        self.b
            .build_call(f, &args, "")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LlvmError::Invalid {
                kernel: self.k.name.clone(),
                message: "call without a value".into(),
            })
    }

    fn call_void(&self, f: FunctionValue<'ctx>, args: &[BasicValueEnum<'ctx>]) -> R<()> {
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        self.b.build_call(f, &args, "")?;
        Ok(())
    }

    fn real_const(&self, t: Ty, v: f64) -> BasicValueEnum<'ctx> {
        match t.concrete(self.p) {
            Ty::F32 => self.ctx.f32_type().const_float(v as f32 as f64).into(),
            _ => self.ctx.f64_type().const_float(v).into(),
        }
    }

    /// Pointer to field `fa` at point `idx`: the base that every load of one thread offsets.
    fn base(&self, fa: &FieldArgs<'ctx>, idx: [IntValue<'ctx>; 3]) -> R<PointerValue<'ctx>> {
        let b = &self.b;
        let one = self.i64c(1);
        let mut idx = idx;
        for i in idx.iter_mut() {
            *i = match fa.map {
                IndexMap::Same => *i,
                IndexMap::Fine => b.build_left_shift(*i, one, "")?,
                IndexMap::Coarse => b.build_right_shift(*i, one, false, "")?,
            };
        }
        let jy = b.build_int_mul(idx[1], fa.sy, "")?;
        let kz = b.build_int_mul(idx[2], fa.sz, "")?;
        let lin = b.build_int_add(b.build_int_add(idx[0], jy, "")?, kz, "")?;
        // A plain (not in-bounds) GEP: threads outside the domain compute it too.
        Ok(unsafe { b.build_gep(fa.ptr, &[lin], "")? })
    }

    /// The fields with their pointers moved by `shift` elements (a block's slot).
    fn shifted(
        &self,
        fields: &[FieldArgs<'ctx>],
        shift: IntValue<'ctx>,
    ) -> R<Vec<FieldArgs<'ctx>>> {
        fields
            .iter()
            .map(|fa| {
                // A plain GEP: a dense launch shifts by 0, a block launch into its slot.
                let ptr = unsafe { self.b.build_gep(fa.ptr, &[shift], "")? };
                Ok(FieldArgs { ptr, ..*fa })
            })
            .collect()
    }

    /// Every field's pointer at the point `idx` (see [`Gen::base`]).
    fn bases(
        &self,
        fields: &[FieldArgs<'ctx>],
        idx: [IntValue<'ctx>; 3],
    ) -> R<Vec<PointerValue<'ctx>>> {
        fields.iter().map(|fa| self.base(fa, idx)).collect()
    }

    /// Address at offset `off` from a field's base pointer. The offset is a compile-time
    /// constant times each stride, so rows are one add away from the base and columns fold
    /// into the load's immediate offset.
    fn address(
        &self,
        fa: &FieldArgs<'ctx>,
        base: PointerValue<'ctx>,
        off: [i32; 3],
    ) -> R<PointerValue<'ctx>> {
        let b = &self.b;
        let mut lin = self.i64c(off[0] as i64);
        for (stride, o) in [(fa.sy, off[1]), (fa.sz, off[2])] {
            if o != 0 {
                let t = b.build_int_mul(stride, self.i64c(o as i64), "")?;
                lin = b.build_int_add(lin, t, "")?;
            }
        }
        // SAFETY of the GEP: the runtime guarantees that every field covers the domain plus
        // the kernel's halo, so every offset of a point inside the domain stays inside the
        // field's allocation.
        Ok(unsafe { b.build_in_bounds_gep(base, &[lin], "")? })
    }

    /// Emits the point computation at `at.idx`: loads, arithmetic and stores. Returns each
    /// reduction's contribution.
    ///
    /// Addresses are taken from `at.bases` (one per field, at the thread's first point)
    /// shifted by `at.shift`. Loads found in `memo` are reused: the points of one thread
    /// share the values their stencils have in common. Stores go to `pending` when given
    /// (the caller emits them), else out at once.
    fn point(
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
        for st in &k.stores {
            let value = get(st.value);
            match (st.mask, &pending) {
                (None, Some(_)) => {}
                (None, None) => {
                    let fa = &args.fields[st.field as usize];
                    let ptr = self.address(fa, at.bases[st.field as usize], shifted([0; 3]))?;
                    self.b.build_store(ptr, value)?;
                }
                (Some(m), _) => {
                    // A masked point: store only where the mask holds.
                    let f = self.current_function();
                    let yes = self.ctx.append_basic_block(f, "masked_store");
                    let next = self.ctx.append_basic_block(f, "after_store");
                    self.b
                        .build_conditional_branch(get(m).into_int_value(), yes, next)?;
                    self.b.position_at_end(yes);
                    let fa = &args.fields[st.field as usize];
                    let ptr = self.address(fa, at.bases[st.field as usize], shifted([0; 3]))?;
                    self.b.build_store(ptr, value)?;
                    self.b.build_unconditional_branch(next)?;
                    self.b.position_at_end(next);
                }
            }
        }
        if let Some(list) = pending {
            for st in k.stores.iter().filter(|st| st.mask.is_none()) {
                list.push((st.field, shifted([0; 3]), get(st.value)));
            }
        }
        Ok(k.contributions.iter().map(|&(r, n)| (r, get(n))).collect())
    }

    /// The function the builder is positioned in.
    fn current_function(&self) -> FunctionValue<'ctx> {
        self.b
            .get_insert_block()
            .and_then(|bb| bb.get_parent())
            .expect("the builder is positioned inside a function")
    }

    /// The value of every live node at the point `at` (loads reused from `memo`).
    fn values(
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
    fn guarded_values(
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

    /// Run-time loop `l` of a vertex kernel: a phi per carried value in the loop header;
    /// the nodes of an iteration (`body`) computed in the loop's body. Returns each carried
    /// value's value after the last iteration.
    fn runtime_loop(
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
        let i64t = self.ctx.i64_type();
        let starts = match lp.over {
            Around::Neighbours => mesh.neighbour_start,
            Around::Triangles => mesh.triangle_start,
        };
        let v = at.idx[0];
        let first = self.table(starts, v)?;
        let after = self.b.build_int_nuw_add(v, self.i64c(1), "")?;
        let end = self.table(starts, after)?;
        let f = self.current_function();
        let pre = self.b.get_insert_block().expect("positioned");
        let head = self.ctx.append_basic_block(f, "mesh_loop");
        let body = self.ctx.append_basic_block(f, "mesh_loop_body");
        let exit = self.ctx.append_basic_block(f, "mesh_loop_done");
        self.b.build_unconditional_branch(head)?;
        self.b.position_at_end(head);
        let pos = self.b.build_phi(i64t, "pos")?;
        pos.add_incoming(&[(&first, pre)]);
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
        let go = self.b.build_int_compare(IntPredicate::ULT, p, end, "")?;
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
    fn table(&self, table: PointerValue<'ctx>, i: IntValue<'ctx>) -> R<IntValue<'ctx>> {
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
    fn node_value(
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
                        let v = self.read(fa, ptr, ty)?;
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
                if fa.written {
                    self.b.build_load(ptr, "")?
                } else {
                    self.load(ptr, ty)?
                }
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

    fn load(&self, ptr: PointerValue<'ctx>, ty: Ty) -> R<BasicValueEnum<'ctx>> {
        match self.target {
            // Inputs are read-only for the whole launch: read them through the
            // non-coherent (texture) path, `ld.global.nc`.
            Target::Ptx => {
                let f = self.intrinsic(
                    "llvm.nvvm.ldg.global.f",
                    &[self.ty(ty), ptr.get_type().into()],
                )?;
                let align = self
                    .ctx
                    .i32_type()
                    .const_int(if ty.concrete(self.p) == Ty::F32 { 4 } else { 8 }, false);
                self.call(f, &[ptr.into(), align.into()])
            }
            Target::Host => Ok(self.b.build_load(ptr, "")?),
        }
    }

    /// The parameter types of the PTX entry, in calling-convention order.
    fn entry_param_types(&self) -> Vec<BasicMetadataTypeEnum<'ctx>> {
        let i64t = self.ctx.i64_type();
        let mut ps: Vec<BasicMetadataTypeEnum> = vec![i64t.into(); 3];
        for &(kind, i) in &self.k.param_order {
            match kind {
                ParamKind::Field => {
                    ps.push(self.elem_ptr_type(self.k.fields[i as usize].elem).into());
                    ps.push(i64t.into());
                    ps.push(i64t.into());
                }
                ParamKind::Scalar => {
                    let t = self.k.scalars[i as usize].ty;
                    ps.push(if t == Ty::Bool {
                        self.ctx.i32_type().into()
                    } else {
                        self.ty(t).into()
                    });
                }
                ParamKind::Reduction => {
                    ps.push(self.elem_ptr_type(self.k.reductions[i as usize].ty).into());
                }
                ParamKind::Mesh => {
                    let table = self.ctx.i32_type().ptr_type(self.addr_space());
                    ps.extend((0..MESH_TABLES).map(|_| BasicMetadataTypeEnum::from(table)));
                }
                ParamKind::Sampled => {
                    // The samples' address or the texture object, the extents, the origin
                    // and the inverse spacing.
                    let elem = self.ty(self.k.sampled[i as usize].elem);
                    ps.extend((0..3).map(|_| BasicMetadataTypeEnum::from(i64t)));
                    ps.extend((0..4).map(|_| BasicMetadataTypeEnum::from(elem)));
                }
            }
        }
        if self.k.is_vertex() {
            // A vertex kernel has no block list: its threads are the set's vertices.
        } else if let Some(line) = &self.k.line {
            ps.push(
                self.elem_ptr_type(self.k.fields[line.field as usize].elem)
                    .into(),
            );
        } else {
            // The block list (`blocks.rs`).
            ps.extend(self.block_param_types());
        }
        ps
    }

    /// Marks pointer parameters `noalias`, and inputs `readonly`.
    fn pointer_attributes(&self, f: FunctionValue<'ctx>, first_param: u32) {
        let noalias = self
            .ctx
            .create_enum_attribute(Attribute::get_named_enum_kind_id("noalias"), 0);
        let readonly = self
            .ctx
            .create_enum_attribute(Attribute::get_named_enum_kind_id("readonly"), 0);
        let mut pos = first_param;
        for &(kind, i) in &self.k.param_order {
            match kind {
                ParamKind::Field => {
                    f.add_attribute(AttributeLoc::Param(pos), noalias);
                    if self.k.fields[i as usize].access == Access::In {
                        f.add_attribute(AttributeLoc::Param(pos), readonly);
                    }
                    pos += 3;
                }
                ParamKind::Scalar => pos += 1,
                ParamKind::Reduction => {
                    f.add_attribute(AttributeLoc::Param(pos), noalias);
                    pos += 1;
                }
                ParamKind::Mesh => {
                    for t in pos..pos + MESH_TABLES {
                        f.add_attribute(AttributeLoc::Param(t), readonly);
                    }
                    pos += MESH_TABLES;
                }
                ParamKind::Sampled => pos += SAMPLED_PARAMS,
            }
        }
    }

    /// A row or plane stride as the entry uses it: the run time passes strides below
    /// 2^32 elements (it refuses larger ones), so index products are 32 x 32 -> 64-bit
    /// multiplies (one instruction on a GPU instead of three).
    fn narrow_stride(&self, v: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let narrow = self.b.build_int_truncate(v, self.ctx.i32_type(), "")?;
        Ok(self.b.build_int_z_extend(narrow, self.ctx.i64_type(), "")?)
    }

    /// Reads the parameters of the PTX entry into [`EntryArgs`].
    fn unpack_params(&self, f: FunctionValue<'ctx>) -> R<EntryArgs<'ctx>> {
        let p = |i: u32| f.get_nth_param(i).expect("declared parameter");
        let mut args = EntryArgs {
            n: [
                p(0).into_int_value(),
                p(1).into_int_value(),
                p(2).into_int_value(),
            ],
            fields: vec![],
            scalars: vec![],
            reductions: vec![],
            scratch: None,
            mesh: None,
            sampled: vec![],
        };
        let mut pos = 3;
        for &(kind, i) in &self.k.param_order {
            match kind {
                ParamKind::Field => {
                    let field = &self.k.fields[i as usize];
                    args.fields.push(FieldArgs {
                        ptr: p(pos).into_pointer_value(),
                        sy: self.narrow_stride(p(pos + 1).into_int_value())?,
                        sz: self.narrow_stride(p(pos + 2).into_int_value())?,
                        map: field.map,
                        written: field.access.is_written(),
                    });
                    pos += 3;
                }
                ParamKind::Scalar => {
                    let v = p(pos);
                    let v = if self.k.scalars[i as usize].ty == Ty::Bool {
                        let zero = self.ctx.i32_type().const_zero();
                        self.b
                            .build_int_compare(IntPredicate::NE, v.into_int_value(), zero, "")?
                            .into()
                    } else {
                        v
                    };
                    args.scalars.push(v);
                    pos += 1;
                }
                ParamKind::Reduction => {
                    args.reductions.push(p(pos).into_pointer_value());
                    pos += 1;
                }
                ParamKind::Mesh => {
                    let t = |k: u32| p(pos + k).into_pointer_value();
                    args.mesh = Some(MeshArgs {
                        set: t(0),
                        neighbour_start: t(1),
                        neighbours: t(2),
                        triangle_start: t(3),
                        corners: t(4),
                    });
                    pos += MESH_TABLES;
                }
                ParamKind::Sampled => {
                    args.sampled.push(SampledArgs {
                        handle: p(pos).into_int_value(),
                        n: [p(pos + 1).into_int_value(), p(pos + 2).into_int_value()],
                        origin: [p(pos + 3), p(pos + 4)],
                        inverse_spacing: [p(pos + 5), p(pos + 6)],
                    });
                    pos += SAMPLED_PARAMS;
                }
            }
        }
        if self.k.line.is_some() {
            args.scratch = Some(p(pos).into_pointer_value());
        }
        Ok(args)
    }

    /// Declares a CUDA kernel entry `name` with the kernel's parameters, marked as a
    /// kernel in `nvvm.annotations`.
    /// Declares the PTX entry `name`, positions the builder in its entry block and emits
    /// the grid dependency point ([`super::GRID_DEPENDENCY_POINT`]) as its first instruction:
    /// nothing the kernel reads or writes in memory may move above it.
    fn begin_kernel(&mut self, name: &str) -> R<FunctionValue<'ctx>> {
        let f = self.declare_kernel(name)?;
        let entry = self.ctx.append_basic_block(f, "entry");
        self.b.position_at_end(entry);
        let asm = self.ctx.create_inline_asm(
            self.ctx.void_type().fn_type(&[], false),
            super::GRID_DEPENDENCY_POINT.to_string(),
            "~{memory}".to_string(),
            true,
            false,
            None,
            false,
        );
        let callable = CallableValue::try_from(asm).map_err(|()| LlvmError::Invalid {
            kernel: self.k.name.clone(),
            message: "inline assembly is not callable".into(),
        })?;
        self.b.build_call(callable, &[], "")?;
        Ok(f)
    }

    fn declare_kernel(&self, name: &str) -> R<FunctionValue<'ctx>> {
        let fn_ty = self
            .ctx
            .void_type()
            .fn_type(&self.entry_param_types(), false);
        let f = self.module.add_function(name, fn_ty, None);
        self.pointer_attributes(f, 3);
        let kernel_md = self.ctx.metadata_node(&[
            f.as_global_value().as_pointer_value().into(),
            self.ctx.metadata_string("kernel").into(),
            self.ctx.i32_type().const_int(1, false).into(),
        ]);
        self.module
            .add_global_metadata("nvvm.annotations", &kernel_md)
            .map_err(|e| LlvmError::Invalid {
                kernel: name.to_string(),
                message: e.to_string(),
            })?;
        Ok(f)
    }

    fn sreg(&self, name: &str) -> R<IntValue<'ctx>> {
        let f = self.intrinsic(&format!("llvm.nvvm.read.ptx.sreg.{name}"), &[])?;
        Ok(self.call(f, &[])?.into_int_value())
    }

    /// A CUDA kernel in which each thread computes a [`Tile`] of points: `vector`
    /// consecutive points along axis 0 times `points` along the kernel's last axis,
    /// sharing the loads their stencils have in common; block partials for reductions.
    ///
    /// Threads whose points all lie inside the domain take a fast path without per-point
    /// guards, with vector loads and stores where a row of the tile is whole; the others
    /// (at the domain's far edges) check each point.
    fn ptx_entry(&mut self, vector: u32, points: u32) -> R<()> {
        let name = super::variant_entry(
            &super::sampled_entry_name(self.k, self.p, self.sampling),
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
            let contributions = self.point(&args, &at, None, None)?;
            self.accumulate(&slots, contributions)?;
            self.b.build_unconditional_branch(next)?;
            self.b.position_at_end(next);
        }
        self.b.build_unconditional_branch(join)?;

        self.b.position_at_end(join);
        if !self.k.reductions.is_empty() {
            self.block_reduce(f, &args, &slots)?;
        }
        self.b.build_return(None)?;
        Ok(())
    }

    /// The offsets (from the thread's first point) every point of the tile loads, by
    /// field, in first-use order.
    fn tile_loads(&self, shifts: &[[i32; 3]]) -> Vec<(u32, [i32; 3], Ty)> {
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
    fn issue_loads(
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
                memo.insert((field, off), self.load(ptr, ty)?);
            }
        }
        Ok(())
    }

    /// Emits a tile's stores: one vector store for each aligned run of `vector` values of
    /// a row, scalar stores for the rest.
    fn emit_stores(
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
    fn read(
        &self,
        fa: &FieldArgs<'ctx>,
        ptr: PointerValue<'ctx>,
        ty: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        if fa.written {
            Ok(self.b.build_load(ptr, "")?)
        } else {
            self.load(ptr, ty)
        }
    }

    /// Loads `n` consecutive values of type `ty` at `ptr` (aligned to their total size)
    /// through the non-coherent path, as one vector instruction.
    fn load_vector(&self, ptr: PointerValue<'ctx>, ty: Ty, n: u32) -> R<Vec<BasicValueEnum<'ctx>>> {
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
    fn store_vector(&self, ptr: PointerValue<'ctx>, values: &[BasicValueEnum<'ctx>]) -> R<()> {
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
    fn point_at<'b>(
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
