//! `kernels-gen`: compile a `.stencil` file (or the `#[stencil]` functions of a `.rs` file)
//! and print the IR, the LLVM IR, the PTX or the generated Rust.

use clap::{Parser, ValueEnum};
use kernels_gen::llvm::{self, Target};
use kernels_gen::{compile_rust_source, compile_text, Precision};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Emit {
    /// The checked, optimised kernel IR.
    Ir,
    /// Optimised LLVM IR for the NVPTX target.
    Llvm,
    /// Optimised LLVM IR for the host (what the JIT runs).
    LlvmHost,
    /// PTX for CUDA devices (sm_80, loads on any newer GPU).
    Ptx,
    /// PTX whose sampled grids are read through texture objects with hardware filtering
    PtxTexture,
    /// The Rust code of the CPU path.
    Rust,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Prec {
    F32,
    F64,
}

/// Compile stencil kernels and print what the compiler makes of them.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// A `.stencil` file, or a `.rs` file with `#[stencil]` functions.
    file: PathBuf,
    /// What to print.
    #[arg(long, value_enum, default_value = "ir")]
    emit: Emit,
    /// Precision for the generic `T` (LLVM IR and PTX).
    #[arg(long, value_enum, default_value = "f64")]
    precision: Prec,
    /// Only this kernel (default: all kernels in the file).
    #[arg(long)]
    kernel: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let path = args.file.display();
    let src =
        std::fs::read_to_string(&args.file).map_err(|e| format!("cannot read {path}: {e}"))?;
    let is_rust = args.file.extension().is_some_and(|e| e == "rs");
    let kernels = if is_rust {
        compile_rust_source(&src)
    } else {
        compile_text(&src)
    }
    .map_err(|e| format!("{path}:{e}"))?;
    let selected: Vec<_> = kernels
        .iter()
        .filter(|k| args.kernel.as_ref().is_none_or(|n| &k.name == n))
        .collect();
    if kernels.is_empty() {
        let what = if is_rust {
            "functions marked `#[stencil]`"
        } else {
            "`#[stencil]` functions"
        };
        return Err(format!(
            "{path} holds no kernels: write one or more {what} in it (see kernels-gen/examples/jacobi.stencil)"
        ));
    }
    if selected.is_empty() {
        let names: Vec<_> = kernels.iter().map(|k| k.name.as_str()).collect();
        return Err(format!(
            "no kernel {} in {path}; it has: {}",
            args.kernel.as_deref().unwrap_or(""),
            names.join(", ")
        ));
    }
    let p = match args.precision {
        Prec::F32 => Precision::F32,
        Prec::F64 => Precision::F64,
    };
    for k in selected {
        let out = match args.emit {
            Emit::Ir => k.to_string(),
            Emit::Llvm => llvm::llvm_ir(k, p, Target::Ptx).map_err(|e| e.to_string())?,
            Emit::LlvmHost => llvm::llvm_ir(k, p, Target::Host).map_err(|e| e.to_string())?,
            Emit::Ptx => llvm::ptx(k, p).map_err(|e| e.to_string())?,
            Emit::PtxTexture => {
                llvm::ptx_with(k, p, llvm::Sampling::Texture).map_err(|e| e.to_string())?
            }
            Emit::Rust => {
                let rt = quote::quote!(::stencil_runtime);
                let tokens = kernels_gen::back::rust::cpu_function(k, &rt);
                let file = syn::parse2::<syn::File>(tokens).map_err(|e| e.to_string())?;
                prettyplease::unparse(&file)
            }
        };
        println!("{out}");
    }
    Ok(())
}
