//! Dry-block skipping: the mask built each step holds the blocks with water and their
//! neighbours (plus the last step's), and no cell outside it changes in a step (checked
//! on the CPU, where masked launches compute every block). The GPU side (skipped blocks,
//! same results) is in `gpu.rs`.

use shallow_water::*;
use stencil_runtime::Backend;

/// 160 x 160 cells of 1 m (10 x 10 blocks), dry but for a 5 x 5 pool in block (4, 4).
fn pool() -> Setup {
    let grid = Grid::new(160, 160, 1.0, 1.0, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |x, y| 0.01 * x + 0.02 * y).unwrap();
    let pool = |x: f64, y: f64| (72.0..77.0).contains(&x) && (72.0..77.0).contains(&y);
    let water = Water::from_depth(&terrain, |x, y| if pool(x, y) { 0.5 } else { 0.0 });
    Setup::new(
        terrain,
        water,
        Boundaries::all(Boundary::Wall),
        Physics::default(),
    )
}

#[test]
fn the_mask_holds_the_wet_blocks_and_their_neighbours() {
    let mut flow = ShallowWater::<f64>::new(&Backend::Cpu, &pool()).unwrap();
    assert_eq!(
        flow.active_blocks().unwrap(),
        None,
        "off by default on the CPU"
    );
    flow.set_dry_skipping(true).unwrap();
    flow.step(f64::INFINITY).unwrap();
    // The first step computes every block.
    assert_eq!(flow.active_blocks().unwrap(), Some((100, 100)));
    flow.step(f64::INFINITY).unwrap();
    // Then the pool's block and its eight neighbours.
    assert_eq!(flow.active_blocks().unwrap(), Some((9, 100)));
}

#[test]
fn a_side_that_feeds_water_keeps_its_blocks_on() {
    let mut setup = pool();
    setup.boundaries.west = Boundary::Discharge(Series::constant(0.1));
    let mut flow = ShallowWater::<f64>::new(&Backend::Cpu, &setup).unwrap();
    flow.set_dry_skipping(true).unwrap();
    flow.step(f64::INFINITY).unwrap();
    flow.step(f64::INFINITY).unwrap();
    // The pool's 9 blocks and the west column's 10.
    assert_eq!(flow.active_blocks().unwrap(), Some((19, 100)));
}

#[test]
fn every_cell_a_step_changes_lies_in_a_block_it_computed() {
    // On the CPU masked launches compute every block, so a block the mask leaves off
    // but whose cells change shows a mask that is too small.
    let mut setup = pool();
    setup.boundaries.west = Boundary::Discharge(Series::constant(0.1));
    let mut flow = ShallowWater::<f64>::new(&Backend::Cpu, &setup).unwrap();
    flow.set_dry_skipping(true).unwrap();
    let [tx, _] = stencil_runtime::BLOCK_TILE;
    let tiles_x = 160usize.div_ceil(tx);
    for step in 0..200 {
        let before = flow.state().unwrap();
        flow.step(f64::INFINITY).unwrap();
        let after = flow.state().unwrap();
        let on = flow.block_map().unwrap().unwrap();
        for f in 0..3 {
            for (k, (a, b)) in before[f].iter().zip(&after[f]).enumerate() {
                let (i, j) = (k % 160, k / 160);
                let block = (j / tx) * tiles_x + i / tx;
                assert!(
                    a == b || on[block],
                    "step {step}: cell ({i}, {j}) changed in block {block}, which was off"
                );
            }
        }
    }
    let (on, all) = flow.active_blocks().unwrap().unwrap();
    println!("after 200 steps {on} of {all} blocks are on");
    assert!(on < all);
}
