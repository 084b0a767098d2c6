//! From annotated Rust items to checked IR.

use crate::{generate, module_options};
use kernels_gen::ast::{FnKind, Module};
use kernels_gen::front::rust::{self as front, RustSpans};
use kernels_gen::lower::{lower_definitions, LowerError};
use proc_macro2::TokenStream;
use quote::quote;

/// Names the generated launchers use for their own parameters.
const RESERVED: &[&str] = &["backend", "blocks"];

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
                        "`{}` is reserved for the launcher's {}\n\n= help: rename this parameter",
                        p.name.name,
                        if p.name.name == "blocks" {
                            "block list (`launch_blocks`)"
                        } else {
                            "first argument"
                        }
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
    let module = Module {
        items: vec![def],
        groups: Vec::new(),
    };
    check_reserved(&module, &spans)?;
    let kernels = lower_definitions(&module).map_err(|e| to_syn_error(e, &spans))?;
    let source = quote!(#[stencil(#attr)] #f).to_string();
    generate::kernel_module(&kernels[0], &f, &source)
}

/// `#[stencils] mod m { .. }` or `#[stencils(helpers = [..])] mod m { .. }`
pub fn stencil_module(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let options = module_options::parse(attr, "stencils")?;
    if let Some(call) = options.next_import(quote!(::stencil_runtime::stencils), &item) {
        return Ok(call);
    }
    let (m, items) = inline_module(item, "stencils")?;
    let imported = options.imported_items()?;
    let mut spans = RustSpans::default();
    let mut module = Module::default();
    // The imported helpers and groups, then this module's own functions and groups
    // (nested modules expand on their own).
    let fns: Vec<syn::Item> = imported
        .iter()
        .chain(
            items
                .iter()
                .filter(|i| matches!(i, syn::Item::Fn(_)) || group(i).is_some()),
        )
        .cloned()
        .collect();
    front::collect_items(&fns, &mut module, &mut spans)?;
    check_reserved(&module, &spans)?;
    let kernels = lower_definitions(&module).map_err(|e| to_syn_error(e, &spans))?;
    // The source of every stencil function, imported helpers included, so that tools can
    // recompile any kernel.
    let stencil_fns: Vec<&syn::ItemFn> = imported
        .iter()
        .chain(items.iter())
        .filter_map(|i| match i {
            syn::Item::Fn(f) if front::stencil_attr(&f.attrs).is_some() => Some(f),
            _ => None,
        })
        .collect();
    let groups = imported
        .iter()
        .chain(items.iter())
        .filter_map(group)
        .map(group_source);
    let source = quote!(#(#groups)* #(#stencil_fns)*).to_string();
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
            syn::Item::Struct(st) if front::is_group(st) => out_items.push(group_item(st)),
            other => out_items.push(quote!(#other)),
        }
    }
    Ok(rebuilt(&m, out_items))
}

/// The parameter group `item` is, if it is one (`#[stencil_group] struct ..`).
fn group(item: &syn::Item) -> Option<&syn::ItemStruct> {
    match item {
        syn::Item::Struct(st) if front::is_group(st) => Some(st),
        _ => None,
    }
}

/// A group as the module defines it: the struct without the `#[stencil_group]` marker.
fn group_item(st: &syn::ItemStruct) -> TokenStream {
    let mut st = st.clone();
    st.attrs.retain(|a| !front::is_group_marker(a));
    // A member per axis is the runtime's `Axes`, which the module need not import.
    for f in &mut st.fields {
        if let syn::Type::Path(p) = &mut f.ty {
            if p.qself.is_none() && p.path.segments.len() == 1 && p.path.segments[0].ident == "Axes"
            {
                let args = &p.path.segments[0].arguments;
                f.ty = syn::parse_quote!(::stencil_runtime::Axes #args);
            }
        }
    }
    quote!(#st)
}

/// A group as the compiler reads it in a module's `SOURCE` (which the text front end also
/// reads): the marker, the name, the type parameter and the members, without other
/// attributes and documentation.
fn group_source(st: &syn::ItemStruct) -> TokenStream {
    let mut st = st.clone();
    st.attrs.retain(front::is_group_marker);
    for f in &mut st.fields {
        f.attrs.clear();
    }
    quote!(#st)
}

/// `#[stencil_helpers] mod lib { .. }`: a library of helpers for other modules. Its
/// helpers are checked for names defined twice here; their bodies are checked where a
/// kernel calls them, with spans in this module.
pub fn helper_library(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let options = module_options::parse(attr, "stencil_helpers")?;
    if let Some(call) = options.next_import(quote!(::stencil_runtime::stencil_helpers), &item) {
        return Ok(call);
    }
    let (m, items) = inline_module(item, "stencil_helpers")?;
    let mut own = Vec::new();
    let mut out_items: Vec<TokenStream> = Vec::new();
    for item in &items {
        match item {
            syn::Item::Fn(f) => match front::stencil_attr(&f.attrs) {
                Some((attr, FnKind::Kernel)) => {
                    return Err(syn::Error::new_spanned(
                        attr,
                        "a `#[stencil_helpers]` library holds helpers only\n\n= help: put kernels in a `#[stencils(helpers = [..])]` module that imports this library",
                    ))
                }
                Some((_, FnKind::Helper)) => own.push(item.clone()),
                None => out_items.push(quote!(#item)),
            },
            syn::Item::Struct(st) if front::is_group(st) => {
                own.push(syn::Item::Struct(st.clone()));
                out_items.push(group_item(st));
            }
            other => out_items.push(quote!(#other)),
        }
    }
    let mut spans = RustSpans::default();
    let mut module = Module::default();
    let all: Vec<syn::Item> = options.imported_items()?.into_iter().chain(own).collect();
    front::collect_items(&all, &mut module, &mut spans)?;
    check_reserved(&module, &spans)?;
    lower_definitions(&module).map_err(|e| to_syn_error(e, &spans))?;
    out_items.push(module_options::library_macro(&quote!(#(#all)*)));
    Ok(rebuilt(&m, out_items))
}

/// The module's header and its inline items, or an error naming `attr_name`.
fn inline_module(
    item: TokenStream,
    attr_name: &str,
) -> syn::Result<(syn::ItemMod, Vec<syn::Item>)> {
    let mut m: syn::ItemMod = syn::parse2(item)?;
    match m.content.take() {
        Some((_, items)) => Ok((m, items)),
        None => Err(syn::Error::new_spanned(
            &m,
            format!("`#[{attr_name}]` needs an inline module: `mod name {{ .. }}`"),
        )),
    }
}

/// The module `m` (its attributes, visibility and name) around `items`.
fn rebuilt(m: &syn::ItemMod, items: Vec<TokenStream>) -> TokenStream {
    let (attrs, vis, ident) = (&m.attrs, &m.vis, &m.ident);
    quote! {
        #(#attrs)*
        #vis mod #ident {
            #(#items)*
        }
    }
}
