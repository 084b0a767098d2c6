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
mod entry;
mod host;
mod ops;
mod reduce;
mod sample;
mod tile;
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

    fn sreg(&self, name: &str) -> R<IntValue<'ctx>> {
        let f = self.intrinsic(&format!("llvm.nvvm.read.ptx.sreg.{name}"), &[])?;
        Ok(self.call(f, &[])?.into_int_value())
    }
}
