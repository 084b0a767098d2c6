//! `kernels-gen`: the stencil compiler.
//!
//! Front ends ([`front::rust`] for `#[stencil]` functions, [`front::text`] for `.stencil`
//! files) build the surface [`ast`]; [`lower`] checks it and produces the [`ir`]; back ends
//! turn the IR into Rust for the CPU ([`back::rust`]) and, through LLVM, into PTX for CUDA
//! devices or native code for the host ([`llvm`]). [`interp`] is a reference interpreter
//! used by the tests.

pub mod ast;
pub mod back;
pub mod branches;
pub mod cache;
pub mod compile;
pub mod front;
pub mod groups;
pub mod interp;
pub mod ir;
#[cfg(feature = "llvm")]
pub mod llvm;
pub mod lower;
pub mod ops;
mod print;
pub mod sass;

pub use compile::{compile_rust_source, compile_text, CompileError};
pub use ir::{Kernel, Precision};
