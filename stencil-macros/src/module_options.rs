//! The options of `#[stencils]` and `#[stencil_helpers]`: helper libraries to import, and
//! the hidden form in which the import resumes once a library has added its helpers.
//!
//! A helper library (`#[stencil_helpers] mod lib { .. }`) becomes, besides its other
//! items, a `macro_rules!` macro `lib::helpers` that holds the source of its helpers. A
//! module that imports libraries (`#[stencils(helpers = [a, b])]`) expands to a call of
//! `a::helpers!`, which puts its helpers into the attribute and hands the module on to
//! `b::helpers!`, and so on; when no library is left, the attribute (now
//! `@resume [] { helpers.. }`) compiles the module with the imported helpers. The source
//! stays in tokens, so rustc tracks it like any other code and errors keep their spans in
//! the library's file.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;

/// What the attribute of a `#[stencils]` or `#[stencil_helpers]` module asks for.
#[derive(Default)]
pub struct ModuleOptions {
    /// Helper libraries still to visit, in order.
    pub pending: Vec<syn::Path>,
    /// The source of the helpers imported so far.
    pub imported: TokenStream,
}

/// Parses `helpers = path` or `helpers = [path, ..]` (or the hidden `@resume` form), for
/// the attribute named `attr_name`.
pub fn parse(attr: TokenStream, attr_name: &str) -> syn::Result<ModuleOptions> {
    let mut tokens = attr.clone().into_iter();
    if let Some(TokenTree::Punct(p)) = tokens.next() {
        if p.as_char() == '@' {
            return parse_resume(tokens.collect(), attr_name);
        }
    }
    let mut options = ModuleOptions::default();
    let parser = syn::meta::parser(|meta| {
        if !meta.path.is_ident("helpers") {
            return Err(meta.error(format!(
                "unknown option of `#[{attr_name}]`\n\n= help: the only option is `helpers = [path::to::library, ..]`, the `#[stencil_helpers]` modules whose helpers these functions call"
            )));
        }
        let value = meta.value()?;
        if value.peek(syn::token::Bracket) {
            let inner;
            syn::bracketed!(inner in value);
            let list = Punctuated::<syn::Path, syn::Token![,]>::parse_terminated(&inner)?;
            options.pending.extend(list);
        } else {
            options.pending.push(value.parse()?);
        }
        Ok(())
    });
    parser.parse2(attr)?;
    Ok(options)
}

/// `@resume [paths..] { helpers.. }` (the tokens after the `@`)
fn parse_resume(tokens: Vec<TokenTree>, attr_name: &str) -> syn::Result<ModuleOptions> {
    let malformed = || {
        syn::Error::new(
            Span::call_site(),
            format!("`#[{attr_name}(@..)]` is the macros' own form; write `#[{attr_name}(helpers = [..])]`"),
        )
    };
    let [TokenTree::Ident(word), TokenTree::Group(paths), TokenTree::Group(imported)] =
        tokens.as_slice()
    else {
        return Err(malformed());
    };
    if word != "resume"
        || paths.delimiter() != Delimiter::Bracket
        || imported.delimiter() != Delimiter::Brace
    {
        return Err(malformed());
    }
    let pending = Punctuated::<syn::Path, syn::Token![,]>::parse_terminated
        .parse2(paths.stream())?
        .into_iter()
        .collect();
    Ok(ModuleOptions {
        pending,
        imported: imported.stream(),
    })
}

impl ModuleOptions {
    /// When libraries are left to visit, the call of the next one's `helpers!` macro that
    /// carries `item` (the module, its other attributes kept) on to `attr_path`.
    pub fn next_import(&self, attr_path: TokenStream, item: &TokenStream) -> Option<TokenStream> {
        let (next, rest) = self.pending.split_first()?;
        let imported = &self.imported;
        // Spanned on the path, so that a module that is no library is named there.
        let helpers = syn::Ident::new("helpers", syn::spanned::Spanned::span(next));
        Some(quote! {
            #next::#helpers! { [#attr_path] [#(#rest),*] { #imported } #item }
        })
    }

    /// The imported helpers as items, each once: a library imported both directly and
    /// through another brings the same helper twice.
    pub fn imported_items(&self) -> syn::Result<Vec<syn::Item>> {
        let mut seen = std::collections::HashSet::new();
        let mut items = syn::parse2::<syn::File>(self.imported.clone())?.items;
        items.retain(|item| seen.insert(quote!(#item).to_string()));
        Ok(items)
    }
}

/// The `helpers!` macro of a library whose helpers (its own and those it imports) are
/// `helpers`: it adds them to the attribute of the module it is given and hands it on.
pub fn library_macro(helpers: &TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        macro_rules! __stencil_helper_library {
            ([$($attr:tt)*] [$($rest:tt)*] { $($imported:tt)* } $($item:tt)*) => {
                #[$($attr)*(@resume [$($rest)*] { $($imported)* #helpers })]
                $($item)*
            };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        pub(crate) use __stencil_helper_library as helpers;
    }
}
