//! Dry-block skipping: the mask built each step holds the blocks with water and their
//! neighbours (plus the last step's), and on the CPU (where masked launches run densely)
//! turning it on changes nothing. The GPU side (skipped blocks, same results) is in
//! `gpu.rs`.

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
fn skipping_on_the_cpu_changes_nothing() {
    let run = |skip: bool| {
        let mut flow = ShallowWater::<f32>::new(&Backend::Cpu, &pool()).unwrap();
        flow.set_dry_skipping(skip).unwrap();
        for _ in 0..50 {
            flow.step(f64::INFINITY).unwrap();
        }
        flow.state().unwrap()
    };
    assert!(run(true) == run(false));
}
