//! Running the LLVM lowering on the host through LLVM's JIT.
//!
//! Tests use this to execute, on a machine without a GPU, the same lowering of a kernel
//! that produces its PTX, and compare it with the Rust CPU path and the interpreter.

use super::codegen::{build_module, optimise};
use super::{init_targets, LlvmError, Target};
use crate::ir::{Kernel, Precision};
use inkwell::context::Context;
use inkwell::OptimizationLevel;

/// Compiles `k` at precision `p` for the host and runs it once over the domain described
/// by `slots` (see the calling convention in [`crate::llvm`]).
///
/// # Safety
/// The slots must describe valid fields covering the domain plus the kernel's halo, valid
/// result pointers for the reductions, and scalars of the declared types.
pub unsafe fn run_host(k: &Kernel, p: Precision, slots: &[u64]) -> Result<(), LlvmError> {
    init_targets();
    let ctx = Context::create();
    let module = build_module(&ctx, k, p, Target::Host)?;
    optimise(&module);
    let engine = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .map_err(|e| LlvmError::Target {
            what: "create the host JIT",
            message: e.to_string(),
        })?;
    let name = format!("{}_host", k.name);
    let addr = engine
        .get_function_address(&name)
        .map_err(|e| LlvmError::Target {
            what: "find the JIT-compiled entry",
            message: e.to_string(),
        })?;
    // SAFETY: the entry was generated with exactly this signature.
    let entry: unsafe extern "C" fn(*const u64) = std::mem::transmute(addr);
    entry(slots.as_ptr());
    Ok(())
}
