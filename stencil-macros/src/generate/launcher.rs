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
    /// The host argument names, in order (the same for `launch_blocks`).
    pub args: Vec<Ident>,
    /// The pieces of `launch`.
    pub domain: Launcher,
    /// The pieces of `launch_blocks`, where fields are block fields.
    pub blocks: Launcher,
    mesh_ident: Option<Ident>,
    /// The field whose interior is the domain, as the host passes it (`w`, or `from.w`
    /// for a member of a group of fields).
    pub domain_field: Option<TokenStream>,
    /// The launchers' result type.
    pub ret: TokenStream,
    /// Whether the kernel also runs over the blocks of a block grid.
    pub on_blocks: bool,
}

/// The pieces of one launcher (`launch` or `launch_blocks`), parameter by parameter.
#[derive(Default)]
pub(super) struct Launcher {
    /// The host parameters, after the backend (and, over blocks, the list).
    pub params: Vec<TokenStream>,
    /// The statements that first take the members of groups of fields apart, one local
    /// per field (`let from_w = from.w;`).
    prelude: Vec<TokenStream>,
    /// The checks before a launch.
    checks: Vec<TokenStream>,
    /// The arguments of the CPU function, after the extents and what it runs over.
    call_args: Vec<TokenStream>,
    /// The statements passing the arguments to the CUDA launch `__launch`.
    cuda_args: Vec<TokenStream>,
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
        let mut domain = Launcher::default();
        let mut blocks = Launcher::default();
        let mesh_ident = k.mesh.as_ref().map(|m| format_ident!("{}", m));
        let domain_field = k
            .fields
            .iter()
            .find(|f| f.access.is_written())
            .or(k.fields.first())
            .map(|f| match &f.member_of {
                Some(m) => {
                    let (group, member) =
                        (format_ident!("{}", m.param), format_ident!("{}", m.member));
                    quote!(#group.#member)
                }
                None => {
                    let id = format_ident!("{}", f.name);
                    quote!(#id)
                }
            });
        for &(kind, i) in &k.param_order {
            match kind {
                ParamKind::Field => {
                    let f = &k.fields[i as usize];
                    let id = format_ident!("{}", f.name);
                    let t = ty_tokens(f.elem);
                    // Messages name a group's member as the kernel writes it, `to.b`.
                    let fname = &match &f.member_of {
                        Some(m) => format!("{}.{}", m.param, m.member),
                        None => f.name.clone(),
                    };
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
                    domain.checks.push(match &mesh_ident {
                        Some(m) => quote! {
                            #rt::mesh::check_vertex_field(NAME, #fname, #m, #id)?;
                        },
                        None => quote! {
                            #rt::launch::check_field(NAME, DIMS, &__domain, #rt::launch::FieldSpec { name: #fname, halo: #fhalo, map: #map, reach: [#(#reach),*] }, #id)?;
                        },
                    });
                    // Taken and viewed by reference, or mutably where the kernel writes it.
                    let (field, block_field, view, cpu_view) = match f.access {
                        Access::In => (
                            quote!(&#rt::Field<#t>),
                            quote!(&#rt::BlockField<#t>),
                            quote!(view),
                            quote!(cpu_view),
                        ),
                        Access::Out | Access::InOut => (
                            quote!(&mut #rt::Field<#t>),
                            quote!(&mut #rt::BlockField<#t>),
                            quote!(view_mut),
                            quote!(cpu_view_mut),
                        ),
                    };
                    match &f.member_of {
                        // A member of a group of fields: the launchers take the group's
                        // struct of fields once and take each member out of it.
                        Some(m) => {
                            let group = format_ident!("{}", m.param);
                            let member = format_ident!("{}", m.member);
                            if !args.contains(&group) {
                                let head = format_ident!("{}", m.group);
                                domain.params.push(quote!(#group: #head<#field>));
                                blocks.params.push(quote!(#group: #head<#block_field>));
                                args.push(group.clone());
                            }
                            let take = quote!(let #id = #group.#member;);
                            domain.prelude.push(take.clone());
                            blocks.prelude.push(take);
                        }
                        None => {
                            args.push(id.clone());
                            domain.params.push(quote!(#id: #field));
                            blocks.params.push(quote!(#id: #block_field));
                        }
                    }
                    domain.call_args.push(quote!(#id.#view(NAME, #fname)?));
                    blocks.call_args.push(quote!(#id.#cpu_view(NAME, #fname)?));
                    blocks
                        .checks
                        .push(quote!(blocks.check_field(NAME, DIMS, #fname, #fhalo, &*#id)?;));
                    domain
                        .cuda_args
                        .push(quote!(__launch.field(#fname, &*#id)?;));
                    blocks
                        .cuda_args
                        .push(quote!(__launch.block_field(#fname, &*#id)?;));
                }
                ParamKind::Scalar => {
                    let s = &k.scalars[i as usize];
                    let t = ty_tokens(s.ty);
                    // One value per axis: the launcher takes a slice of them.
                    let id = match &s.axis_of {
                        // A member of a group parameter: the launcher takes the group's
                        // struct once and passes each member (each axis of an `Axes` one).
                        _ if s.member_of.is_some() => {
                            let m = s.member_of.as_ref().expect("checked");
                            let group = format_ident!("{}", m.param);
                            if !args.contains(&group) {
                                let ty: syn::Type = syn::parse_str(&m.group_type)
                                    .expect("a group's type as the compiler writes it parses");
                                domain.params.push(quote!(#group: &#ty));
                                blocks.params.push(quote!(#group: &#ty));
                                args.push(group.clone());
                            }
                            let member = format_ident!("{}", m.member);
                            match &s.axis_of {
                                Some((_, axis)) => {
                                    if *axis == 0 {
                                        let of = format!("{}.{}", m.param, m.member);
                                        let check = quote!(#rt::launch::check_axes(NAME, #of, #group.#member.len(), DIMS)?;);
                                        domain.checks.push(check.clone());
                                        blocks.checks.push(check);
                                    }
                                    let axis = *axis as usize;
                                    quote!(#group.#member[#axis])
                                }
                                None => quote!(#group.#member),
                            }
                        }
                        Some((of, axis)) => {
                            let group = format_ident!("{}", of);
                            if *axis == 0 {
                                domain.params.push(quote!(#group: &[#t]));
                                blocks.params.push(quote!(#group: &[#t]));
                                args.push(group.clone());
                                let check = quote!(#rt::launch::check_axes(NAME, #of, #group.len(), DIMS)?;);
                                domain.checks.push(check.clone());
                                blocks.checks.push(check);
                            }
                            let axis = *axis as usize;
                            quote!(#group[#axis])
                        }
                        None if s.held => {
                            // A real held on the backend: the CPU function takes its value,
                            // the CUDA launch its address.
                            let id = format_ident!("{}", s.name);
                            let pname = &s.name;
                            domain.params.push(quote!(#id: &#rt::Value<#t>));
                            blocks.params.push(quote!(#id: &#rt::Value<#t>));
                            args.push(id.clone());
                            let read = quote!(#id.host_value(NAME, #pname)?);
                            domain.call_args.push(read.clone());
                            blocks.call_args.push(read);
                            let arg = quote!(__launch.held(#pname, #id)?;);
                            domain.cuda_args.push(arg.clone());
                            blocks.cuda_args.push(arg);
                            continue;
                        }
                        None => {
                            let id = format_ident!("{}", s.name);
                            domain.params.push(quote!(#id: #t));
                            blocks.params.push(quote!(#id: #t));
                            args.push(id.clone());
                            quote!(#id)
                        }
                    };
                    domain.call_args.push(id.clone());
                    blocks.call_args.push(id.clone());
                    if k.red_black == Some(i) {
                        let pname = &s.name;
                        domain
                            .checks
                            .push(quote!(#rt::launch::check_colour(NAME, #pname, #id)?;));
                        blocks
                            .checks
                            .push(quote!(#rt::launch::check_colour(NAME, #pname, #id)?;));
                    }
                    let arg = match s.ty {
                        Ty::Real => quote!(__launch.real(#id);),
                        Ty::F32 => quote!(__launch.f32(#id);),
                        Ty::F64 => quote!(__launch.f64(#id);),
                        // Scalars are never narrow integers (the lowering refuses them).
                        Ty::Int | Ty::I32 | Ty::U8 => quote!(__launch.int(#id);),
                        Ty::Bool => quote!(__launch.bool(#id);),
                    };
                    domain.cuda_args.push(arg.clone());
                    blocks.cuda_args.push(arg);
                }
                ParamKind::Mesh => {
                    let id = mesh_ident.clone().expect("a vertex kernel names its mesh");
                    let pname = id.to_string();
                    args.push(id.clone());
                    domain.params.push(quote!(#id: &#rt::mesh::VertexSet));
                    domain.call_args.push(quote!(#id.cpu_view()));
                    domain.cuda_args.push(quote!(__launch.mesh(#pname, #id)?;));
                }
                ParamKind::Sampled => {
                    let g = &k.sampled[i as usize];
                    let id = format_ident!("{}", g.name);
                    let t = ty_tokens(g.elem);
                    let gname = &g.name;
                    args.push(id.clone());
                    domain.params.push(quote!(#id: &#rt::SampledGrid<#t>));
                    domain.call_args.push(quote!(#id.cpu_view(NAME, #gname)?));
                    domain
                        .cuda_args
                        .push(quote!(__launch.sampled(#gname, #id)?;));
                }
                ParamKind::Reduction => {
                    let r = &k.reductions[i as usize];
                    let op = match r.op {
                        ReduceOp::Sum => quote!(#rt::cuda::Reduce::Sum),
                        ReduceOp::Max => quote!(#rt::cuda::Reduce::Max),
                        ReduceOp::Min => quote!(#rt::cuda::Reduce::Min),
                    };
                    let p = precision_tokens(r.ty, rt);
                    domain.cuda_args.push(quote!(__launch.reduction(#op, #p);));
                    blocks.cuda_args.push(quote!(__launch.reduction(#op, #p);));
                }
            }
        }

        let red_types: Vec<TokenStream> =
            k.reductions.iter().map(|r| ty_tokens(r.result)).collect();
        let ret = unit_one_or_tuple(&red_types);
        // Point kernels whose fields are all reals on the domain's grid also run over blocks.
        let on_blocks = k.mesh.is_none()
            && k.line.is_none()
            && k.sampled.is_empty()
            && k.fields
                .iter()
                .all(|f| f.map == IndexMap::Same && f.elem.is_float());
        Parts {
            generics,
            args,
            domain,
            blocks,
            mesh_ident,
            domain_field,
            ret,
            on_blocks,
        }
    }
}

/// What a launcher's backends return: the reductions (nothing, one value or a tuple)
/// from the CPU function's result `r` and from the device's `values`.
struct Results {
    /// The value of the CPU arm.
    cpu: TokenStream,
    /// The value of the CUDA arm.
    cuda: TokenStream,
    /// The precision the CUDA launch runs at.
    precision: TokenStream,
}

impl Launcher {
    /// The `match backend` ending a launcher, after its checks and with the extents in
    /// `__n`: the CPU function called over `over` (an `Over`), or the CUDA launch given
    /// this launcher's arguments and started by the call `run` (of `__launch`), each
    /// giving `results`.
    fn dispatch(
        &self,
        rt: &TokenStream,
        over: TokenStream,
        run: TokenStream,
        results: &Results,
    ) -> TokenStream {
        let Launcher {
            call_args,
            cuda_args,
            ..
        } = self;
        let Results {
            cpu,
            cuda,
            precision,
        } = results;
        // SAFETY (of the generated call): the launcher's checks made every view cover
        // the domain (or every field the list's layout) plus the halo the kernel reads,
        // and the borrow checker keeps outputs apart from inputs.
        quote! {
            match backend {
                #rt::Backend::Cpu => {
                    let r = unsafe { cpu(__n, #over, #(#call_args),*) };
                    Ok(#cpu)
                }
                #rt::Backend::Cuda(__cuda) => {
                    let mut __launch = #rt::cuda::CudaLaunch::new(__cuda, &CODE, #precision);
                    #(#cuda_args)*
                    #[allow(unused_variables)]
                    let values = __launch.#run?;
                    Ok(#cuda)
                }
            }
        }
    }
}

/// The launchers' value of `items`: `()` for none, the item for one, else their tuple.
fn unit_one_or_tuple(items: &[TokenStream]) -> TokenStream {
    match items {
        [] => quote!(()),
        [one] => one.clone(),
        many => quote!((#(#many),*)),
    }
}

/// The `launch` (and, for point kernels, `launch_blocks`) function of kernel `k`.
pub(super) fn launcher(k: &Kernel, rt: &TokenStream) -> TokenStream {
    let parts = Parts::of(k, rt);
    let Parts { generics, ret, .. } = &parts;
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
    let convert = |r: &kernels_gen::ir::ReductionParam, v: TokenStream| match r.result {
        Ty::Int => quote!(#v as i64),
        Ty::Bool => quote!(#v != 0.0),
        _ => v,
    };
    let cpu_ret = match k.reductions.as_slice() {
        [] => quote!(r),
        [one] => convert(one, quote!(r)),
        many => {
            let parts = many.iter().enumerate().map(|(i, red)| {
                let i = syn::Index::from(i);
                convert(red, quote!(r.#i))
            });
            quote!((#(#parts),*))
        }
    };
    let precision = if k.is_generic() {
        quote!(<T as #rt::Real>::PRECISION)
    } else {
        quote!(#rt::Precision::F64)
    };
    let results = Results {
        cpu: cpu_ret,
        cuda: unit_one_or_tuple(&red_values),
        precision,
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
    let domain_of = match (&parts.mesh_ident, &parts.domain_field) {
        (Some(m), _) => quote!(vec![#m.len()]),
        (None, f) => quote!(#f.extent().to_vec()),
    };
    let block_launch = if parts.on_blocks {
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
        let b = &parts.blocks;
        let (params, prelude, checks) = (&b.params, &b.prelude, &b.checks);
        let dispatch = b.dispatch(
            rt,
            quote!(blocks.cpu_over()),
            quote!(run_blocks(blocks)),
            &results,
        );
        quote! {
            #[doc = #block_doc]
            pub fn launch_blocks #generics (backend: &#rt::Backend, blocks: &#rt::BlockList, #(#params),*) -> ::core::result::Result<#ret, #rt::Error> {
                #(#prelude)*
                #(#checks)*
                let __n = blocks.geometry().domain;
                #dispatch
            }
        }
    } else {
        quote!()
    };
    let d = &parts.domain;
    let (params, prelude, checks) = (&d.params, &d.prelude, &d.checks);
    let dispatch = d.dispatch(
        rt,
        quote!(#rt::cpu::Over::Domain),
        quote!(run(__n)),
        &results,
    );
    quote! {
        #block_launch

        #[doc = #doc]
        pub fn launch #generics (backend: &#rt::Backend, #(#params),*) -> ::core::result::Result<#ret, #rt::Error> {
            let __domain: ::std::vec::Vec<usize> = #domain_of;
            #(#prelude)*
            #(#checks)*
            let __n = #rt::launch::domain3(&__domain);
            #dispatch
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
