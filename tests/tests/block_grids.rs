//! Block grids on the CPU: kernels over present blocks equal dense launches, halo
//! exchange, blocks added and removed (`stencil_tests::blocks`), and bad input.

use stencil_runtime::blocks::BlockGrid;
use stencil_runtime::Backend;
use stencil_tests::blocks::{backend_checks, bad_regions_are_refused, lap5_refusal, random_grid};

/// Every check of [`backend_checks`] on the CPU, in f32 and f64 (blocks added and removed
/// in f64 only): kernels on blocks equal dense launches, halo exchange fills what the dense
/// field holds, block flags show where a field is non-zero, fields follow blocks added and
/// removed, block fields copy into dense fields.
#[test]
fn block_grid_checks_on_the_cpu() {
    let in_f32 = backend_checks::<f32>()
        .into_iter()
        .filter(|&(name, _)| name != "fields_follow_the_blocks");
    for (name, check) in in_f32.chain(backend_checks::<f64>()) {
        println!("{name}");
        check(&Backend::Cpu);
    }
}

#[test]
fn a_kernel_reading_past_the_grids_halo_is_refused() {
    let grid = BlockGrid::full(&Backend::Cpu, &[64, 32], &[32, 16], 0).unwrap();
    let e = lap5_refusal(&Backend::Cpu, &grid);
    assert!(e.to_string().contains("halo"), "{e}");
}

#[test]
fn bad_grids_are_refused_with_the_reason() {
    let e = BlockGrid::new(&Backend::Cpu, &[64, 32], &[32], 1).unwrap_err();
    assert!(e.to_string().contains("block size per axis"), "{e}");
    let e = BlockGrid::new(&Backend::Cpu, &[64, 32], &[2, 2], 3).unwrap_err();
    assert!(e.to_string().contains("narrower than their halo"), "{e}");
    let grid = random_grid(&Backend::Cpu, "dims", &[64, 32, 8], &[32, 16, 8], 1.0);
    let e = lap5_refusal(&Backend::Cpu, &grid);
    assert!(
        e.to_string().contains("dimension") || e.to_string().contains("3"),
        "{e}"
    );
}

#[test]
fn bad_block_regions_are_refused() {
    bad_regions_are_refused(&Backend::Cpu);
}
