//! From annotated Rust items to checked IR.

use crate::generate;
use kernels_gen::ast::{FnKind, Module};
use kernels_gen::front::rust::{self as front, RustSpans};
use kernels_gen::lower::{lower_definitions, LowerError};
use proc_macro2::TokenStream;
use quote::quote;

/// Names the generated launcher uses for itself.
const RESERVED: &[&str] = &["backend"];

fn to_syn_error(e: LowerError, spans: &RustSpans) -> syn::Error {
    let mut message = e.message;
    if let Some(h) = e.help {
        message.push_str("\n\n= help: ");
        message.push_str(&h);
    }
    syn::Error::new(spans.get(e.span), message)
}

fn check_reserved(module: &Module, spans: &RustSpans) -> syn::Result<()> {
    for f in &module.items {
        for p in &f.params {
            if RESERVED.contains(&p.name.name.as_str()) {
                return Err(syn::Error::new(
                    spans.get(p.name.span),
                    format!(
                        "`{}` is reserved for the launcher's first argument\n\n= help: rename this parameter",
                        p.name.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `#[stencil(..)] fn ..`
pub fn standalone_kernel(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let f: syn::ItemFn = syn::parse2(item)?;
    let mut spans = RustSpans::default();
    let attrs = front::parse_attr_args(attr.clone(), &mut spans)?;
    let def = front::convert_fn(&f, FnKind::Kernel, attrs, &mut spans)?;
    let module = Module { items: vec![def] };
    check_reserved(&module, &spans)?;
    let kernels = lower_definitions(&module).map_err(|e| to_syn_error(e, &spans))?;
    let source = quote!(#[stencil(#attr)] #f).to_string();
    generate::kernel_module(&kernels[0], &f, &source)
}

/// `#[stencils] mod m { .. }`
pub fn stencil_module(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new_spanned(
            attr,
            "`#[stencils]` takes no options",
        ));
    }
    let mut m: syn::ItemMod = syn::parse2(item)?;
    let Some((_, items)) = m.content.take() else {
        return Err(syn::Error::new_spanned(
            &m,
            "`#[stencils]` needs an inline module: `mod name { .. }`",
        ));
    };
    let mut spans = RustSpans::default();
    let mut module = Module::default();
    // Only this module's own functions: nested modules expand on their own.
    let fns: Vec<syn::Item> = items
        .iter()
        .filter(|i| matches!(i, syn::Item::Fn(_)))
        .cloned()
        .collect();
    front::collect_items(&fns, &mut module, &mut spans)?;
    check_reserved(&module, &spans)?;
    let kernels = lower_definitions(&module).map_err(|e| to_syn_error(e, &spans))?;
    // The source of every stencil function, so that tools can recompile any kernel.
    let stencil_fns: Vec<&syn::ItemFn> = items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f) if front::stencil_attr(&f.attrs).is_some() => Some(f),
            _ => None,
        })
        .collect();
    let source = quote!(#(#stencil_fns)*).to_string();
    let mut out_items: Vec<TokenStream> = Vec::new();
    let mut kernel_iter = kernels.iter();
    for item in items {
        match &item {
            syn::Item::Fn(f) => match front::stencil_attr(&f.attrs) {
                Some((_, FnKind::Kernel)) => {
                    let k = kernel_iter.next().expect("one kernel per #[stencil] fn");
                    out_items.push(generate::kernel_module(k, f, &source)?);
                }
                Some((_, FnKind::Helper)) => {}
                None => out_items.push(quote!(#item)),
            },
            other => out_items.push(quote!(#other)),
        }
    }
    let (attrs, vis, ident) = (&m.attrs, &m.vis, &m.ident);
    Ok(quote! {
        #(#attrs)*
        #vis mod #ident {
            #(#out_items)*
        }
    })
}
