//! The typed launchers of a kernel module: what the host passes (fields, scalars, one
//! slice per `Axes` parameter), the checks before a launch, and the calls of the CPU
//! function and of the CUDA launch.

use kernels_gen::back::rust::ty_tokens;
use kernels_gen::ir::{Access, IndexMap, Kernel, ParamKind, ReduceOp, Ty};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// The pieces of a kernel's launchers, parameter by parameter.
pub(super) struct Parts {
    /// `<T: Real>` for a generic kernel.
    pub generics: TokenStream,
    /// The host parameters of `launch`, after the backend.
    pub params: Vec<TokenStream>,
    /// The host argument names, in order (the same for `launch_blocks`).
    pub args: Vec<Ident>,
    checks: Vec<TokenStream>,
    call_args: Vec<TokenStream>,
    cuda_args: Vec<TokenStream>,
    /// The host parameters of `launch_blocks`, after the backend and the list.
    pub block_params: Vec<TokenStream>,
    block_checks: Vec<TokenStream>,
    block_call_args: Vec<TokenStream>,
    block_cuda_args: Vec<TokenStream>,
    mesh_ident: Option<Ident>,
    /// The field whose interior is the domain.
    pub domain_field: Option<Ident>,
    /// The launchers' result type.
    pub ret: TokenStream,
    /// Whether the kernel also runs over the blocks of a block grid.
    pub on_blocks: bool,
}

impl Parts {
    /// The launcher pieces of kernel `k`.
    pub(super) fn of(k: &Kernel, rt: &TokenStream) -> Parts {
        let generics = if k.is_generic() {
            quote!(<T: #rt::Real>)
        } else {
            quote!()
        };
        let mut args = Vec::new();
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
                    args.push(id.clone());
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
                    block_checks
                        .push(quote!(blocks.check_field(NAME, DIMS, #fname, #fhalo, &*#id)?;));
                    cuda_args.push(quote!(l.field(#fname, &*#id)?;));
                    block_cuda_args.push(quote!(l.block_field(#fname, &*#id)?;));
                }
                ParamKind::Scalar => {
                    let s = &k.scalars[i as usize];
                    let t = ty_tokens(s.ty);
                    // One value per axis: the launcher takes a slice of them.
                    let id = match &s.axis_of {
                        Some((of, axis)) => {
                            let group = format_ident!("{}", of);
                            if *axis == 0 {
                                params.push(quote!(#group: &[#t]));
                                block_params.push(quote!(#group: &[#t]));
                                args.push(group.clone());
                                let check = quote!(#rt::launch::check_axes(NAME, #of, #group.len(), DIMS)?;);
                                checks.push(check.clone());
                                block_checks.push(check);
                            }
                            let axis = *axis as usize;
                            quote!(#group[#axis])
                        }
                        None if s.held => {
                            // A real held on the backend: the CPU function takes its value,
                            // the CUDA launch its address.
                            let id = format_ident!("{}", s.name);
                            let pname = &s.name;
                            params.push(quote!(#id: &#rt::Value<#t>));
                            block_params.push(quote!(#id: &#rt::Value<#t>));
                            args.push(id.clone());
                            let read = quote!(#id.host_value(NAME, #pname)?);
                            call_args.push(read.clone());
                            block_call_args.push(read);
                            let arg = quote!(l.held(#pname, #id)?;);
                            cuda_args.push(arg.clone());
                            block_cuda_args.push(arg);
                            continue;
                        }
                        None => {
                            let id = format_ident!("{}", s.name);
                            params.push(quote!(#id: #t));
                            block_params.push(quote!(#id: #t));
                            args.push(id.clone());
                            quote!(#id)
                        }
                    };
                    call_args.push(id.clone());
                    block_call_args.push(id.clone());
                    if k.red_black == Some(i) {
                        let pname = &s.name;
                        checks.push(quote!(#rt::launch::check_colour(NAME, #pname, #id)?;));
                        block_checks.push(quote!(#rt::launch::check_colour(NAME, #pname, #id)?;));
                    }
                    let arg = match s.ty {
                        Ty::Real => quote!(l.real(#id);),
                        Ty::F32 => quote!(l.f32(#id);),
                        Ty::F64 => quote!(l.f64(#id);),
                        // Scalars are never narrow integers (the lowering refuses them).
                        Ty::Int | Ty::I32 | Ty::U8 => quote!(l.int(#id);),
                        Ty::Bool => quote!(l.bool(#id);),
                    };
                    cuda_args.push(arg.clone());
                    block_cuda_args.push(arg);
                }
                ParamKind::Mesh => {
                    let id = mesh_ident.clone().expect("a vertex kernel names its mesh");
                    let pname = id.to_string();
                    args.push(id.clone());
                    params.push(quote!(#id: &#rt::mesh::VertexSet));
                    call_args.push(quote!(#id.cpu_view()));
                    cuda_args.push(quote!(l.mesh(#pname, #id)?;));
                }
                ParamKind::Sampled => {
                    let g = &k.sampled[i as usize];
                    let id = format_ident!("{}", g.name);
                    let t = ty_tokens(g.elem);
                    let gname = &g.name;
                    args.push(id.clone());
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

        let red_types: Vec<TokenStream> =
            k.reductions.iter().map(|r| ty_tokens(r.result)).collect();
        let ret = match red_types.len() {
            0 => quote!(()),
            1 => quote!(#(#red_types)*),
            _ => quote!((#(#red_types),*)),
        };
        // Point kernels whose fields are all reals on the domain's grid also run over blocks.
        let on_blocks = k.mesh.is_none()
            && k.line.is_none()
            && k.sampled.is_empty()
            && k.fields
                .iter()
                .all(|f| f.map == IndexMap::Same && f.elem.is_float());
        Parts {
            generics,
            params,
            args,
            checks,
            call_args,
            cuda_args,
            block_params,
            block_checks,
            block_call_args,
            block_cuda_args,
            mesh_ident,
            domain_field,
            ret,
            on_blocks,
        }
    }
}

/// The `launch` (and, for point kernels, `launch_blocks`) function of kernel `k`.
pub(super) fn launcher(k: &Kernel, rt: &TokenStream) -> TokenStream {
    let Parts {
        generics,
        params,
        checks,
        call_args,
        cuda_args,
        block_params,
        block_checks,
        block_call_args,
        block_cuda_args,
        mesh_ident,
        domain_field,
        ret,
        on_blocks,
        ..
    } = Parts::of(k, rt);
    // The values from the device, converted (exactly) from f64 to each reduction's type.
    let red_values: Vec<TokenStream> = k
        .reductions
        .iter()
        .enumerate()
        .map(|(i, r)| match (r.ty, r.result) {
            (_, Ty::Int) => quote!(values[#i] as i64),
            (_, Ty::Bool) => quote!(values[#i] != 0.0),
            (Ty::F32, _) => quote!(values[#i] as f32),
            (Ty::F64, _) => quote!(values[#i]),
            _ => quote!(<T as #rt::Real>::from_f64(values[#i])),
        })
        .collect();
    // The CPU function's results (in each reduction's `ty`) as the launch returns them.
    let cpu_ret = {
        let convert = |r: &kernels_gen::ir::ReductionParam, v: TokenStream| match r.result {
            Ty::Int => quote!(#v as i64),
            Ty::Bool => quote!(#v != 0.0),
            _ => v,
        };
        match k.reductions.as_slice() {
            [] => quote!(r),
            [one] => convert(one, quote!(r)),
            many => {
                let parts = many.iter().enumerate().map(|(i, red)| {
                    let i = syn::Index::from(i);
                    convert(red, quote!(r.#i))
                });
                quote!((#(#parts),*))
            }
        }
    };
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
    let block_launch = if on_blocks {
        let block_doc = format!(
            "Runs `{}` over the blocks of `blocks` (one launch for all of them) on `backend`; \
             the fields are block fields of the list's grid, on `backend`.{red_doc}\n\n\
             Indices and extents inside the kernel are the whole domain's (of the list's \
             level, on a grid of several levels). Fails, before \
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
                    #rt::Backend::Cpu => {
                        let r = unsafe { cpu(n, blocks.cpu_over(), #(#block_call_args),*) };
                        Ok(#cpu_ret)
                    }
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
                #rt::Backend::Cpu => {
                    let r = unsafe { cpu(n, #rt::cpu::Over::Domain, #(#call_args),*) };
                    Ok(#cpu_ret)
                }
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
