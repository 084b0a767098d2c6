//! One-call compilation from source text to checked IR, with positioned errors.

use crate::front::{rust as rust_front, text};
use crate::ir::Kernel;
use crate::lower::{lower_module, LowerError};

/// A compile error with its position in the source.
#[derive(Debug, Clone, thiserror::Error)]
#[error("line {line}, column {col}: {message}")]
pub struct CompileError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What is wrong, and a `help:` line saying what to do where there is one.
    pub message: String,
}

/// Compiles the kernels of a `.stencil` text.
pub fn compile_text(src: &str) -> Result<Vec<Kernel>, CompileError> {
    let (module, spans) = text::parse_module(src).map_err(|e| CompileError {
        line: e.line,
        col: e.col,
        message: e.message,
    })?;
    lower_module(&module).map_err(|e: LowerError| {
        let (line, col) = spans.line_col(e.span);
        CompileError {
            line,
            col,
            message: e.to_string(),
        }
    })
}

/// Compiles the `#[stencil]` / `#[stencil_fn]` functions of a Rust source text.
pub fn compile_rust_source(src: &str) -> Result<Vec<Kernel>, CompileError> {
    let (module, spans) = rust_front::parse_rust_source(src).map_err(|e| {
        let start = e.span().start();
        CompileError {
            line: start.line,
            col: start.column + 1,
            message: e.to_string(),
        }
    })?;
    lower_module(&module).map_err(|e| {
        let start = spans.get(e.span).start();
        CompileError {
            line: start.line,
            col: start.column + 1,
            message: e.to_string(),
        }
    })
}
