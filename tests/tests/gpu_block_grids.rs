//! Block grids on a CUDA device: the conformance checks of `stencil_tests::blocks` (kernels
//! over present blocks equal dense launches there, halo exchange, blocks that come and
//! go), and the CUDA-only refusals (a block size that is no whole number of launch tiles).
//!
//! Without a driver or a device the tests print why they skipped. Stage for a GPU machine
//! with `../shared/tools/stage-gpu -p stencil-tests --no-default-features --test gpu_block_grids`.

use stencil_runtime::blocks::BlockGrid;
use stencil_runtime::{Backend, BlockField, BlockList};
use stencil_tests::blocks::{
    copies_into_dense_fields, fields_follow_the_blocks, flags_match_the_field, halo_matches_dense,
    kernels_match_dense,
};
use stencil_tests::device::gpu_or_skip;
use stencil_tests::kernels::suite;

#[test]
fn kernels_on_blocks_equal_dense_launches_on_the_device() {
    let Some(gpu) = gpu_or_skip() else { return };
    kernels_match_dense::<f32>(&gpu);
    kernels_match_dense::<f64>(&gpu);
}

#[test]
fn halo_exchange_on_the_device_fills_what_the_dense_field_holds() {
    let Some(gpu) = gpu_or_skip() else { return };
    halo_matches_dense::<f32>(&gpu);
    halo_matches_dense::<f64>(&gpu);
}

#[test]
fn block_flags_on_the_device_show_where_a_field_is_non_zero() {
    let Some(gpu) = gpu_or_skip() else { return };
    flags_match_the_field::<f32>(&gpu);
    flags_match_the_field::<f64>(&gpu);
}

#[test]
fn device_fields_follow_blocks_added_and_removed() {
    let Some(gpu) = gpu_or_skip() else { return };
    fields_follow_the_blocks::<f32>(&gpu);
    fields_follow_the_blocks::<f64>(&gpu);
}

#[test]
fn device_block_fields_copy_into_dense_fields() {
    let Some(gpu) = gpu_or_skip() else { return };
    copies_into_dense_fields::<f32>(&gpu);
    copies_into_dense_fields::<f64>(&gpu);
}

#[test]
fn blocks_that_are_no_whole_number_of_tiles_are_refused() {
    let Some(gpu) = gpu_or_skip() else { return };
    let grid = BlockGrid::full(&gpu, &[60, 60], &[12, 12], 1).unwrap();
    let list = BlockList::present(&grid).unwrap();
    let u = BlockField::<f64>::new(&grid, 1.0).unwrap();
    let mut out = BlockField::<f64>::new(&grid, 0.0).unwrap();
    let e = suite::lap5::launch_blocks(&gpu, &list, &u, &mut out, 1.0).unwrap_err();
    assert!(e.to_string().contains("whole number"), "{e}");
}

#[test]
fn a_cpu_grid_is_refused_on_the_device() {
    let Some(gpu) = gpu_or_skip() else { return };
    let grid = BlockGrid::full(&Backend::Cpu, &[64, 32], &[32, 16], 1).unwrap();
    let list = BlockList::present(&grid).unwrap();
    let u = BlockField::<f64>::new(&grid, 1.0).unwrap();
    let mut out = BlockField::<f64>::new(&grid, 0.0).unwrap();
    let e = suite::lap5::launch_blocks(&gpu, &list, &u, &mut out, 1.0).unwrap_err();
    assert!(e.to_string().contains("device"), "{e}");
}

#[test]
fn lists_longer_than_one_launch_holds_run_in_several() {
    let Some(gpu) = gpu_or_skip() else { return };
    // 258 x 258 blocks of 8 x 8: more than a launch's 65535 thread blocks along z.
    let n = [2064, 2064];
    let grid = BlockGrid::full(&gpu, &n, &[8, 8], 1).unwrap();
    let list = BlockList::present(&grid).unwrap();
    assert!(list.len() > 65535);
    let dense = stencil_runtime::Field::<f64>::from_fn(&n, 1, |[i, j, _]| {
        ((i * 31 + j * 17) % 1009) as f64 - 500.0
    });
    let u = BlockField::from_dense(&grid, &dense, 0.0).unwrap();
    let mut out = BlockField::<f64>::new(&grid, 0.0).unwrap();
    suite::lap5::launch_blocks(&gpu, &list, &u, &mut out, 1.0).unwrap();
    let mut want = stencil_runtime::Field::<f64>::zeros(&n, 0).unwrap();
    suite::lap5::launch(&Backend::Cpu, &dense, &mut want, 1.0).unwrap();
    assert_eq!(out.to_dense(&grid, 0, f64::NAN).unwrap(), want);
    let largest = suite::maxabs::launch_blocks(&gpu, &list, &u).unwrap();
    let interior = dense.interior().unwrap();
    let want_max = interior.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert_eq!(largest, want_max);
}
