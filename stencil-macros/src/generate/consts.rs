//! The module of a kernel with compile-time constant parameters (`consts(a = [0, 1])`):
//! one module per choice of the constants' values, and launchers that take the constants
//! like other scalars and run the instance made for their values (none where parameters
//! marked `#[when(flag)]` make the instances' parameters differ).

use super::{of_dims_items, Parts};
use kernels_gen::ast::ConstValue;
use kernels_gen::ir::Kernel;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The instance modules and the launchers that pick one. `kernels` are in the order
/// lowering gives them: all kernels of one choice of constants together.
pub(super) fn instances_items(
    kernels: &[Kernel],
    f: &syn::ItemFn,
    source: &str,
) -> syn::Result<TokenStream> {
    let rt = quote!(::stencil_runtime);
    let names: Vec<&String> = kernels[0].consts.iter().map(|(p, _)| p).collect();
    let name_str = f.sig.ident.to_string();
    let mut modules = Vec::new();
    let (mut arms, mut block_arms, mut listed) = (Vec::new(), Vec::new(), Vec::new());
    let sig = Parts::of(&kernels[0], &rt);
    let args = &sig.args;
    for group in kernels.chunk_by(|a, b| a.consts == b.consts) {
        let values: Vec<ConstValue> = group[0].consts.iter().map(|(_, v)| *v).collect();
        let m = format_ident!("{}", module_name(&group[0].consts));
        let items = of_dims_items(group, f, source)?;
        let doc = format!("`{}` with {}.", f.sig.ident, described(&group[0].consts));
        modules.push(quote! {
            #[doc = #doc]
            pub mod #m {
                #[allow(unused_imports)]
                use super::*;
                #items
            }
        });
        let pattern = tuple(values.iter().map(value_tokens).collect());
        arms.push(quote!(#pattern => #m::launch(backend, #(#args),*),));
        block_arms.push(quote!(#pattern => #m::launch_blocks(backend, blocks, #(#args),*),));
        listed.push(described(&group[0].consts));
    }
    let header = quote! {
        /// The kernel's name.
        pub const NAME: &str = #name_str;
        /// The stencil source this kernel was compiled from (with its helpers).
        pub const SOURCE: &str = #source;
        #(#modules)*
    };
    if has_conditional_params(f) {
        // The instances take different parameters: each is launched by its own module.
        return Ok(header);
    }
    let Parts {
        generics,
        domain,
        blocks,
        ret,
        ..
    } = &sig;
    let params = with_consts(f, &kernels[0], &domain.params);
    let block_params = with_consts(f, &kernels[0], &blocks.params);
    let idents = tuple(
        names
            .iter()
            .map(|n| {
                let id = format_ident!("{}", n);
                quote!(#id)
            })
            .collect(),
    );
    let param_name = names
        .iter()
        .map(|n| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let expected: &str = &format!("the kernel is made for {}", listed.join("; "));
    let unlisted = quote! {
        _ => Err(#rt::Error::Parameter {
            kernel: NAME,
            param: #param_name,
            value: format!("{:?}", #idents),
            expected: #expected,
        }),
    };
    let doc = format!(
        "Runs `{name_str}` over the interior of its first output field on `backend`, with \
         the kernel made for the values of {param_name} (each a compile-time constant)."
    );
    let block_launch = sig.on_blocks.then(|| {
        let doc = format!(
            "Runs `{name_str}` over the blocks of `blocks` on `backend`, with the kernel \
             made for the values of {param_name}."
        );
        quote! {
            #[doc = #doc]
            pub fn launch_blocks #generics (backend: &#rt::Backend, blocks: &#rt::BlockList, #(#block_params),*) -> ::core::result::Result<#ret, #rt::Error> {
                match #idents {
                    #(#block_arms)*
                    #unlisted
                }
            }
        }
    });
    Ok(quote! {
        #header
        #[doc = #doc]
        pub fn launch #generics (backend: &#rt::Backend, #(#params),*) -> ::core::result::Result<#ret, #rt::Error> {
            match #idents {
                #(#arms)*
                #unlisted
            }
        }
        #block_launch
    })
}

/// Whether a parameter's type is a reduction, `Sum<..>`, `Max<..>` or `Min<..>`.
fn is_reduction(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| matches!(s.ident.to_string().as_str(), "Sum" | "Max" | "Min")),
        _ => false,
    }
}

/// Whether some parameter of `f` exists only in some instances (`#[when(flag)]`).
fn has_conditional_params(f: &syn::ItemFn) -> bool {
    f.sig.inputs.iter().any(|input| match input {
        syn::FnArg::Typed(p) => !p.attrs.is_empty(),
        syn::FnArg::Receiver(_) => false,
    })
}

/// The name of an instance's module: `a_0_up_true` for `a = 0, up = true`.
fn module_name(consts: &[(String, ConstValue)]) -> String {
    let parts: Vec<String> = consts
        .iter()
        .map(|(p, v)| format!("{p}_{}", v.ident_part()))
        .collect();
    parts.join("_")
}

/// `a = 0, up = true`.
fn described(consts: &[(String, ConstValue)]) -> String {
    let parts: Vec<String> = consts.iter().map(|(p, v)| format!("{p} = {v}")).collect();
    parts.join(", ")
}

/// `x` for one item, else `(x, y, ..)`.
fn tuple(items: Vec<TokenStream>) -> TokenStream {
    match items.as_slice() {
        [one] => one.clone(),
        _ => quote!((#(#items),*)),
    }
}

/// A constant's value as a pattern.
fn value_tokens(v: &ConstValue) -> TokenStream {
    match v {
        ConstValue::Int(n) => quote!(#n),
        ConstValue::Bool(b) => quote!(#b),
    }
}

/// An instance's launcher parameters `params` with the constants of `k` put back where the
/// definition `f` declares them.
fn with_consts(f: &syn::ItemFn, k: &Kernel, params: &[TokenStream]) -> Vec<TokenStream> {
    let mut out = Vec::new();
    let mut rest = params.iter();
    for input in &f.sig.inputs {
        let syn::FnArg::Typed(pat) = input else {
            continue;
        };
        // A reduction has no launcher parameter: its result is what the launch returns.
        if is_reduction(&pat.ty) {
            continue;
        }
        let constant = match &*pat.pat {
            syn::Pat::Ident(id) => k.consts.iter().find(|(p, _)| id.ident == p),
            _ => None,
        };
        match constant {
            Some((p, v)) => {
                let id = format_ident!("{}", p);
                out.push(match v {
                    ConstValue::Int(_) => quote!(#id: i64),
                    ConstValue::Bool(_) => quote!(#id: bool),
                });
            }
            None => out.extend(rest.next().cloned()),
        }
    }
    out.extend(rest.cloned());
    out
}
