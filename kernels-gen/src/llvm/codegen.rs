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
mod point;
mod reduce;
mod sample;
mod staged;
mod tile;
pub use sample::Sampling;
use sample::{SampledArgs, SAMPLED_PARAMS};

/// Largest thread block a kernel is launched with (CUDA's limit).
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// Warps in the largest thread block: the values of shared memory a reduction needs.
pub const WARPS_PER_BLOCK: u32 = MAX_BLOCK_THREADS / 32;

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

impl<'ctx> EntryArgs<'ctx> {
    /// The arguments of a domain of extents `n`, the rest still to be read.
    fn new(n: [IntValue<'ctx>; 3]) -> Self {
        EntryArgs {
            n,
            fields: vec![],
            scalars: vec![],
            reductions: vec![],
            scratch: None,
            mesh: None,
            sampled: vec![],
        }
    }
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
    /// In a staged entry's second phase, where the staged values are (`staged.rs`).
    staged: std::cell::RefCell<Option<staged::StagedTile<'ctx>>>,
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
    build(ctx, k, p, target, sampling, None)
}

/// Builds a PTX module of one kernel at one precision that holds only its tile variant
/// `(vector, points)` (one of [`super::TileVariants::entries`]); line and vertex kernels
/// have one entry, which it holds whatever the variant.
pub fn build_entry_module<'ctx>(
    ctx: &'ctx Context,
    k: &Kernel,
    p: Precision,
    sampling: Sampling,
    variant: (u32, u32),
) -> R<Module<'ctx>> {
    build(ctx, k, p, Target::Ptx, sampling, Some(variant))
}

/// A module of `k` at `p` for `target`: every PTX entry, or only the tile variant `only`.
fn build<'ctx>(
    ctx: &'ctx Context,
    k: &Kernel,
    p: Precision,
    target: Target,
    sampling: Sampling,
    only: Option<(u32, u32)>,
) -> R<Module<'ctx>> {
    // The host entry computes staged values where they are read; the PTX keeps them in
    // shared memory (`staged.rs`).
    let unstaged;
    let k = if target == Target::Host && !k.stages.is_empty() {
        unstaged = k.unstaged();
        &unstaged
    } else {
        k
    };
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
        staged: std::cell::RefCell::new(None),
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
        Target::Ptx if k.is_staged() => {
            let all = super::tile_variants(k).entries(k, p);
            for (_, points) in only.map_or(all, |v| vec![v]) {
                g.staged_entry(points)?;
            }
        }
        Target::Ptx => {
            let all = super::tile_variants(k).entries(k, p);
            for (vector, points) in only.map_or(all, |v| vec![v]) {
                g.ptx_entry(vector, points)?;
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
            Ty::I32 => self.ctx.i32_type().into(),
            Ty::U8 => self.ctx.i8_type().into(),
        }
    }

    /// The type of one element of a field of element type `t` in memory (a `bool` is a
    /// byte).
    fn memory_ty(&self, t: Ty) -> BasicTypeEnum<'ctx> {
        match t {
            Ty::Bool => self.ctx.i8_type().into(),
            t => self.ty(t),
        }
    }

    /// A value of a field of element type `stored` as loaded from memory, made the value
    /// the kernel sees ([`Ty::value`]): narrow integers widened to `i64`, a byte made a
    /// `bool`.
    fn widened_from_memory(&self, v: BasicValueEnum<'ctx>, stored: Ty) -> R<BasicValueEnum<'ctx>> {
        let i64t = self.ctx.i64_type();
        Ok(match stored {
            Ty::I32 => self
                .b
                .build_int_s_extend(v.into_int_value(), i64t, "")?
                .into(),
            Ty::U8 => self
                .b
                .build_int_z_extend(v.into_int_value(), i64t, "")?
                .into(),
            Ty::Bool => {
                let zero = self.ctx.i8_type().const_zero();
                let byte = v.into_int_value();
                self.b
                    .build_int_compare(IntPredicate::NE, byte, zero, "")?
                    .into()
            }
            _ => v,
        })
    }

    /// A kernel's value made an element of a field of element type `stored`: wrapped to
    /// a narrow integer, a `bool` made a byte.
    fn narrowed_to_memory(&self, v: BasicValueEnum<'ctx>, stored: Ty) -> R<BasicValueEnum<'ctx>> {
        Ok(match stored {
            Ty::I32 | Ty::U8 => {
                let t = self.ty(stored).into_int_type();
                self.b.build_int_truncate(v.into_int_value(), t, "")?.into()
            }
            Ty::Bool => {
                let t = self.ctx.i8_type();
                self.b.build_int_z_extend(v.into_int_value(), t, "")?.into()
            }
            _ => v,
        })
    }

    fn addr_space(&self) -> AddressSpace {
        match self.target {
            Target::Ptx => AddressSpace::from(1u16),
            Target::Host => AddressSpace::default(),
        }
    }

    fn elem_ptr_type(&self, t: Ty) -> inkwell::types::PointerType<'ctx> {
        self.memory_ty(t).ptr_type(self.addr_space())
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

    fn load(&self, ptr: PointerValue<'ctx>, ty: Ty) -> R<BasicValueEnum<'ctx>> {
        match self.target {
            // Inputs are read-only for the whole launch: read them through the
            // non-coherent (texture) path, `ld.global.nc`.
            Target::Ptx => {
                let (name, bytes) = match ty.concrete(self.p) {
                    Ty::F32 => ("llvm.nvvm.ldg.global.f", 4),
                    Ty::F64 => ("llvm.nvvm.ldg.global.f", 8),
                    Ty::I32 => ("llvm.nvvm.ldg.global.i", 4),
                    Ty::U8 | Ty::Bool => ("llvm.nvvm.ldg.global.i", 1),
                    _ => ("llvm.nvvm.ldg.global.i", 8),
                };
                let f = self.intrinsic(name, &[self.memory_ty(ty), ptr.get_type().into()])?;
                let align = self.ctx.i32_type().const_int(bytes, false);
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
