//! Block grids on the CPU: kernels over present blocks equal dense launches, halo
//! exchange, blocks added and removed (`stencil_tests::blocks`), and bad input.

use stencil_runtime::blocks::BlockGrid;
use stencil_runtime::{Backend, BlockField, BlockList};
use stencil_tests::blocks::{
    copies_into_dense_fields, fields_follow_the_blocks, flags_match_the_field, halo_matches_dense,
    kernels_match_dense, random_grid,
};
use stencil_tests::kernels::suite;

#[test]
fn kernels_on_blocks_equal_dense_launches() {
    kernels_match_dense::<f32>(&Backend::Cpu);
    kernels_match_dense::<f64>(&Backend::Cpu);
}

#[test]
fn halo_exchange_fills_what_the_dense_field_holds() {
    halo_matches_dense::<f32>(&Backend::Cpu);
    halo_matches_dense::<f64>(&Backend::Cpu);
}

#[test]
fn block_flags_show_where_a_field_is_non_zero() {
    flags_match_the_field::<f32>(&Backend::Cpu);
    flags_match_the_field::<f64>(&Backend::Cpu);
}

#[test]
fn fields_follow_blocks_added_and_removed() {
    fields_follow_the_blocks::<f64>(&Backend::Cpu);
}

#[test]
fn block_fields_copy_into_dense_fields() {
    copies_into_dense_fields::<f32>(&Backend::Cpu);
    copies_into_dense_fields::<f64>(&Backend::Cpu);
}

#[test]
fn a_kernel_reading_past_the_grids_halo_is_refused() {
    let grid = BlockGrid::full(&Backend::Cpu, &[64, 32], &[32, 16], 0).unwrap();
    let list = BlockList::present(&grid).unwrap();
    let u = BlockField::<f64>::new(&grid, 1.0).unwrap();
    let mut out = BlockField::<f64>::new(&grid, 0.0).unwrap();
    let e = suite::lap5::launch_blocks(&Backend::Cpu, &list, &u, &mut out, 1.0).unwrap_err();
    assert!(e.to_string().contains("halo"), "{e}");
}

#[test]
fn bad_grids_are_refused_with_the_reason() {
    let e = BlockGrid::new(&Backend::Cpu, &[64, 32], &[32], 1).unwrap_err();
    assert!(e.to_string().contains("block size per axis"), "{e}");
    let e = BlockGrid::new(&Backend::Cpu, &[64, 32], &[2, 2], 3).unwrap_err();
    assert!(e.to_string().contains("narrower than their halo"), "{e}");
    let grid = random_grid(&Backend::Cpu, "dims", &[64, 32, 8], &[32, 16, 8], 1.0);
    let list = BlockList::present(&grid).unwrap();
    let u = BlockField::<f64>::new(&grid, 1.0).unwrap();
    let mut out = BlockField::<f64>::new(&grid, 0.0).unwrap();
    let e = suite::lap5::launch_blocks(&Backend::Cpu, &list, &u, &mut out, 1.0).unwrap_err();
    assert!(
        e.to_string().contains("dimension") || e.to_string().contains("3"),
        "{e}"
    );
}
