//! The middle points of a CPU row: those at least [`EDGE_MARGIN`] from both ends along
//! axis 0, run in a loop of their own with the kernel's edge tests decided
//! (`back::edges`), so that the code those tests guard folds away. Three refinements, each
//! only where the kernel has the tests it decides:
//!
//! - **pairs**: a kernel that tests the parity of `index(0)` runs an even point and the
//!   odd one after it per iteration, each with its parity tests decided, both reading a
//!   coarse field at one index;
//! - **interior rows**: rows at least the margin from the ends of axes 1 and 2 run a
//!   second copy of the loop with the tests of `j` and `k` decided too;
//! - **row parity**: a kernel that tests the parity of `index(1)` (or `index(2)`) runs
//!   rows of even and of odd index in separate copies, with those tests decided (a
//!   prolongation's rows between two coarse rows and those on one).

use super::nodes::{point_body, LoadForm};
use crate::back::edges::{self, EDGE_MARGIN};
use crate::ir::{Kernel, NodeId};
use proc_macro2::TokenStream;
use quote::quote;

/// The code of the point `t` of a row: its indices (`i` global, `ia` in the views, `iac`
/// in a coarse field's), then `body` and `stores`.
pub(super) fn point_at_t(body: &[TokenStream], stores: &[TokenStream]) -> TokenStream {
    quote! {
        let i = t;
        let ia = t - o0;
        let iac = ia >> 1;
        #(#body)*
        #(#stores)*
    }
}

/// What the middle loop of a kernel's rows is built from.
pub(super) struct Middle<'a> {
    /// The kernel.
    pub k: &'a Kernel,
    /// Its live nodes.
    pub live: &'a [NodeId],
    /// The path of the runtime's `Real` trait.
    pub real: &'a TokenStream,
    /// Tests known at every middle point: a red-black kernel's colour parity and the edge
    /// tests along axis 0 (`edges::decided_in_middle`).
    pub known: &'a [(NodeId, bool)],
    /// The stores of a point.
    pub stores: &'a [TokenStream],
    /// The step between visited points (2 for a red-black kernel's colour).
    pub step: usize,
}

impl Middle<'_> {
    /// The code of one middle point at `t`, with `known` and `extra` decided.
    pub fn point(&self, extra: &[(NodeId, bool)]) -> TokenStream {
        point_at_t(&self.body(extra), self.stores)
    }

    /// The point's `let`s with `known` and `extra` decided.
    fn body(&self, extra: &[(NodeId, bool)]) -> Vec<TokenStream> {
        let known: Vec<(NodeId, bool)> = self.known.iter().chain(extra).copied().collect();
        point_body(self.k, self.live, self.real, LoadForm::Rows, &known)
    }

    /// The parity tests of `index(0)` a paired loop decides (none: no pairs). A red-black
    /// kernel visits one colour and never pairs.
    fn pair_tests(&self) -> Vec<(NodeId, bool, bool)> {
        if self.step != 1 {
            return Vec::new();
        }
        edges::decided_by_parity(self.k, self.live, 0)
    }

    /// The loop over a row's middle points `middle.0..middle.1` (clipped to the margin),
    /// with `extra` decided.
    fn points_loop(&self, extra: &[(NodeId, bool)]) -> TokenStream {
        let m = EDGE_MARGIN as isize;
        let single = self.point(extra);
        let pair_tests = self.pair_tests();
        if pair_tests.is_empty() {
            let range = quote!(middle.0.max(#m)..middle.1.min(n[0] as isize - #m));
            let range = if self.step == 1 {
                range
            } else {
                let step = self.step;
                quote!((#range).step_by(#step))
            };
            return quote! {
                for t in #range {
                    #single
                }
            };
        }
        let at = |odd: bool| {
            let decided = pair_tests
                .iter()
                .map(|&(n, even, at_odd)| (n, if odd { at_odd } else { even }));
            let extra: Vec<(NodeId, bool)> = extra.iter().copied().chain(decided).collect();
            self.body(&extra)
        };
        let (even, odd) = (at(false), at(true));
        let stores = self.stores;
        // Pairs from an even point on, where the storage starts at an even index (so that
        // a point's parity is its view index's); an odd first or last point alone, and
        // every point alone where the storage starts at an odd index. The lone points
        // share one copy of the code.
        quote! {
            let (m0, m1) = (middle.0.max(#m), middle.1.min(n[0] as isize - #m));
            let (t0, pairs) = if o0 & 1 == 0 {
                let t0 = if m0 < m1 && m0 & 1 == 1 { m0 + 1 } else { m0 };
                (t0, (m1 - t0).max(0) / 2)
            } else {
                (m1, 0)
            };
            for (from, to) in [(m0, t0.min(m1)), (t0 + 2 * pairs, m1)] {
                for t in from..to {
                    #single
                }
            }
            // A counted loop with the coarse index advancing by one per pair: indices
            // affine in the counter, which LLVM vectorises (strided accesses).
            let iac0 = (t0 - o0) >> 1;
            for p in 0..pairs {
                let t = t0 + 2 * p;
                let iac = iac0 + p;
                {
                    let i = t;
                    let ia = t - o0;
                    #(#even)*
                    #(#stores)*
                }
                {
                    let i = t + 1;
                    let ia = t + 1 - o0;
                    #(#odd)*
                    #(#stores)*
                }
            }
        }
    }

    /// The middle loop with `extra` decided, split by the parity of the row's index along
    /// each of `axes` that the kernel tests.
    fn by_row_parity(&self, extra: Vec<(NodeId, bool)>, axes: &[u8]) -> TokenStream {
        let Some((&axis, rest)) = axes.split_first() else {
            return self.points_loop(&extra);
        };
        let tests = edges::decided_by_parity(self.k, self.live, axis);
        if tests.is_empty() {
            return self.by_row_parity(extra, rest);
        }
        let at = |odd: bool| {
            let decided = tests
                .iter()
                .map(|&(n, even, at_odd)| (n, if odd { at_odd } else { even }));
            self.by_row_parity(extra.iter().copied().chain(decided).collect(), rest)
        };
        let (even, odd) = (at(false), at(true));
        let index = if axis == 1 { quote!(j) } else { quote!(k) };
        quote! {
            if #index & 1 == 0 {
                #even
            } else {
                #odd
            }
        }
    }

    /// The middle loop of a row (`middle` its range from `split_row`): interior rows apart
    /// from the others where the kernel tests `j` or `k` against the ends, and rows of
    /// either parity apart where it tests theirs.
    pub fn row_loop(&self) -> TokenStream {
        let row_axes: &[u8] = if self.k.dims >= 3 { &[1, 2] } else { &[1] };
        let row_tests = edges::decided_in_interior_rows(self.k, self.live);
        if row_tests.is_empty() {
            return self.by_row_parity(Vec::new(), row_axes);
        }
        let m = EDGE_MARGIN as isize;
        let inside =
            |axis: usize, x: TokenStream| quote!((#x >= #m && #x <= n[#axis] as isize - 1 - #m));
        let interior_row = if self.k.dims >= 3 {
            let (y, z) = (inside(1, quote!(j)), inside(2, quote!(k)));
            quote!(#y && #z)
        } else {
            inside(1, quote!(j))
        };
        let interior = self.by_row_parity(row_tests, row_axes);
        let other = self.by_row_parity(Vec::new(), row_axes);
        quote! {
            if #interior_row {
                #interior
            } else {
                #other
            }
        }
    }
}
