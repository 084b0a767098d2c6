//! The LLVM back end: IR -> LLVM IR (inkwell) -> PTX for CUDA devices, or native code for
//! the host.
//!
//! One lowering of a kernel's point computation ([`codegen`]) is wrapped in two entries:
//! CUDA kernels (one entry per number of points a thread computes, bounds guards,
//! block-level reduction partials) that the NVPTX target turns into PTX, and a host function (a loop nest over the domain) that
//! the tests JIT-compile and run on the CPU, so CI executes the exact lowering that
//! produces the PTX.
//!
//! # Calling convention
//! Both entries take the same values; the PTX kernel as separate parameters, the host entry
//! as an array of 8-byte slots (`*const u64`), in this order:
//! 1. the extents `n0, n1, n2` (`i64`; 1 for unused axes);
//! 2. per parameter in declaration order:
//!    - field: pointer to the element at interior point (0,0,0), then the strides of axis 1
//!      and axis 2 in elements (`i64`);
//!    - scalar: its value (`f32` in the low 32 bits of a slot, `bool` as 0/1 `i32` on PTX);
//!    - reduction: a pointer to the result: on the host one element; on the device one
//!      partial per thread block (`gridDim.x * gridDim.y * gridDim.z` elements), laid out
//!      by the linear block index, to be combined by a second pass.
//!
//! # Launch geometry of the PTX entries
//! Thread (x, y, z) of block (bx, by, bz) computes the points whose index along axis `a` is
//! `b_a * ntid_a + t_a`, except along the kernel's last axis `L`, where it computes the
//! `P` points from `(b_L * ntid_L + t_L) * P` on (`P` the entry's points per thread). A
//! launch covers the domain with `ceil(n_a / ntid_a)` blocks along each axis and
//! `ceil(n_L / (ntid_L * P))` along `L`.

pub mod block_flags;
pub mod codegen;
pub use codegen::Sampling;
pub mod halo;
pub mod halo_weighted;
pub mod jit;
mod math;
pub mod merge;
pub mod pack;
mod raw;

use crate::ir::{Kernel, Precision};
use inkwell::context::Context;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine,
    TargetTriple,
};
use inkwell::OptimizationLevel;
use std::sync::Once;

/// The GPU architecture the PTX is generated for (the driver JIT-compiles it for newer ones).
pub const PTX_ARCH: &str = "sm_80";
/// The PTX ISA version requested from LLVM 14.
pub const PTX_FEATURES: &str = "+ptx70";

/// The first instruction of every PTX entry (a comment the run time replaces on devices
/// with programmatic dependent launch; see [`stencil_ptx::GRID_DEPENDENCY_POINT`]).
pub use stencil_ptx::GRID_DEPENDENCY_POINT;

/// Where the generated code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A CUDA device, through PTX.
    Ptx,
    /// This machine, through LLVM's JIT.
    Host,
}

/// An error from LLVM.
#[derive(Debug, thiserror::Error)]
pub enum LlvmError {
    /// The generated module failed LLVM's verifier (a compiler bug).
    #[error("LLVM rejected the generated code for kernel `{kernel}`: {message}")]
    Invalid {
        /// The kernel.
        kernel: String,
        /// LLVM's message.
        message: String,
    },
    /// A target could not be set up or code could not be emitted.
    #[error("LLVM could not {what}: {message}")]
    Target {
        /// What failed.
        what: &'static str,
        /// LLVM's message.
        message: String,
    },
}

static INIT: Once = Once::new();

/// Initialises the LLVM targets this crate uses (once per process).
pub fn init_targets() {
    INIT.call_once(|| {
        let config = InitializationConfig::default();
        LlvmTarget::initialize_nvptx(&config);
        // The host target is needed for the JIT; failing here only disables the JIT.
        let _ = LlvmTarget::initialize_native(&config);
    });
}

/// The name of the PTX entry of a kernel at a precision, e.g. `jacobi_f64`: one point per
/// thread. The PTX also holds the variants of [`tile_variants`], named by
/// [`variant_entry`].
pub fn entry_name(k: &Kernel, p: Precision) -> String {
    format!("{}_{}", k.name, p.name())
}

/// The entry name of the PTX variant that reads sampled grids as `sampling` says:
/// [`entry_name`] for software interpolation, with `_tex` appended for textures.
pub fn sampled_entry_name(k: &Kernel, p: Precision, sampling: Sampling) -> String {
    match sampling {
        Sampling::Software => entry_name(k, p),
        Sampling::Texture => format!("{}_tex", entry_name(k, p)),
    }
}

/// The tile variants a kernel's PTX has entries for: how many points per thread along
/// the last axis the entries without vectors compute, and those with vectors (of
/// [`vector_width`] points along axis 0). In 2D and 3D a thread's points are consecutive
/// along the last axis (rows in 2D, planes in 3D), which keeps warps' accesses coalesced
/// along axis 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileVariants {
    /// Points per thread of the entries without vectors: always 1, and more only for a
    /// kernel without vector entries.
    pub scalar: &'static [u32],
    /// Points per thread of the vector entries; empty when the kernel has none.
    pub vector: &'static [u32],
}

impl TileVariants {
    /// Every entry as (vector width, points per thread), widths of 1 for the entries
    /// without vectors, at precision `p`.
    pub fn entries(&self, k: &Kernel, p: Precision) -> Vec<(u32, u32)> {
        let width = vector_width(k, p);
        let scalar = self.scalar.iter().map(|&points| (1, points));
        scalar
            .chain(self.vector.iter().map(|&points| (width, points)))
            .collect()
    }
}

/// The tile variants of a kernel's PTX. The rule, from full searches of every shape on an
/// H100 and an H200 (`docs/benchmarks.md`, "Build time"): a large 2D or
/// 3D domain is won by vector entries of 1, 2 or 4 points per thread (the launch-shape
/// model proposes only those); small domains, and fields not aligned to the vectors, by
/// one point per thread without vectors. Entries of 8 points, and of several points
/// without vectors where vectors exist, were within a few percent of those when they won
/// a search, and were about two thirds of the LLVM work. Line, vertex and 1D kernels have one entry.
pub fn tile_variants(k: &Kernel) -> TileVariants {
    const ONE: &[u32] = &[1];
    const TILES: &[u32] = &[1, 2, 4];
    if k.dims < 2 || !k.is_tileable() {
        TileVariants {
            scalar: ONE,
            vector: &[],
        }
    } else if vector_width(k, Precision::F64) > 1 && !k.is_staged() {
        TileVariants {
            scalar: ONE,
            vector: TILES,
        }
    } else {
        TileVariants {
            scalar: TILES,
            vector: &[],
        }
    }
}

/// The width of the vector variants of a kernel's PTX entries at precision `p`: how many
/// consecutive points along axis 0 a thread computes so that each row it reads or writes
/// whole moves as one 16-byte access (4 in `f32`, 2 in `f64`; set by the widest element
/// of any field). 1 for 1D kernels, which have no vector variants.
pub fn vector_width(k: &Kernel, p: Precision) -> u32 {
    // Fields of integers or booleans are read and written one element at a time.
    if k.dims < 2
        || k.fields.is_empty()
        || !k.is_tileable()
        || k.is_staged()
        || !k.fields.iter().all(|f| f.elem.is_float())
    {
        return 1;
    }
    let widest = k
        .fields
        .iter()
        .map(|f| match f.elem.concrete(p) {
            crate::ir::Ty::F32 => 4,
            _ => 8,
        })
        .max()
        .unwrap_or(8);
    16 / widest
}

/// The static shared memory of a kernel's PTX entries at precision `p`: one value per
/// warp of the largest block ([`codegen::WARPS_PER_BLOCK`]) per reduction.
pub fn static_shared_bytes(k: &Kernel, p: Precision) -> u32 {
    k.reductions
        .iter()
        .map(|r| {
            let size = match r.ty.concrete(p) {
                crate::ir::Ty::F32 => 4,
                _ => 8,
            };
            codegen::WARPS_PER_BLOCK * size
        })
        .sum()
}

/// The name of the entry whose threads compute `vector` points along axis 0 times
/// `points` along the last axis: `base` for one point, else with `_v{vector}` and
/// `_p{points}` appended (e.g. `jacobi_f32_v4_p2`, `jacobi_f64_p4`).
pub fn variant_entry(base: &str, vector: u32, points: u32) -> String {
    let mut name = base.to_string();
    if vector > 1 {
        name += &format!("_v{vector}");
    }
    if points > 1 {
        name += &format!("_p{points}");
    }
    name
}

fn nvptx_machine() -> Result<TargetMachine, LlvmError> {
    init_targets();
    let triple = TargetTriple::create("nvptx64-nvidia-cuda");
    let target = LlvmTarget::from_triple(&triple).map_err(|e| LlvmError::Target {
        what: "find the NVPTX target",
        message: e.to_string(),
    })?;
    target
        .create_target_machine(
            &triple,
            PTX_ARCH,
            PTX_FEATURES,
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or(LlvmError::Target {
            what: "create an NVPTX target machine",
            message: "unsupported options".into(),
        })
}

/// The optimised LLVM IR of a kernel, as text.
pub fn llvm_ir(k: &Kernel, p: Precision, target: Target) -> Result<String, LlvmError> {
    init_targets();
    let ctx = Context::create();
    let module = codegen::build_module(&ctx, k, p, target)?;
    if target == Target::Ptx {
        let tm = nvptx_machine()?;
        module.set_triple(&tm.get_triple());
        module.set_data_layout(&tm.get_target_data().get_data_layout());
    }
    codegen::optimise(&module);
    Ok(module.print_to_string().to_string())
}

/// The PTX of a kernel at one precision.
pub fn ptx(k: &Kernel, p: Precision) -> Result<String, LlvmError> {
    ptx_with(k, p, Sampling::Software)
}

/// The PTX of a kernel at one precision, reading its sampled grids as `sampling` says.
///
/// Each tile variant is generated and optimised by LLVM as a module of its own, the
/// variants in parallel (rayon's threads, one per core, shared with other kernels), and
/// the modules merged into one ([`merge::merge_ptx`]).
pub fn ptx_with(k: &Kernel, p: Precision, sampling: Sampling) -> Result<String, LlvmError> {
    use rayon::prelude::*;
    if k.is_vertex() || k.line.is_some() {
        return entry_ptx(k, p, sampling, None);
    }
    let parts = tile_variants(k)
        .entries(k, p)
        .into_par_iter()
        .map(|variant| entry_ptx(k, p, sampling, Some(variant)))
        .collect::<Result<Vec<String>, LlvmError>>()?;
    merge::merge_ptx(&k.name, &parts)
}

/// The PTX of one tile variant `(vector, points)` of a kernel, or of all its entries.
fn entry_ptx(
    k: &Kernel,
    p: Precision,
    sampling: Sampling,
    variant: Option<(u32, u32)>,
) -> Result<String, LlvmError> {
    let ctx = Context::create();
    let module = match variant {
        Some(v) => codegen::build_entry_module(&ctx, k, p, sampling, v)?,
        None => codegen::build_module_with(&ctx, k, p, Target::Ptx, sampling)?,
    };
    let tm = nvptx_machine()?;
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    codegen::optimise(&module);
    let buf = tm
        .write_to_memory_buffer(&module, FileType::Assembly)
        .map_err(|e| LlvmError::Target {
            what: "emit PTX",
            message: e.to_string(),
        })?;
    Ok(String::from_utf8_lossy(buf.as_slice()).into_owned())
}

/// A 64-bit FNV-1a hash of PTX text: what the run time uses to identify a kernel's code in
/// its module and launch-shape caches.
pub fn ptx_hash(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
