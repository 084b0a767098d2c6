//! Scaffolding for the few kernels built directly in LLVM IR instead of from the language
//! (the block grids' halo exchange and block flags, which gather through tables): an
//! entry with the kernel annotation and the grid dependency point first, thread indices,
//! non-coherent loads, and the PTX at the end.

use super::halo::MAX_FIELDS;
use super::{nvptx_machine, LlvmError};
use crate::ir::Precision;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::targets::FileType;
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum, FloatType, IntType};
use inkwell::values::{
    BasicValue, BasicValueEnum, FloatValue, FunctionValue, IntValue, PointerValue,
};
use inkwell::{AddressSpace, IntPredicate};

/// The global address space of NVPTX.
pub(crate) const GLOBAL: u16 = 1;

/// A pointer type to `ty` in global memory, as a parameter type.
pub(crate) fn global_ptr(ty: BasicTypeEnum<'_>) -> BasicMetadataTypeEnum<'_> {
    ty.ptr_type(AddressSpace::from(GLOBAL)).into()
}

/// The one of `[f32, f64]` for precision `p`: a raw kernel's entry name.
pub(crate) fn by_precision(p: Precision, [f32, f64]: [&'static str; 2]) -> &'static str {
    match p {
        Precision::F32 => f32,
        Precision::F64 => f64,
    }
}

/// The `i32`, `i64` and real type (at precision `p`) of `ctx`: what the raw kernels'
/// parameters and values are typed in.
pub(crate) fn raw_types(ctx: &Context, p: Precision) -> (IntType<'_>, IntType<'_>, FloatType<'_>) {
    let real = match p {
        Precision::F32 => ctx.f32_type(),
        Precision::F64 => ctx.f64_type(),
    };
    (ctx.i32_type(), ctx.i64_type(), real)
}

/// One kernel entry being built.
pub(crate) struct RawKernel<'ctx> {
    /// The context everything lives in.
    pub ctx: &'ctx Context,
    /// The module holding the entry.
    pub module: Module<'ctx>,
    /// The builder, positioned after the entry's prologue.
    pub b: Builder<'ctx>,
    /// The entry.
    pub f: FunctionValue<'ctx>,
    name: &'static str,
}

impl<'ctx> RawKernel<'ctx> {
    /// An entry `name` taking `params`, its first block started with the grid dependency
    /// point.
    pub fn new(
        ctx: &'ctx Context,
        name: &'static str,
        params: &[BasicMetadataTypeEnum<'ctx>],
    ) -> Result<RawKernel<'ctx>, LlvmError> {
        let module = ctx.create_module(name);
        let b = ctx.create_builder();
        let f = module.add_function(name, ctx.void_type().fn_type(params, false), None);
        let i32t = ctx.i32_type();
        let kernel_md = ctx.metadata_node(&[
            f.as_global_value().as_pointer_value().into(),
            ctx.metadata_string("kernel").into(),
            i32t.const_int(1, false).into(),
        ]);
        let k = RawKernel {
            ctx,
            module,
            b,
            f,
            name,
        };
        k.module
            .add_global_metadata("nvvm.annotations", &kernel_md)
            .map_err(|e| k.error(e.to_string()))?;
        let entry = ctx.append_basic_block(f, "entry");
        k.b.position_at_end(entry);
        let asm = ctx.create_inline_asm(
            ctx.void_type().fn_type(&[], false),
            super::GRID_DEPENDENCY_POINT.to_string(),
            "~{memory}".to_string(),
            true,
            false,
            None,
            false,
        );
        let callable = inkwell::values::CallableValue::try_from(asm)
            .map_err(|()| k.error("inline assembly is not callable".into()))?;
        k.b.build_call(callable, &[], "")
            .map_err(|e| k.invalid(e))?;
        Ok(k)
    }

    /// An entry `name` taking `params`, then `N` groups of [`MAX_FIELDS`] arenas (`real*`):
    /// a launch filling one field per row of thread blocks. With it, the arena of each
    /// group for this thread block row.
    pub fn over_fields<const N: usize>(
        ctx: &'ctx Context,
        name: &'static str,
        params: &[BasicMetadataTypeEnum<'ctx>],
        real: FloatType<'ctx>,
    ) -> Result<(RawKernel<'ctx>, [PointerValue<'ctx>; N]), LlvmError> {
        let mut all = params.to_vec();
        all.extend(std::iter::repeat_n(global_ptr(real.into()), N * MAX_FIELDS));
        let k = RawKernel::new(ctx, name, &all)?;
        let (first, fields) = (params.len() as u32, MAX_FIELDS as u32);
        // Each replaced below, group by group.
        let mut arenas = [k.ptr_param(first); N];
        for (group, arena) in (0..).zip(arenas.iter_mut()) {
            *arena = k.param_of_block_row(first + group * fields, fields)?;
        }
        Ok((k, arenas))
    }

    /// A failure to build this kernel.
    pub fn error(&self, message: String) -> LlvmError {
        LlvmError::Invalid {
            kernel: self.name.into(),
            message,
        }
    }

    /// A builder failure of this kernel.
    pub fn invalid(&self, e: BuilderError) -> LlvmError {
        self.error(e.to_string())
    }

    /// A builder result as this kernel's result.
    pub fn ok<T>(&self, r: Result<T, BuilderError>) -> Result<T, LlvmError> {
        r.map_err(|e| self.invalid(e))
    }

    /// Parameter `k` as an integer.
    pub fn int_param(&self, k: u32) -> IntValue<'ctx> {
        self.f
            .get_nth_param(k)
            .expect("declared parameter")
            .into_int_value()
    }

    /// Parameter `k` as a pointer.
    pub fn ptr_param(&self, k: u32) -> PointerValue<'ctx> {
        self.f
            .get_nth_param(k)
            .expect("declared parameter")
            .into_pointer_value()
    }

    /// The `i64` constant `v`.
    pub fn c64(&self, v: u64) -> IntValue<'ctx> {
        self.ctx.i64_type().const_int(v, false)
    }

    /// The thread's index along x in the whole launch (`i64`), branching to `work` where
    /// it is below `limit`, else to `otherwise`.
    pub fn branch_on_thread(
        &self,
        limit: IntValue<'ctx>,
        work: BasicBlock<'ctx>,
        otherwise: BasicBlock<'ctx>,
    ) -> Result<IntValue<'ctx>, LlvmError> {
        let t = self.ok(self.thread_x())?;
        let inside = self.ok(self.b.build_int_compare(IntPredicate::ULT, t, limit, ""))?;
        self.ok(self.b.build_conditional_branch(inside, work, otherwise))?;
        Ok(t)
    }

    /// The `N` integers `width r + w` (`w` in `0..N`) of the read-only table `base` of
    /// `ty` (`i32` ones zero-extended): record `r` of `width` words.
    pub fn load_record<const N: usize>(
        &self,
        ty: IntType<'ctx>,
        base: PointerValue<'ctx>,
        r: IntValue<'ctx>,
        width: u64,
    ) -> Result<[IntValue<'ctx>; N], LlvmError> {
        let first = self.ok(self.b.build_int_nuw_mul(r, self.c64(width), ""))?;
        let mut words = [first; N];
        for (w, word) in words.iter_mut().enumerate() {
            let i = self.ok(self.b.build_int_nuw_add(first, self.c64(w as u64), ""))?;
            *word = if ty == self.ctx.i32_type() {
                self.load_i32(base, i, false)?
            } else {
                self.load_nc(base, i)?.into_int_value()
            };
        }
        Ok(words)
    }

    /// Element `i` of the read-only `i32` table `base`, extended to `i64` (with its sign
    /// where `signed`).
    pub fn load_i32(
        &self,
        base: PointerValue<'ctx>,
        i: IntValue<'ctx>,
        signed: bool,
    ) -> Result<IntValue<'ctx>, LlvmError> {
        let v = self.load_nc(base, i)?.into_int_value();
        let i64t = self.ctx.i64_type();
        self.ok(if signed {
            self.b.build_int_s_extend(v, i64t, "")
        } else {
            self.b.build_int_z_extend(v, i64t, "")
        })
    }

    /// The current block ended with a branch to `block`, where control joins: `base[i]`
    /// set to the phi `name` of `incoming` (value, block it comes from; at least one), then
    /// on to `next`.
    pub fn store_joined(
        &self,
        block: BasicBlock<'ctx>,
        name: &str,
        incoming: &[(FloatValue<'ctx>, BasicBlock<'ctx>)],
        (base, i): (PointerValue<'ctx>, IntValue<'ctx>),
        next: BasicBlock<'ctx>,
    ) -> Result<(), LlvmError> {
        self.ok(self.b.build_unconditional_branch(block))?;
        self.b.position_at_end(block);
        let value = self.ok(self.b.build_phi(incoming[0].0.get_type(), name))?;
        let incoming: Vec<(&dyn BasicValue<'ctx>, BasicBlock<'ctx>)> = incoming
            .iter()
            .map(|(v, from)| (v as &dyn BasicValue<'ctx>, *from))
            .collect();
        value.add_incoming(&incoming);
        let at = self.ok(self.at(base, i))?;
        self.ok(self.b.build_store(at, value.as_basic_value()))?;
        self.ok(self.b.build_unconditional_branch(next))?;
        Ok(())
    }

    /// Ends the entry with `done`, a block that returns, and emits the PTX.
    pub fn finish(self, done: BasicBlock<'ctx>) -> Result<String, LlvmError> {
        self.b.position_at_end(done);
        self.ok(self.b.build_return(None))?;
        self.ptx()
    }

    /// New basic blocks of the entry, one per name, in order.
    pub fn blocks<const N: usize>(&self, names: [&str; N]) -> [BasicBlock<'ctx>; N] {
        names.map(|name| self.ctx.append_basic_block(self.f, name))
    }

    /// A special register (`llvm.nvvm.read.ptx.sreg.*`), as `i64`.
    fn sreg(&self, name: &str) -> Result<IntValue<'ctx>, BuilderError> {
        let fn_ty = self.ctx.i32_type().fn_type(&[], false);
        let g = self
            .module
            .get_function(name)
            .unwrap_or_else(|| self.module.add_function(name, fn_ty, None));
        let v = self
            .b
            .build_call(g, &[], "")?
            .try_as_basic_value()
            .basic()
            .expect("a value")
            .into_int_value();
        self.b.build_int_z_extend(v, self.ctx.i64_type(), "")
    }

    /// The thread's index along x in the whole launch (`i64`).
    pub fn thread_x(&self) -> Result<IntValue<'ctx>, BuilderError> {
        let ctaid = self.sreg("llvm.nvvm.read.ptx.sreg.ctaid.x")?;
        let ntid = self.sreg("llvm.nvvm.read.ptx.sreg.ntid.x")?;
        let tid = self.sreg("llvm.nvvm.read.ptx.sreg.tid.x")?;
        let base = self.b.build_int_nuw_mul(ctaid, ntid, "")?;
        self.b.build_int_nuw_add(base, tid, "")
    }

    /// The thread block's index along y (`i64`).
    pub fn block_y(&self) -> Result<IntValue<'ctx>, BuilderError> {
        self.sreg("llvm.nvvm.read.ptx.sreg.ctaid.y")
    }

    /// The pointer parameter `first + f` for the thread block row `f` (the block's index
    /// along y) of `count` such parameters: a launch filling one of several fields per
    /// row of thread blocks.
    fn param_of_block_row(&self, first: u32, count: u32) -> Result<PointerValue<'ctx>, LlvmError> {
        let row = self.ok(self.block_y())?;
        let mut chosen = self.ptr_param(first);
        for f in 1..count {
            let index = self.ctx.i64_type().const_int(u64::from(f), false);
            let is = self.ok(self.b.build_int_compare(IntPredicate::EQ, row, index, ""))?;
            let candidate = self.ptr_param(first + f);
            chosen = self
                .ok(self.b.build_select(is, candidate, chosen, ""))?
                .into_pointer_value();
        }
        Ok(chosen)
    }

    /// The address of element `i` of `base`.
    pub fn at(
        &self,
        base: PointerValue<'ctx>,
        i: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, BuilderError> {
        // SAFETY (of the IR): the callers index within the buffers the launch names.
        unsafe { self.b.build_in_bounds_gep(base, &[i], "") }
    }

    /// Element `i` of the read-only global buffer `base`, through the non-coherent path.
    pub fn load_nc(
        &self,
        base: PointerValue<'ctx>,
        i: IntValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, LlvmError> {
        let ty = BasicTypeEnum::try_from(base.get_type().get_element_type())
            .map_err(|_| self.error("a load through a pointer to no value type".into()))?;
        let name = if ty.is_float_type() {
            "llvm.nvvm.ldg.global.f"
        } else {
            "llvm.nvvm.ldg.global.i"
        };
        let ptr_ty = ty.ptr_type(AddressSpace::from(GLOBAL));
        let decl = inkwell::intrinsics::Intrinsic::find(name)
            .and_then(|x| x.get_declaration(&self.module, &[ty, ptr_ty.into()]))
            .ok_or_else(|| self.error(format!("no intrinsic {name}")))?;
        let align = ty
            .size_of()
            .and_then(|s| s.get_zero_extended_constant())
            .unwrap_or(4);
        let align = self.ctx.i32_type().const_int(align, false);
        let ptr = self.at(base, i).map_err(|e| self.invalid(e))?;
        let v = self
            .b
            .build_call(decl, &[ptr.into(), align.into()], "")
            .map_err(|e| self.invalid(e))?;
        Ok(v.try_as_basic_value().basic().expect("a value"))
    }

    /// Verifies the module and emits its PTX.
    pub fn ptx(self) -> Result<String, LlvmError> {
        self.module
            .verify()
            .map_err(|e| self.error(e.to_string()))?;
        let tm = nvptx_machine()?;
        self.module.set_triple(&tm.get_triple());
        self.module
            .set_data_layout(&tm.get_target_data().get_data_layout());
        super::codegen::optimise(&self.module);
        let buf = tm
            .write_to_memory_buffer(&self.module, FileType::Assembly)
            .map_err(|e| LlvmError::Target {
                what: "emit PTX",
                message: e.to_string(),
            })?;
        Ok(String::from_utf8_lossy(buf.as_slice()).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{block_flags, halo, halo_weighted};
    use super::LlvmError;
    use crate::ir::Precision;

    type Emit = fn(Precision) -> Result<String, LlvmError>;
    type Entry = fn(Precision) -> &'static str;

    /// Each kernel built directly in IR has its entry in both precisions and the
    /// instructions that say it does its job: non-coherent loads of the tables (and of the
    /// reals it reads), stores of the reals it fills, the flags' atomic or.
    #[test]
    fn raw_kernels_have_one_entry_per_precision_and_their_instructions() {
        let kernels: [(Emit, Entry, &[&str]); 3] = [
            (
                halo::halo_exchange_ptx,
                halo::halo_entry,
                &["ld.global.nc.u32", "ld.global.nc.REAL", "st.global.REAL"],
            ),
            (
                halo_weighted::halo_weighted_ptx,
                halo_weighted::weighted_entry,
                &[
                    "ld.global.nc.u32",
                    "ld.global.nc.REAL",
                    "st.global.REAL",
                    "bra",
                ],
            ),
            (
                block_flags::block_flags_ptx,
                block_flags::flags_entry,
                &["ld.global.nc.REAL", ".global.or.b32"],
            ),
        ];
        for (emit, entry, wanted) in kernels {
            for p in [Precision::F32, Precision::F64] {
                let ptx = emit(p).unwrap();
                assert!(ptx.contains(&format!(".entry {}", entry(p))), "{ptx}");
                let real = if p == Precision::F32 { "f32" } else { "f64" };
                for w in wanted {
                    let w = w.replace("REAL", real);
                    assert!(ptx.contains(&w), "{}: no {w}\n{ptx}", entry(p));
                }
            }
        }
    }
}
