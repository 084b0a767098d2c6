//! The item a kernel's CPU code becomes: the `cpu` function with its parameters, for a
//! generic kernel the pick of the instance of `T`'s precision (`cpu_f32` or `cpu_f64`, a
//! module each), each with its AVX copy and, where the code runs per row, the row function
//! the row driver calls.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The signature of a kernel's `cpu` function.
pub(super) struct Signature<'a> {
    /// The path of the runtime crate.
    pub rt: &'a TokenStream,
    /// `<T: Real>` for a generic kernel, else nothing.
    pub generics: &'a TokenStream,
    /// The parameters after the domain `n`, with their types.
    pub params: &'a [TokenStream],
    /// The parameters' names, in order.
    pub args: &'a [Ident],
}

impl Signature<'_> {
    /// `pub unsafe fn cpu(n, params..) ret { body }` (attributes go before it). On x86-64
    /// the body is also compiled for AVX (8 f32 or 4 f64 lanes, where the baseline has
    /// SSE2's 4 and 2) with fused multiply-adds (what `mul_add` and the device's inline
    /// `powf` are made of: one instruction, where the baseline calls the C library's
    /// `fma`; the results are the same) and that copy runs where the CPU has both
    /// ([`cpu::wide_vectors`](../../stencil_runtime/cpu/fn.wide_vectors.html)): the
    /// closures inside inherit the target feature.
    ///
    /// A generic kernel's `cpu::<T>` only picks between two ordinary functions,
    /// `cpu_f32::cpu` and `cpu_f64::cpu`, the body written out at each precision (`T` is
    /// that precision in its module). A library compiles both, once, where a generic
    /// function would be compiled again in every crate (every program and test) that
    /// launches the kernel: release builds do not share generic instances between crates.
    /// A program compiles the ones it reaches (the pick is a constant of `T`).
    pub fn item(&self, ret: TokenStream, body: TokenStream, row: Option<&RowFn>) -> TokenStream {
        let Signature {
            rt,
            generics,
            params,
            args,
        } = self;
        if generics.is_empty() {
            let code = self.code(ret, body, row);
            return quote!(pub #code);
        }
        let allow =
            quote!(#[allow(clippy::all, unused, non_snake_case, unused_parens, unused_mut)]);
        let instance = |module: TokenStream, real: TokenStream| {
            let code = self.code(ret.clone(), body.clone(), row);
            quote! {
                #[doc(hidden)]
                pub mod #module {
                    #[allow(unused_imports)]
                    use super::*;
                    type T = #real;
                    /// The kernel's CPU code at this precision (see `cpu`).
                    ///
                    /// # Safety
                    /// As `cpu`'s.
                    #[inline(never)]
                    #allow
                    pub #code
                }
            }
        };
        let (f32_instance, f64_instance) = (
            instance(quote!(cpu_f32), quote!(f32)),
            instance(quote!(cpu_f64), quote!(f64)),
        );
        quote! {
            pub unsafe fn cpu #generics (n: [usize; 3], over: #rt::cpu::Over<'_>, #(#params),*) #ret {
                // A constant condition: a program compiles only the precision it launches.
                if const { matches!(<T as #rt::Real>::PRECISION, #rt::Precision::F32) } {
                    #rt::cpu::same_type(cpu_f32::cpu(n, over, #(#rt::cpu::same_type(#args)),*))
                } else {
                    #rt::cpu::same_type(cpu_f64::cpu(n, over, #(#rt::cpu::same_type(#args)),*))
                }
            }
            #f32_instance
            #f64_instance
        }
    }

    /// `unsafe fn cpu(n, params..) ret { body }` for one precision, with its AVX copy;
    /// with `row`, each copy with the function `row` that its `body` calls per row. On
    /// x86-64 the copy without AVX has the row's plain code where it has one
    /// ([`RowFn::plain`]); elsewhere it is the only copy and has the full code.
    fn code(&self, ret: TokenStream, body: TokenStream, row: Option<&RowFn>) -> TokenStream {
        let Signature {
            rt, params, args, ..
        } = self;
        let row_fn = |features: TokenStream, plain: bool| {
            row.map(|r| {
                let (ret, body) = (&r.ret, if plain { r.plain_body() } else { &r.body });
                quote! {
                    #features
                    #[inline(never)]
                    unsafe fn row(r: #rt::cpu::Row, n: [usize; 3], #(#params),*) #ret {
                        #body
                    }
                }
            })
        };
        let x86 = quote!(target_arch = "x86_64");
        let (wide_row, plain_row, row) = (
            row_fn(quote!(#[target_feature(enable = "avx,fma")]), false),
            row_fn(quote!(#[cfg(#x86)]), true),
            row_fn(quote!(#[cfg(not(#x86))]), false),
        );
        quote! {
            unsafe fn cpu(n: [usize; 3], over: #rt::cpu::Over<'_>, #(#params),*) #ret {
                #[cfg(#x86)]
                {
                    #[target_feature(enable = "avx,fma")]
                    unsafe fn wide(n: [usize; 3], over: #rt::cpu::Over<'_>, #(#params),*) #ret {
                        #wide_row
                        #body
                    }
                    if #rt::cpu::wide_vectors() {
                        return wide(n, over, #(#args),*);
                    }
                }
                #plain_row
                #row
                #body
            }
        }
    }

    /// `unsafe { row(r, n, args..) }`: a row driver's call of the function of one row.
    pub fn call_row(&self) -> TokenStream {
        let args = self.args;
        quote!(unsafe { row(r, n, #(#args),*) })
    }
}

/// The work of one row of a kernel, a function of its own (`row`): rustc compiles each
/// kernel's rows in the code-generation unit of the kernel's module, where the row
/// driver's closure, an instance of the runtime's generic driver, would take it into one
/// unit with every other kernel's.
pub(super) struct RowFn {
    /// What a row returns (its reductions' partial values).
    pub ret: TokenStream,
    /// The row's code, from `r: Row`, `n` and the kernel's parameters.
    pub body: TokenStream,
    /// The same row as one loop of the general code, where `body` has copies of the
    /// middle points with the edge and parity tests decided: the x86-64 copy without AVX
    /// (`cpu::wide_vectors`) runs it. It computes every point as `body` does, and a
    /// reduction's points in the same tiles, so the two agree bit for bit.
    pub plain: Option<TokenStream>,
}

impl RowFn {
    /// The plain code of the row, or its only code.
    fn plain_body(&self) -> &TokenStream {
        self.plain.as_ref().unwrap_or(&self.body)
    }
}
