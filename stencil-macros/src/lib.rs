//! The `#[stencil]`, `#[stencil_fn]` and `#[stencils]` attribute macros.
//!
//! Use them through `stencil_runtime` (which re-exports them). [`parse`] turns the
//! annotated Rust items into the compiler's AST and IR; [`generate`] emits, per kernel, a
//! module with the CPU implementation, the embedded PTX and a typed `launch` function.

use proc_macro::TokenStream;

mod generate;
mod parse;

/// Compiles a kernel: `#[stencil] fn name<T: Real>(u: In<T>, out: Out<T>, ..) { .. }`.
///
/// Options: `#[stencil(dims = 2)]` when the kernel reads no offsets; `halo = N` to make
/// reading farther than `N` cells an error. The function becomes a module `name` with
/// `launch`, `cpu`, `PTX_F32`, `PTX_F64`, `IR` and `SOURCE`. See `docs/language.md`.
#[proc_macro_attribute]
pub fn stencil(attr: TokenStream, item: TokenStream) -> TokenStream {
    parse::standalone_kernel(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Marks an inlined helper (a limiter, a flux function). Helpers live in a `#[stencils]`
/// module together with the kernels that call them.
#[proc_macro_attribute]
pub fn stencil_fn(_attr: TokenStream, _item: TokenStream) -> TokenStream {
    syn::Error::new(
        proc_macro2::Span::call_site(),
        "`#[stencil_fn]` helpers must be inside a `#[stencils]` module\n\n= help: put the helper and the kernels that call it in `#[stencils] mod name { .. }`",
    )
    .into_compile_error()
    .into()
}

/// Compiles every `#[stencil]` kernel and `#[stencil_fn]` helper of an inline module;
/// kernels may call the helpers, which are inlined. Other items pass through unchanged.
#[proc_macro_attribute]
pub fn stencils(attr: TokenStream, item: TokenStream) -> TokenStream {
    parse::stencil_module(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
