//! Launches over regions of blocks ([`BlockList::regions`]): every block cut into boxes,
//! the boxes launched in lists of one extent each, gives what the dense launch gives, and
//! lists that break the rules are refused with the reason.

use super::*;
use stencil_runtime::BlockRegion;

/// Every present block of `grid` cut into three boxes: a band of `band` rows along its
/// south side, and the rest split along x `right` points from its east side.
fn cut(grid: &BlockGrid, band: usize, right: usize) -> Vec<BlockRegion> {
    let b = grid.geometry().block;
    let mut regions = Vec::new();
    for (_, block) in grid.blocks() {
        let key = block.key;
        let boxes = [
            ([0, 0], [b[0], band]),
            ([0, band], [b[0] - right, b[1] - band]),
            ([b[0] - right, band], [right, b[1] - band]),
        ];
        for ([x, y], [ex, ey]) in boxes {
            regions.push(BlockRegion {
                key,
                start: [x, y, 0],
                extent: [ex, ey, 1],
            });
        }
    }
    regions
}

/// A 5-point Laplacian and a largest absolute value launched over the boxes of every
/// present block ([`cut`]), list by list, equal the dense launch at every present point
/// and the whole blocks' maximum. The "large" case (devices only) has lists of enough
/// thread blocks for vector shapes beside lists of scalar ones.
pub fn regions_match_whole_blocks<T: Real>(backend: &Backend) {
    let mut cases = vec![("some", 0.6, [512, 256], [256, 64], 8, 128)];
    if matches!(backend, Backend::Cuda(_)) {
        cases.push(("large", 1.0, [2048, 2048], [1024, 1024], 8, 128));
    }
    for (case, share, domain, block, band, right) in cases {
        let label = |k: &str| format!("{k} {:?} {case} regions", T::PRECISION);
        let grid = random_grid(backend, &format!("regions {case}"), &domain, &block, share);
        let lists = BlockList::grouped(&grid, &cut(&grid, band, right)).expect("lists");
        assert!(lists.len() >= 2, "{}", label("lists"));
        let (u, ub) = pair::<T>(backend, &grid, "u", -1.0, 1.0);
        let (mut out, mut outb) = outputs::<T>(backend, &grid);
        suite::lap5::launch(backend, &u, &mut out, T::from_f64(3.0)).unwrap();
        let mut largest = f64::NEG_INFINITY;
        for list in &lists {
            assert!(!list.covers_whole_blocks());
            suite::lap5::launch_blocks(backend, list, &ub, &mut outb, T::from_f64(3.0)).unwrap();
            let part = suite::maxabs::launch_blocks(backend, list, &ub).unwrap();
            largest = largest.max(part.as_f64());
        }
        assert_same_on_present(&grid, &out, &outb, &label("lap5"));
        let whole = BlockList::present(&grid).expect("a list");
        let want = suite::maxabs::launch_blocks(backend, &whole, &ub).unwrap();
        assert_eq!(largest, want.as_f64(), "{}", label("maxabs"));
    }
}

/// A list of regions of two extents, a region past its block's end, one starting off the
/// vectors' alignment and block flags over regions are refused, each naming the problem.
pub fn bad_regions_are_refused(backend: &Backend) {
    let grid = random_grid(backend, "bad regions", &[128, 64], &[64, 32], 1.0);
    let key = BlockKey::new([0, 0, 0]);
    let at = |start: [usize; 3], extent: [usize; 3]| BlockRegion { key, start, extent };
    let two = [at([0, 0, 0], [32, 32, 1]), at([32, 0, 0], [32, 16, 1])];
    let e = BlockList::regions(&grid, &two).unwrap_err();
    assert!(e.to_string().contains("one extent"), "{e}");
    let past = [at([48, 0, 0], [32, 32, 1])];
    let e = BlockList::regions(&grid, &past).unwrap_err();
    assert!(e.to_string().contains("inside"), "{e}");
    let unaligned = [at([2, 0, 0], [32, 32, 1])];
    let e = BlockList::regions(&grid, &unaligned).unwrap_err();
    assert!(e.to_string().contains("multiples of 4"), "{e}");
    let list = BlockList::regions(&grid, &[at([0, 0, 0], [32, 32, 1])]).expect("a list");
    let field = BlockField::<f64>::new(&grid, 1.0).expect("a field");
    let e = field.flags(&list, 0).unwrap_err();
    assert!(e.to_string().contains("whole block"), "{e}");
}
