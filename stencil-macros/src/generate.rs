//! From checked IR to the tokens of a kernel module.

use kernels_gen::back::rust::cpu_function;
use kernels_gen::ir::{Kernel, Precision};
use kernels_gen::llvm;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

mod consts;
mod device_code;
mod launcher;
pub(crate) use device_code::ptx_tokens;
pub(crate) use device_code::with_sass;
use device_code::{device_code, DeviceCode};
use launcher::{launcher, Parts};

/// The module that replaces a `#[stencil] fn`: constants, the CPU function, the PTX, and
/// the typed launcher. A kernel defined for several dimensions (`dims = [2, 3]`) becomes a
/// module with one such module per dimension (`d2`, `d3`) and launchers that pick one by
/// the dimension of the domain. A kernel with compile-time constants (`consts(a = [0,
/// 1])`) becomes a module with one such module per choice of their values (`a_0`, `a_1`)
/// and launchers that take the constants as arguments and pick one by their values.
pub fn kernel_module(
    kernels: &[Kernel],
    f: &syn::ItemFn,
    source: &str,
) -> syn::Result<TokenStream> {
    let name = &f.sig.ident;
    let vis = &f.vis;
    let docs: Vec<&syn::Attribute> = f
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let body = if kernels[0].consts.is_empty() {
        of_dims_items(kernels, f, source)?
    } else {
        consts::instances_items(kernels, f, source)?
    };
    Ok(quote! {
        #(#docs)*
        #[allow(non_snake_case, non_camel_case_types, clippy::all)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;
            #body
        }
    })
}

/// The items of the kernels of one definition (and one choice of its compile-time
/// constants): those of its one kernel, or of its kernels for several dimensions.
fn of_dims_items(kernels: &[Kernel], f: &syn::ItemFn, source: &str) -> syn::Result<TokenStream> {
    match kernels {
        [k] => kernel_items(k, f, source),
        _ => family_items(kernels, f, source),
    }
}

/// The items of a kernel defined for several dimensions: a module per dimension and the
/// launchers that pick one.
fn family_items(kernels: &[Kernel], f: &syn::ItemFn, source: &str) -> syn::Result<TokenStream> {
    let rt = quote!(::stencil_runtime);
    let mut modules = Vec::new();
    let mut arms = Vec::new();
    let mut block_arms = Vec::new();
    let mut dims = Vec::new();
    // The launchers' parameters, the same for every dimension.
    let sig = Parts::of(&kernels[0], &rt);
    for k in kernels {
        let d = k.dims as usize;
        let m = format_ident!("d{}", d);
        let items = kernel_items(k, f, source)?;
        let doc = format!("`{}` on {d}-dimensional domains.", k.name);
        modules.push(quote! {
            #[doc = #doc]
            pub mod #m {
                #[allow(unused_imports)]
                use super::*;
                #items
            }
        });
        dims.push(d);
        let args = &sig.args;
        arms.push(quote!(#d => #m::launch(backend, #(#args),*),));
        block_arms.push(quote!(#d => #m::launch_blocks(backend, blocks, #(#args),*),));
    }
    let k = &kernels[0];
    let Parts {
        generics,
        domain,
        blocks,
        ret,
        domain_field,
        ..
    } = &sig;
    let (params, block_params) = (&domain.params, &blocks.params);
    let name_str = &k.name;
    let doc = format!(
        "Runs `{}` over the interior of its first output field on `backend`, with the \
         kernel of the field's dimension (one of {dims:?}).",
        k.name
    );
    let on_blocks = sig.on_blocks;
    let block_launch = on_blocks.then(|| {
        let doc = format!(
            "Runs `{}` over the blocks of `blocks` on `backend`, with the kernel of the \
             grid's dimension (one of {dims:?}).",
            k.name
        );
        quote! {
            #[doc = #doc]
            pub fn launch_blocks #generics (backend: &#rt::Backend, blocks: &#rt::BlockList, #(#block_params),*) -> ::core::result::Result<#ret, #rt::Error> {
                match blocks.geometry().dims {
                    #(#block_arms)*
                    have => Err(#rt::Error::DefinedDimensions { kernel: NAME, have, defined: DIMS }),
                }
            }
        }
    });
    Ok(quote! {
        /// The kernel's name.
        pub const NAME: &str = #name_str;
        /// The numbers of dimensions the kernel is defined for.
        pub const DIMS: &[usize] = &[#(#dims),*];
        /// The stencil source this kernel was compiled from (with its helpers).
        pub const SOURCE: &str = #source;
        #(#modules)*
        #[doc = #doc]
        pub fn launch #generics (backend: &#rt::Backend, #(#params),*) -> ::core::result::Result<#ret, #rt::Error> {
            match #domain_field.dims() {
                #(#arms)*
                have => Err(#rt::Error::DefinedDimensions { kernel: NAME, have, defined: DIMS }),
            }
        }
        #block_launch
    })
}

/// The constants, CPU function, PTX and launchers of one kernel.
fn kernel_items(k: &Kernel, f: &syn::ItemFn, source: &str) -> syn::Result<TokenStream> {
    let rt = quote!(::stencil_runtime);
    let name = &f.sig.ident;
    let name_str = k.name.clone();
    let ir = k.to_string();
    let dims = k.dims as usize;
    let halo = k.halo() as usize;
    let failed = |e: String| syn::Error::new(name.span(), e);
    // The PTX (and SASS) of each precision and of the texture variants in a thread of its
    // own, from the disk cache where the kernel is unchanged.
    let sampled = !k.sampled.is_empty();
    let [code32, code64, tex32, tex64] = std::thread::scope(|s| {
        let variant = |p: Precision, sampling: llvm::Sampling, wanted: bool| {
            s.spawn(move || wanted.then(|| device_code(k, p, sampling)).transpose())
        };
        let (soft, tex) = (llvm::Sampling::Software, llvm::Sampling::Texture);
        let handles = [
            variant(Precision::F32, soft, true),
            variant(Precision::F64, soft, true),
            variant(Precision::F32, tex, sampled),
            variant(Precision::F64, tex, sampled),
        ];
        handles.map(|h| h.join().expect("PTX generation does not panic"))
    });
    let missing = || "PTX generation failed: no code".to_string();
    let code32 = code32
        .map_err(failed)?
        .ok_or_else(missing)
        .map_err(failed)?;
    let code64 = code64
        .map_err(failed)?
        .ok_or_else(missing)
        .map_err(failed)?;
    let (tex32, tex64) = (tex32.map_err(failed)?, tex64.map_err(failed)?);
    let (ptx32, ptx64) = (&code32.text, &code64.text);
    let (entry32, entry64) = (
        llvm::entry_name(k, Precision::F32),
        llvm::entry_name(k, Precision::F64),
    );
    let cpu = cpu_function(k, &rt);
    let launch = launcher(k, &rt);
    let tiles = llvm::tile_variants(k);
    let (scalar_points, vector_points) = (tiles.scalar, tiles.vector);
    let line = match &k.line {
        Some(l) => {
            let a = l.axis as usize;
            quote!(Some(#a))
        }
        None => quote!(None),
    };
    let texture = match (tex32, tex64) {
        (Some(t32), Some(t64)) => {
            let variant = |p: Precision, code: DeviceCode| {
                let entry = llvm::sampled_entry_name(k, p, llvm::Sampling::Texture);
                let text = &code.text;
                ptx_tokens(quote!(#text), &code, &entry, llvm::vector_width(k, p))
            };
            let (t32, t64) = (variant(Precision::F32, t32), variant(Precision::F64, t64));
            quote!(Some([#t32, #t64]))
        }
        _ => quote!(None),
    };
    let in_place = !k.reruns_idempotently();
    let vertex = k.is_vertex();
    let staging = match k.stage_layout() {
        Some(l) => {
            let boxes = l
                .array_boxes()
                .into_iter()
                .map(|(lo, hi)| quote!(([#(#lo),*], [#(#hi),*])));
            let (b32, b64) = (l.value_bytes(Precision::F32), l.value_bytes(Precision::F64));
            let fixed = [
                llvm::static_shared_bytes(k, Precision::F32),
                llvm::static_shared_bytes(k, Precision::F64),
            ];
            quote!(Some(#rt::cuda::Staging { boxes: &[#(#boxes),*], bytes_f32: &[#(#b32),*], bytes_f64: &[#(#b64),*], static_bytes: [#(#fixed),*] }))
        }
        None => quote!(None),
    };
    let ptx_f32 = ptx_tokens(
        quote!(PTX_F32),
        &code32,
        &entry32,
        llvm::vector_width(k, Precision::F32),
    );
    let ptx_f64 = ptx_tokens(
        quote!(PTX_F64),
        &code64,
        &entry64,
        llvm::vector_width(k, Precision::F64),
    );
    Ok(quote! {
            /// The kernel's name.
            pub const NAME: &str = #name_str;
            /// Number of grid dimensions.
            pub const DIMS: usize = #dims;
            /// The halo width the kernel reads beyond its domain.
            pub const HALO: usize = #halo;
            /// The checked, optimised IR (what `kernels-gen --emit ir` prints).
            pub const IR: &str = #ir;
            /// The stencil source this kernel was compiled from (with its helpers).
            pub const SOURCE: &str = #source;
            /// PTX with `T = f32`; entry point [`ENTRY_F32`].
            pub const PTX_F32: &str = #ptx32;
            /// PTX with `T = f64`; entry point [`ENTRY_F64`].
            pub const PTX_F64: &str = #ptx64;
            /// Name of the PTX entry in [`PTX_F32`].
            pub const ENTRY_F32: &str = #entry32;
            /// Name of the PTX entry in [`PTX_F64`].
            pub const ENTRY_F64: &str = #entry64;
            /// The kernel's CUDA code as the run time launches it.
            pub const CODE: #rt::cuda::KernelCode = #rt::cuda::KernelCode {
                name: NAME,
                dims: DIMS,
                f32: #ptx_f32,
                f64: #ptx_f64,
                tiles: #rt::cuda::Tiles { scalar: &[#(#scalar_points),*], vector: &[#(#vector_points),*] },
                line: #line,
                in_place: #in_place,
                vertex: #vertex,
                texture: #texture,
                staging: #staging,
            };
            #cpu
            #launch
    })
}
