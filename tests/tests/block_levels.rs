//! Block grids of several levels on the CPU: each level's sizes, launches per level,
//! halos predicted from the coarser level, transfers between levels, and the typed errors
//! of their misuse. (The wavelet transform and the multigrid across levels that stand on
//! them are checked in `solvers/cavity/tests`.)

use stencil_runtime::blocks::{
    Absent, HaloExchange, HaloRule, LevelTransfer, Predictor, Refinement, Side,
};
use stencil_runtime::{Backend, BlockField, BlockGrid, BlockKey, BlockList, Error};

/// A vertex-centred grid of 17 x 17 points at level 0 in blocks of 8, with 3 levels.
fn grid() -> BlockGrid {
    BlockGrid::new(&Backend::Cpu, &[17, 17], &[8, 8], 3)
        .unwrap()
        .with_levels(3, Refinement::Vertex)
        .unwrap()
}

/// A smooth function of the position on the unit square.
fn smooth(x: f64, y: f64) -> f64 {
    (1.0 + x).ln() * (2.0 * y).cos() + x * x * y
}

/// Level `level`'s point `p` on the unit square.
fn at(g: &BlockGrid, level: u8, p: [isize; 3]) -> (f64, f64) {
    let h = 1.0 / (g.geometry().at_level(level).domain[0] - 1) as f64;
    (p[0] as f64 * h, p[1] as f64 * h)
}

#[test]
fn levels_have_their_own_domains_and_launch_one_at_a_time() {
    let mut g = grid();
    let geometry = *g.geometry();
    assert_eq!(geometry.at_level(1).domain[..2], [33, 33]);
    assert_eq!(geometry.at_level(2).domain[..2], [65, 65]);
    assert_eq!(geometry.at_level(2).blocks[..2], [9, 9]);
    // Keys outside a level's blocks, or of a level the grid lacks, are refused.
    assert!(g.update(&[BlockKey::at(3, [0, 0, 0])], &[]).is_err());
    assert!(g.update(&[BlockKey::at(1, [5, 0, 0])], &[]).is_err());
    let level0: Vec<BlockKey> = geometry.all_keys().collect();
    let fine = vec![BlockKey::at(1, [0, 0, 0]), BlockKey::at(1, [1, 0, 0])];
    g.update(&level0, &[]).unwrap();
    g.update(&fine, &[]).unwrap();
    let list = BlockList::level(&g, 1).unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list.geometry().domain[..2], [33, 33]);
    let mixed = [level0[0], fine[0]];
    match BlockList::new(&g, &mixed) {
        Err(Error::InvalidField(m)) => assert!(m.contains("one level"), "{m}"),
        other => panic!("a list of two levels: {other:?}"),
    }
}

#[test]
fn halos_next_to_absent_blocks_are_predicted_from_the_coarser_level() {
    let mut g = grid();
    let level0: Vec<BlockKey> = g.geometry().all_keys().collect();
    g.update(&level0, &[]).unwrap();
    // Two fine blocks in the middle of level 1: their halos border absent level-1 blocks.
    g.update(
        &[BlockKey::at(1, [1, 1, 0]), BlockKey::at(1, [2, 1, 0])],
        &[],
    )
    .unwrap();
    let mut u = BlockField::<f64>::from_level_fn(&g, |l, p| {
        let (x, y) = at(&g, l, p);
        smooth(x, y)
    })
    .unwrap();
    u.fill_halos(f64::NAN).unwrap();
    let rule = HaloRule {
        sides: [[Side::Extrapolate; 2]; 3],
        absent: Absent::Coarser(Predictor::Cubic),
    };
    HaloExchange::new(&g, &rule).unwrap().run(&mut u).unwrap();
    let geometry = *g.geometry();
    let values = u
        .slot_values(&g, BlockKey::at(1, [1, 1, 0]))
        .unwrap()
        .unwrap();
    let mut worst: f64 = 0.0;
    for j in -3..11isize {
        for i in -3..11isize {
            let p = [8 + i, 8 + j, 0];
            let (x, y) = at(&g, 1, p);
            let v = values[geometry.element([i, j, 0])];
            assert!(v.is_finite(), "halo point {p:?} not filled");
            worst = worst.max((v - smooth(x, y)).abs());
        }
    }
    // Cubic prediction from 17 points (h = 1/16): the error of the halo is O(h^4).
    assert!(worst < 1e-4, "{worst}");
    assert!(worst > 0.0);

    // Without the coarser block a prediction needs, the plan says what to do.
    let mut lone = grid();
    lone.update(&[BlockKey::at(0, [0, 0, 0])], &[]).unwrap();
    lone.update(&[BlockKey::at(1, [1, 1, 0])], &[]).unwrap();
    match HaloExchange::new(&lone, &rule) {
        Err(Error::InvalidField(m)) => assert!(m.contains("level 0"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Cell-centred levels have no such prediction.
    let cells = BlockGrid::new(&Backend::Cpu, &[16, 16], &[8, 8], 3)
        .unwrap()
        .with_levels(2, Refinement::Cell)
        .unwrap();
    assert!(HaloExchange::new(&cells, &rule).is_err());
    assert!(LevelTransfer::restriction(&cells).is_err());
}

#[test]
fn transfers_move_values_between_levels() {
    let mut g = grid();
    let level0: Vec<BlockKey> = g.geometry().all_keys().collect();
    g.update(&level0, &[]).unwrap();
    let fine = BlockKey::at(1, [1, 0, 0]);
    g.update(&[fine], &[]).unwrap();
    // Level 1 holds 2 + the level-0 value: restriction makes the coarse copy follow it.
    let mut u = BlockField::<f64>::from_level_fn(&g, |l, p| {
        let (x, y) = at(&g, l, p);
        smooth(x, y) + if l == 1 { 2.0 } else { 0.0 }
    })
    .unwrap();
    LevelTransfer::restriction(&g).unwrap().run(&mut u).unwrap();
    // Level 0's points 4..8 along x, 0..4 along y lie under the fine block (its points 8..16).
    for (p, under) in [
        ([5usize, 2, 0], true),
        ([2, 2, 0], false),
        ([5, 6, 0], false),
    ] {
        let v = u.get_at(&g, 0, p).unwrap().unwrap();
        let (x, y) = at(&g, 0, p.map(|c| c as isize));
        let want = smooth(x, y) + if under { 2.0 } else { 0.0 };
        assert!((v - want).abs() < 1e-15, "{p:?}: {v} against {want}");
    }
    // Injection: the fine block's even points take level 0's values back.
    LevelTransfer::injection(&g, 1)
        .unwrap()
        .run(&mut u)
        .unwrap();
    let even = u.get_at(&g, 1, [10, 4, 0]).unwrap().unwrap();
    let odd = u.get_at(&g, 1, [11, 4, 0]).unwrap().unwrap();
    let (x, y) = at(&g, 1, [10, 4, 0]);
    assert!((even - smooth(x, y) - 2.0).abs() < 1e-15);
    let (x, y) = at(&g, 1, [11, 4, 0]);
    assert!(
        (odd - smooth(x, y) - 2.0).abs() < 1e-15,
        "odd points keep theirs"
    );
    // Prediction: every point of the block from level 0 (no longer shifted by 2 there
    // once level 0 is reset).
    let mut v = BlockField::<f64>::from_level_fn(&g, |l, p| {
        let (x, y) = at(&g, l, p);
        if l == 0 {
            smooth(x, y)
        } else {
            f64::NAN
        }
    })
    .unwrap();
    LevelTransfer::prediction(&g, &[fine], Predictor::Cubic)
        .unwrap()
        .run(&mut v)
        .unwrap();
    for p in [[8usize, 0, 0], [9, 1, 0], [15, 7, 0]] {
        let got = v.get_at(&g, 1, p).unwrap().unwrap();
        let (x, y) = at(&g, 1, p.map(|c| c as isize));
        assert!((got - smooth(x, y)).abs() < 1e-4, "{p:?}: {got}");
    }
    assert!(
        LevelTransfer::prediction(&g, &[BlockKey::at(0, [0, 0, 0])], Predictor::Cubic).is_err()
    );
}
