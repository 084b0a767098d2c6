//! The `cpu` function of a line kernel (a tridiagonal solve per grid line).

use super::item::Signature;
use super::nodes::{node_let, LoadForm};
use super::{field_ident, ty_tokens, v};
use crate::ir::Kernel;
use proc_macro2::TokenStream;
use quote::quote;

/// The `cpu` function of a line kernel: lines in parallel, each solved by the Thomas
/// algorithm (forward elimination into per-thread scratch, then back substitution), with
/// the same operations in the same order as the interpreter and the LLVM back end.
pub(super) fn line_function(
    k: &Kernel,
    line: &crate::ir::LineSolve,
    sig: &Signature,
) -> TokenStream {
    let rt = sig.rt;
    let real = quote!(#rt::Real);
    let axis = line.axis as usize;
    let live = k.live_nodes();
    let body: Vec<TokenStream> = live
        .iter()
        .map(|&n| node_let(k, n, &real, LoadForm::Point))
        .collect();
    let field = &k.fields[line.field as usize];
    let fid = field_ident(&field.name);
    let t = ty_tokens(field.elem);
    let (lo, di, up, rh) = (v(line.lower), v(line.diag), v(line.upper), v(line.rhs));
    let mask = match line.mask {
        Some(m) => {
            let m = v(m);
            quote!(#m)
        }
        None => quote!(true),
    };
    let at = |c: usize| -> TokenStream {
        if c == axis {
            quote!(x)
        } else {
            quote!(s[#c])
        }
    };
    let (ai, aj, ak) = (at(0), at(1), at(2));
    let item = sig.item(quote!(), quote! {
            let len = n[#axis] as isize;
            #rt::cpu::for_each_line(n, #axis, |scratch: &mut (Vec<#t>, Vec<#t>), s: [isize; 3]| {
                if len == 0 {
                    return;
                }
                let (cp, dp) = scratch;
                cp.resize(len as usize, <#t as #real>::from_f64(0.0));
                dp.resize(len as usize, <#t as #real>::from_f64(0.0));
                let coefficients = |x: isize| -> (#t, #t, #t, #t, bool) {
                    let (i, j, k) = (#ai, #aj, #ak);
                    #(#body)*
                    (#lo, #di, #up, #rh, #mask)
                };
                if !coefficients(0).4 {
                    return;
                }
                let at = |x: isize, dx: isize| -> *mut #t {
                    let mut p = [s[0], s[1], s[2]];
                    p[#axis] = x + dx;
                    #fid.row(p[1], p[2]).offset(p[0])
                };
                let before = *at(0, -1);
                let after = *at(len - 1, 1);
                for x in 0..len {
                    let (a, b, c, mut d, _) = coefficients(x);
                    if x == 0 {
                        d = d - a * before;
                    }
                    if x == len - 1 {
                        d = d - c * after;
                    }
                    let xi = x as usize;
                    let (denom, d) = if x == 0 {
                        (b, d)
                    } else {
                        (b - a * cp[xi - 1], d - a * dp[xi - 1])
                    };
                    cp[xi] = c / denom;
                    dp[xi] = d / denom;
                }
                let mut next = dp[len as usize - 1];
                *at(len - 1, 0) = next;
                for x in (0..len - 1).rev() {
                    let xi = x as usize;
                    next = dp[xi] - cp[xi] * next;
                    *at(x, 0) = next;
                }
            });
    }, None);
    quote! {
        /// The CPU implementation of a line kernel: every line of the domain `n`, in
        /// parallel, solved by the Thomas algorithm.
        ///
        /// # Safety
        /// Every view must cover the domain plus the kernel's halo, and the solved field must
        /// not overlap the others.
        #[allow(clippy::all, unused, non_snake_case, unused_parens, unused_variables)]
        #item
    }
}
