//! The halo exchange of block grids (`stencil_runtime::blocks::HaloExchange`), generated
//! through the same NVPTX back end as the kernels.
//!
//! The exchange is a list of entries, three `u32` each: the arena element to fill, the
//! element to read (`u32::MAX`: none) and an operation, an index into a table of two
//! reals each, `(scale, add)`, or `u32::MAX` for the entry's own value. Thread `t` fills
//! entry `t`: `arena[dst] = scale * arena[src] + add`, or `add` without a source, or
//! `own[t]`. Entries fill halo points from interior points only, so their order does
//! not matter.
//!
//! Entry parameters: `count` (`i64`), `entries` (`u32*`), `ops` (`T*`), `own` (`T*`, one
//! per entry; null when no entry has its own value), `arena` (`T*`).

use super::{nvptx_machine, LlvmError};
use crate::ir::Precision;
use inkwell::builder::BuilderError;
use inkwell::context::Context;
use inkwell::targets::FileType;
use inkwell::types::BasicType;
use inkwell::{AddressSpace, IntPredicate};

/// The name of the exchange's PTX entry at a precision.
pub fn halo_entry(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "halo_exchange_f32",
        Precision::F64 => "halo_exchange_f64",
    }
}

/// The PTX of the halo exchange at one precision.
pub fn halo_exchange_ptx(p: Precision) -> Result<String, LlvmError> {
    let invalid = |e: BuilderError| LlvmError::Invalid {
        kernel: halo_entry(p).into(),
        message: e.to_string(),
    };
    let ctx = Context::create();
    let module = ctx.create_module("halo_exchange");
    let b = ctx.create_builder();
    let global = AddressSpace::from(1u16);
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let real = match p {
        Precision::F32 => ctx.f32_type(),
        Precision::F64 => ctx.f64_type(),
    };
    let fn_ty = ctx.void_type().fn_type(
        &[
            i64t.into(),
            i32t.ptr_type(global).into(),
            real.ptr_type(global).into(),
            real.ptr_type(global).into(),
            real.ptr_type(global).into(),
        ],
        false,
    );
    let f = module.add_function(halo_entry(p), fn_ty, None);
    let kernel_md = ctx.metadata_node(&[
        f.as_global_value().as_pointer_value().into(),
        ctx.metadata_string("kernel").into(),
        i32t.const_int(1, false).into(),
    ]);
    module
        .add_global_metadata("nvvm.annotations", &kernel_md)
        .map_err(|e| LlvmError::Invalid {
            kernel: halo_entry(p).into(),
            message: e.to_string(),
        })?;
    let param = |k: u32| f.get_nth_param(k).expect("declared parameter");
    let count = param(0).into_int_value();
    let entries = param(1).into_pointer_value();
    let ops = param(2).into_pointer_value();
    let own = param(3).into_pointer_value();
    let arena = param(4).into_pointer_value();

    let entry = ctx.append_basic_block(f, "entry");
    let work = ctx.append_basic_block(f, "fill");
    let own_value = ctx.append_basic_block(f, "own_value");
    let table = ctx.append_basic_block(f, "table");
    let read = ctx.append_basic_block(f, "read");
    let store = ctx.append_basic_block(f, "store");
    let done = ctx.append_basic_block(f, "done");
    b.position_at_end(entry);
    // The grid dependency point first, as in every kernel's entry.
    let asm = ctx.create_inline_asm(
        ctx.void_type().fn_type(&[], false),
        super::GRID_DEPENDENCY_POINT.to_string(),
        "~{memory}".to_string(),
        true,
        false,
        None,
        false,
    );
    let callable =
        inkwell::values::CallableValue::try_from(asm).map_err(|()| LlvmError::Invalid {
            kernel: halo_entry(p).into(),
            message: "inline assembly is not callable".into(),
        })?;
    b.build_call(callable, &[], "").map_err(invalid)?;
    // Every load goes through the non-coherent path: the tables are read-only, and no
    // entry reads an element another entry writes.
    let ldg = |name: &str, ty: inkwell::types::BasicTypeEnum<'_>| {
        inkwell::intrinsics::Intrinsic::find(name)
            .and_then(|i| i.get_declaration(&module, &[ty, ty.ptr_type(global).into()]))
            .ok_or_else(|| LlvmError::Invalid {
                kernel: halo_entry(p).into(),
                message: format!("no intrinsic {name}"),
            })
    };
    let load_int = ldg("llvm.nvvm.ldg.global.i", i32t.into())?;
    let load_real = ldg("llvm.nvvm.ldg.global.f", real.into())?;
    let real_align = i32t.const_int(if p == Precision::F32 { 4 } else { 8 }, false);
    let sreg = |name: &str| {
        let fn_ty = i32t.fn_type(&[], false);
        let g = module
            .get_function(name)
            .unwrap_or_else(|| module.add_function(name, fn_ty, None));
        b.build_call(g, &[], "").map(|v| {
            v.try_as_basic_value()
                .basic()
                .expect("a value")
                .into_int_value()
        })
    };
    let (ctaid, ntid, tid) = (
        sreg("llvm.nvvm.read.ptx.sreg.ctaid.x").map_err(invalid)?,
        sreg("llvm.nvvm.read.ptx.sreg.ntid.x").map_err(invalid)?,
        sreg("llvm.nvvm.read.ptx.sreg.tid.x").map_err(invalid)?,
    );
    let build = || -> Result<(), BuilderError> {
        let wide = |v| b.build_int_z_extend(v, i64t, "");
        let t = b.build_int_nuw_add(
            b.build_int_nuw_mul(wide(ctaid)?, wide(ntid)?, "")?,
            wide(tid)?,
            "",
        )?;
        let inside = b.build_int_compare(IntPredicate::ULT, t, count, "")?;
        b.build_conditional_branch(inside, work, done)?;

        b.position_at_end(work);
        let at = |base, i| unsafe { b.build_in_bounds_gep(base, &[i], "") };
        let three = b.build_int_nuw_mul(t, i64t.const_int(3, false), "")?;
        let word = |k: u64| -> Result<_, BuilderError> {
            let i = b.build_int_nuw_add(three, i64t.const_int(k, false), "")?;
            let v = b
                .build_call(
                    load_int,
                    &[at(entries, i)?.into(), i32t.const_int(4, false).into()],
                    "",
                )?
                .try_as_basic_value()
                .basic()
                .expect("a value")
                .into_int_value();
            b.build_int_z_extend(v, i64t, "")
        };
        let (dst, src, op) = (word(0)?, word(1)?, word(2)?);
        let read_real = |base, i| -> Result<_, BuilderError> {
            Ok(
                b.build_call(load_real, &[at(base, i)?.into(), real_align.into()], "")?
                    .try_as_basic_value()
                    .basic()
                    .expect("a value")
                    .into_float_value(),
            )
        };
        let marker = i64t.const_int(u32::MAX as u64, false);
        let is_own = b.build_int_compare(IntPredicate::EQ, op, marker, "")?;
        b.build_conditional_branch(is_own, own_value, table)?;

        b.position_at_end(own_value);
        let mine = read_real(own, t)?;
        b.build_unconditional_branch(store)?;

        b.position_at_end(table);
        let op2 = b.build_int_nuw_mul(op, i64t.const_int(2, false), "")?;
        let scale = read_real(ops, op2)?;
        let add_at = b.build_int_nuw_add(op2, i64t.const_int(1, false), "")?;
        let add = read_real(ops, add_at)?;
        let none = b.build_int_compare(
            IntPredicate::EQ,
            src,
            i64t.const_int(u32::MAX as u64, false),
            "",
        )?;
        b.build_conditional_branch(none, store, read)?;

        b.position_at_end(read);
        let x = read_real(arena, src)?;
        let scaled = b.build_float_mul(scale, x, "")?;
        let sum = b.build_float_add(scaled, add, "")?;
        b.build_unconditional_branch(store)?;

        b.position_at_end(store);
        let value = b.build_phi(real, "value")?;
        value.add_incoming(&[(&add, table), (&sum, read), (&mine, own_value)]);
        b.build_store(at(arena, dst)?, value.as_basic_value())?;
        b.build_unconditional_branch(done)?;

        b.position_at_end(done);
        b.build_return(None)?;
        Ok(())
    };
    build().map_err(invalid)?;
    module.verify().map_err(|e| LlvmError::Invalid {
        kernel: halo_entry(p).into(),
        message: e.to_string(),
    })?;
    let tm = nvptx_machine()?;
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    super::codegen::optimise(&module);
    let buf = tm
        .write_to_memory_buffer(&module, FileType::Assembly)
        .map_err(|e| LlvmError::Target {
            what: "emit PTX",
            message: e.to_string(),
        })?;
    Ok(String::from_utf8_lossy(buf.as_slice()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exchange_has_one_entry_per_precision() {
        for p in [Precision::F32, Precision::F64] {
            let ptx = halo_exchange_ptx(p).unwrap();
            assert!(ptx.contains(&format!(".entry {}", halo_entry(p))), "{ptx}");
            let width = if p == Precision::F32 { "f32" } else { "f64" };
            assert!(ptx.contains(&format!("ld.global.nc.{width}")), "{ptx}");
        }
    }
}
