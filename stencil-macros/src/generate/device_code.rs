//! A kernel's device code as the macro embeds it: the PTX of a precision (from the disk
//! cache where unchanged), the SASS the build asked for (`STENCIL_SASS`,
//! `kernels_gen::sass`), and the tokens of a `stencil_runtime::cuda::Ptx` value.

use kernels_gen::ir::{Kernel, Precision};
use kernels_gen::llvm;
use kernels_gen::sass::{self, Sass};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// One precision's PTX and its SASS (none unless the build asked).
pub(crate) struct DeviceCode {
    /// The PTX text.
    pub text: String,
    /// The text assembled for each architecture named in `STENCIL_SASS`.
    pub sass: Vec<Sass>,
}

/// The PTX of `k` at `p` with `sampling`, and its SASS; the error names which failed.
pub(crate) fn device_code(
    k: &Kernel,
    p: Precision,
    sampling: llvm::Sampling,
) -> Result<DeviceCode, String> {
    let text = kernels_gen::cache::cached_ptx(k, p, sampling)
        .map_err(|e| format!("PTX generation failed: {e}"))?;
    with_sass(text)
}

/// `text` with its SASS.
pub(crate) fn with_sass(text: String) -> Result<DeviceCode, String> {
    let sass = sass::for_requested(&text).map_err(|e| e.to_string())?;
    Ok(DeviceCode { text, sass })
}

/// The tokens of a `&'static [stencil_runtime::cuda::Sass]` holding `sass`.
pub(crate) fn sass_tokens(sass: &[Sass]) -> TokenStream {
    let items = sass.iter().map(|s| {
        let (arch, dependent) = (s.arch, s.dependent);
        let image = Literal::byte_string(&s.image);
        quote!(::stencil_runtime::cuda::Sass { arch: #arch, dependent: #dependent, image: #image })
    });
    quote!(&[#(#items),*])
}

/// The tokens of a `stencil_runtime::cuda::Ptx` with the text `text` (an expression of
/// type `&'static str`), for the code `code`.
pub(crate) fn ptx_tokens(
    text: TokenStream,
    code: &DeviceCode,
    entry: &str,
    vector: u32,
) -> TokenStream {
    let hash = llvm::ptx_hash(&code.text);
    let sass = sass_tokens(&code.sass);
    quote!(::stencil_runtime::cuda::Ptx { text: #text, entry: #entry, hash: #hash, vector: #vector, sass: #sass })
}
