//! From checked IR to the tokens of a kernel module.

use kernels_gen::back::rust::{cpu_function, ty_tokens};
use kernels_gen::ir::{Access, IndexMap, Kernel, ParamKind, Precision, ReduceOp, Ty};
use kernels_gen::llvm;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The module that replaces a `#[stencil] fn`: constants, the CPU function, the PTX, and
/// the typed launcher.
pub fn kernel_module(k: &Kernel, f: &syn::ItemFn, source: &str) -> syn::Result<TokenStream> {
    let rt = quote!(::stencil_runtime);
    let name = &f.sig.ident;
    let vis = &f.vis;
    let docs: Vec<&syn::Attribute> = f
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let name_str = k.name.clone();
    let ir = k.to_string();
    let dims = k.dims as usize;
    let halo = k.halo() as usize;
    let failed =
        |e: llvm::LlvmError| syn::Error::new(name.span(), format!("PTX generation failed: {e}"));
    // The PTX of each precision (and of the texture variants) in a thread of its own,
    // from the disk cache where the kernel is unchanged.
    let sampled = !k.sampled.is_empty();
    let [ptx32, ptx64, tex32, tex64] = std::thread::scope(|s| {
        let variant = |p: Precision, sampling: llvm::Sampling, wanted: bool| {
            s.spawn(move || {
                if wanted {
                    llvm::cache::cached_ptx(k, p, sampling).map(Some)
                } else {
                    Ok(None)
                }
            })
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
    let (ptx32, ptx64) = (
        ptx32.map_err(failed)?.unwrap_or_default(),
        ptx64.map_err(failed)?.unwrap_or_default(),
    );
    let (tex32, tex64) = (tex32.map_err(failed)?, tex64.map_err(failed)?);
    let (entry32, entry64) = (
        llvm::entry_name(k, Precision::F32),
        llvm::entry_name(k, Precision::F64),
    );
    let cpu = cpu_function(k, &rt);
    let launch = launcher(k, &rt);
    let (hash32, hash64) = (llvm::ptx_hash(&ptx32), llvm::ptx_hash(&ptx64));
    let points = llvm::point_variants(k);
    let line = match &k.line {
        Some(l) => {
            let a = l.axis as usize;
            quote!(Some(#a))
        }
        None => quote!(None),
    };
    let texture = match (tex32, tex64) {
        (Some(t32), Some(t64)) => {
            let variant = |p: Precision, text: String| {
                let entry = llvm::sampled_entry_name(k, p, llvm::Sampling::Texture);
                let hash = llvm::ptx_hash(&text);
                let vector = llvm::vector_width(k, p);
                quote!(#rt::cuda::Ptx { text: #text, entry: #entry, hash: #hash, vector: #vector })
            };
            let (t32, t64) = (variant(Precision::F32, t32), variant(Precision::F64, t64));
            quote!(Some([#t32, #t64]))
        }
        _ => quote!(None),
    };
    let in_place = !k.reruns_idempotently();
    let vertex = k.is_vertex();
    let (vec32, vec64) = (
        llvm::vector_width(k, Precision::F32),
        llvm::vector_width(k, Precision::F64),
    );
    Ok(quote! {
        #(#docs)*
        #[allow(non_snake_case, non_camel_case_types, clippy::all)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;
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
                f32: #rt::cuda::Ptx { text: PTX_F32, entry: ENTRY_F32, hash: #hash32, vector: #vec32 },
                f64: #rt::cuda::Ptx { text: PTX_F64, entry: ENTRY_F64, hash: #hash64, vector: #vec64 },
                points: &[#(#points),*],
                line: #line,
                in_place: #in_place,
                vertex: #vertex,
                texture: #texture,
            };
            #cpu
            #launch
        }
    })
}

fn launcher(k: &Kernel, rt: &TokenStream) -> TokenStream {
    let generics = if k.is_generic() {
        quote!(<T: #rt::Real>)
    } else {
        quote!()
    };
    let mut params = Vec::new();
    let mut checks = Vec::new();
    let mut call_args = Vec::new();
    let mut cuda_args = Vec::new();
    // The same for `launch_blocks`, where fields are block fields.
    let mut block_params = Vec::new();
    let mut block_checks = Vec::new();
    let mut block_call_args = Vec::new();
    let mut block_cuda_args = Vec::new();
    let mesh_ident = k.mesh.as_ref().map(|m| format_ident!("{}", m));
    let domain_field = k
        .fields
        .iter()
        .find(|f| f.access.is_written())
        .or(k.fields.first())
        .map(|f| format_ident!("{}", f.name));
    for &(kind, i) in &k.param_order {
        match kind {
            ParamKind::Field => {
                let f = &k.fields[i as usize];
                let id = format_ident!("{}", f.name);
                let t = ty_tokens(f.elem);
                let fname = &f.name;
                let fhalo = f.halo() as usize;
                let map = match f.map {
                    IndexMap::Same => quote!(#rt::launch::FieldMap::Same),
                    IndexMap::Fine => quote!(#rt::launch::FieldMap::Fine),
                    IndexMap::Coarse => quote!(#rt::launch::FieldMap::Coarse),
                };
                let reach = (0..3).map(|a| {
                    let (lo, hi) = (f.reach_lo[a], f.reach_hi[a]);
                    quote!((#lo, #hi))
                });
                checks.push(match &mesh_ident {
                    Some(m) => quote! {
                        #rt::mesh::check_vertex_field(NAME, #fname, #m, #id)?;
                    },
                    None => quote! {
                        #rt::launch::check_field(NAME, DIMS, &domain, #rt::launch::FieldSpec { name: #fname, halo: #fhalo, map: #map, reach: [#(#reach),*] }, #id)?;
                    },
                });
                match f.access {
                    Access::In => {
                        params.push(quote!(#id: &#rt::Field<#t>));
                        call_args.push(quote!(#id.view(NAME, #fname)?));
                        block_params.push(quote!(#id: &#rt::BlockField<#t>));
                        block_call_args.push(quote!(#id.cpu_view(NAME, #fname)?));
                    }
                    Access::Out | Access::InOut => {
                        params.push(quote!(#id: &mut #rt::Field<#t>));
                        call_args.push(quote!(#id.view_mut(NAME, #fname)?));
                        block_params.push(quote!(#id: &mut #rt::BlockField<#t>));
                        block_call_args.push(quote!(#id.cpu_view_mut(NAME, #fname)?));
                    }
                }
                block_checks.push(quote!(blocks.check_field(NAME, DIMS, #fname, #fhalo, &*#id)?;));
                cuda_args.push(quote!(l.field(#fname, &*#id)?;));
                block_cuda_args.push(quote!(l.block_field(#fname, &*#id)?;));
            }
            ParamKind::Scalar => {
                let s = &k.scalars[i as usize];
                let id = format_ident!("{}", s.name);
                let t = ty_tokens(s.ty);
                params.push(quote!(#id: #t));
                call_args.push(quote!(#id));
                block_params.push(quote!(#id: #t));
                block_call_args.push(quote!(#id));
                if k.red_black == Some(i) {
                    let pname = &s.name;
                    checks.push(quote!(#rt::launch::check_colour(NAME, #pname, #id)?;));
                    block_checks.push(quote!(#rt::launch::check_colour(NAME, #pname, #id)?;));
                }
                let arg = match s.ty {
                    Ty::Real => quote!(l.real(#id);),
                    Ty::F32 => quote!(l.f32(#id);),
                    Ty::F64 => quote!(l.f64(#id);),
                    Ty::Int => quote!(l.int(#id);),
                    Ty::Bool => quote!(l.bool(#id);),
                };
                cuda_args.push(arg.clone());
                block_cuda_args.push(arg);
            }
            ParamKind::Mesh => {
                let id = mesh_ident.clone().expect("a vertex kernel names its mesh");
                let pname = id.to_string();
                params.push(quote!(#id: &#rt::mesh::VertexSet));
                call_args.push(quote!(#id.cpu_view()));
                cuda_args.push(quote!(l.mesh(#pname, #id)?;));
            }
            ParamKind::Sampled => {
                let g = &k.sampled[i as usize];
                let id = format_ident!("{}", g.name);
                let t = ty_tokens(g.elem);
                let gname = &g.name;
                params.push(quote!(#id: &#rt::SampledGrid<#t>));
                call_args.push(quote!(#id.cpu_view(NAME, #gname)?));
                cuda_args.push(quote!(l.sampled(#gname, #id)?;));
            }
            ParamKind::Reduction => {
                let r = &k.reductions[i as usize];
                let op = match r.op {
                    ReduceOp::Sum => quote!(#rt::cuda::Reduce::Sum),
                    ReduceOp::Max => quote!(#rt::cuda::Reduce::Max),
                    ReduceOp::Min => quote!(#rt::cuda::Reduce::Min),
                };
                let p = precision_tokens(r.ty, rt);
                cuda_args.push(quote!(l.reduction(#op, #p);));
                block_cuda_args.push(quote!(l.reduction(#op, #p);));
            }
        }
    }
    let red_types: Vec<TokenStream> = k.reductions.iter().map(|r| ty_tokens(r.ty)).collect();
    let ret = match red_types.len() {
        0 => quote!(()),
        1 => quote!(#(#red_types)*),
        _ => quote!((#(#red_types),*)),
    };
    // The values from the device, converted (exactly) from f64 to each reduction's type.
    let red_values: Vec<TokenStream> = k
        .reductions
        .iter()
        .enumerate()
        .map(|(i, r)| match r.ty {
            Ty::F32 => quote!(values[#i] as f32),
            Ty::F64 => quote!(values[#i]),
            _ => quote!(<T as #rt::Real>::from_f64(values[#i])),
        })
        .collect();
    let cuda_ret = match red_values.len() {
        0 => quote!(()),
        1 => quote!(#(#red_values)*),
        _ => quote!((#(#red_values),*)),
    };
    let precision = if k.is_generic() {
        quote!(<T as #rt::Real>::PRECISION)
    } else {
        quote!(#rt::Precision::F64)
    };
    let red_doc = if k.reductions.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = k
            .reductions
            .iter()
            .map(|r| format!("`{}` ({})", r.name, r.op.type_name().to_lowercase()))
            .collect();
        format!(" Returns the reductions {}.", names.join(", "))
    };
    let doc = match &k.mesh {
        Some(m) => format!(
            "Runs `{}` once per vertex of the set `{m}` on `backend`.{red_doc}\n\n\
             Fails, before touching any memory, if a field does not hold one value per vertex \
             of the set's mesh, or the set's tables are not on the backend.",
            k.name
        ),
        None => format!(
            "Runs `{}` over the interior of its first output field on `backend`.{red_doc}\n\n\
             Fails, before touching any memory, if a field's dimension or extent differs from the \
             domain or its halo is narrower than the kernel reads.",
            k.name
        ),
    };
    let domain = match &mesh_ident {
        Some(m) => quote!(vec![#m.len()]),
        None => quote!(#domain_field.extent().to_vec()),
    };
    // Point kernels whose fields are all on the domain's grid also run over blocks.
    let on_blocks = k.mesh.is_none()
        && k.line.is_none()
        && k.sampled.is_empty()
        && k.fields.iter().all(|f| f.map == IndexMap::Same);
    let block_launch = if on_blocks {
        let block_doc = format!(
            "Runs `{}` over the blocks of `blocks` (one launch for all of them) on `backend`; \
             the fields are block fields of the list's grid, on `backend`.{red_doc}\n\n\
             Indices and extents inside the kernel are the whole domain's. Fails, before \
             touching any memory, if a field is of another grid or layout, the grid's halo is \
             narrower than the kernel reads, or (on a device) the block size is not a whole \
             number of launch tiles.",
            k.name
        );
        quote! {
            #[doc = #block_doc]
            pub fn launch_blocks #generics (backend: &#rt::Backend, blocks: &#rt::BlockList, #(#block_params),*) -> ::core::result::Result<#ret, #rt::Error> {
                #(#block_checks)*
                let n = blocks.geometry().domain;
                match backend {
                    // SAFETY: every field is of the list's layout, whose slots hold each
                    // block plus a halo at least as wide as the kernel reads, and the
                    // borrow checker keeps outputs apart from inputs.
                    #rt::Backend::Cpu => Ok(unsafe { cpu(n, blocks.cpu_over(), #(#block_call_args),*) }),
                    #rt::Backend::Cuda(cuda) => {
                        let mut l = #rt::cuda::CudaLaunch::new(cuda, &CODE, #precision);
                        #(#block_cuda_args)*
                        #[allow(unused_variables)]
                        let values = l.run_blocks(blocks)?;
                        Ok(#cuda_ret)
                    }
                }
            }
        }
    } else {
        quote!()
    };
    quote! {
        #block_launch

        #[doc = #doc]
        pub fn launch #generics (backend: &#rt::Backend, #(#params),*) -> ::core::result::Result<#ret, #rt::Error> {
            let domain: ::std::vec::Vec<usize> = #domain;
            #(#checks)*
            let n = #rt::launch::domain3(&domain);
            match backend {
                // SAFETY: every view was checked to cover the domain plus the halo the
                // kernel reads, and the borrow checker keeps outputs apart from inputs.
                #rt::Backend::Cpu => Ok(unsafe { cpu(n, #rt::cpu::Over::Domain, #(#call_args),*) }),
                #rt::Backend::Cuda(cuda) => {
                    let mut l = #rt::cuda::CudaLaunch::new(cuda, &CODE, #precision);
                    #(#cuda_args)*
                    #[allow(unused_variables)]
                    let values = l.run(n)?;
                    Ok(#cuda_ret)
                }
            }
        }
    }
}

/// The run-time precision of a value of type `t` (`T`'s for generic types).
fn precision_tokens(t: Ty, rt: &TokenStream) -> TokenStream {
    match t {
        Ty::F32 => quote!(#rt::Precision::F32),
        Ty::F64 => quote!(#rt::Precision::F64),
        _ => quote!(<T as #rt::Real>::PRECISION),
    }
}
