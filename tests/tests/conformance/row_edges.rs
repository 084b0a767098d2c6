//! Edge tests along axes 1 and 2: the CPU runs the middle points of rows at least two
//! from both ends of those axes with such tests decided (`kernels_gen::back::edges`,
//! `decided_in_interior_rows`), which must change nothing: grids of every height (and
//! depth) agree with the interpreter and the host JIT. So must the rows of even and of
//! odd index, which the CPU runs apart where a kernel tests their parity
//! (`decided_by_parity` along axes 1 and 2).

use super::check_on_extents;
use stencil_runtime::prelude::*;
use stencil_runtime::Error;
use stencil_tests::for_precisions;
use stencil_tests::kernels::suite;

#[stencils]
mod rows {
    /// Edge tests along axis 2, as `suite::row_edge_tests` along axis 1, beside tests along
    /// axes 0 and 1 (3D).
    #[stencil(dims = 3)]
    pub fn plane_edge_tests<T: Real>(u: In<T>, out: Out<T>) {
        let k = index(2);
        let n = extent(2);
        let a = if k == 0 { 1.0 } else { 0.0 };
        let c = if k == n - 1 { 4.0 } else { 0.0 };
        let e = if k < 2 { 16.0 } else { 0.0 };
        let h = if k > n - 3 { 128.0 } else { 0.0 };
        let y = if index(1) == extent(1) - 2 {
            2048.0
        } else {
            0.0
        };
        let x = if index(0) == 0 { 1024.0 } else { 0.0 };
        out = u * (a + c + e + h + y + x);
    }

    /// Parity tests of `j` and `k` in every form, each adding its own power of two, beside
    /// edge tests along every axis and a parity test of `i` (so that the CPU's middle loop
    /// runs pairs, interior rows and rows of either parity in one kernel).
    #[stencil(dims = 3)]
    pub fn row_parity_tests<T: Real>(u: In<T>, out: Out<T>) {
        let a = if index(1) % 2 == 1 { 1.0 } else { 0.0 };
        let b = if 0 == index(1) % 2 { 2.0 } else { 0.0 };
        let c = if index(2) % 2 != 0 { 4.0 } else { 0.0 };
        let d = if index(2) % 2 == 2 { 8.0 } else { 0.0 };
        let e = if index(0) % 2 == 1 { 16.0 } else { 0.0 };
        let x = if index(0) == 0 || index(1) == extent(1) - 1 {
            32.0
        } else {
            0.0
        };
        let z = if index(2) == 0 { 64.0 } else { 0.0 };
        out = u * (a + b + c + d + e + x + z);
    }
}

/// The CPU path of a kernel of [`rows`] or `suite::row_edge_tests`: it writes `out` from
/// `u` and reduces nothing.
fn no_reductions(done: Result<(), Error>) -> Vec<f64> {
    done.unwrap();
    vec![]
}

#[test]
fn row_edge_tests_on_grids_of_every_height() {
    for_precisions!(T => {
        let grids = (1usize..=9).chain([37]).map(|height| [9, height]);
        check_on_extents::<T, 2>("row_edge_tests", suite::row_edge_tests::SOURCE, grids, |u, o| {
            no_reductions(suite::row_edge_tests::launch(&Backend::Cpu, u, o))
        });
    });
}

#[test]
fn plane_edge_tests_on_grids_of_every_height_and_depth() {
    for_precisions!(T => {
        let grids = [(1, 1), (2, 5), (5, 2), (5, 5), (6, 7), (7, 6), (9, 9)].map(|(height, depth)| [7, height, depth]);
        check_on_extents::<T, 3>("plane_edge_tests", rows::plane_edge_tests::SOURCE, grids, |u, o| {
            no_reductions(rows::plane_edge_tests::launch(&Backend::Cpu, u, o))
        });
    });
}

#[test]
fn rows_of_either_parity_on_grids_of_every_height_and_depth() {
    for_precisions!(T => {
        let grids = [(1, 1), (2, 3), (5, 2), (5, 5), (6, 7), (7, 6), (9, 9)]
            .into_iter()
            .flat_map(|(height, depth)| [7, 8].map(|width| [width, height, depth]));
        check_on_extents::<T, 3>("row_parity_tests", rows::row_parity_tests::SOURCE, grids, |u, o| {
            no_reductions(rows::row_parity_tests::launch(&Backend::Cpu, u, o))
        });
    });
}
