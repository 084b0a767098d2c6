//! Block-grid conformance, run per backend (`tests/block_grids.rs` on the CPU,
//! `tests/gpu_block_grids.rs` on a CUDA device): kernels launched over random sets of
//! present blocks equal the dense launch on every present point, and a halo exchange
//! fills every halo point with what the dense field's neighbourhood and side rules give.

use crate::harness::{assert_close, random_field, rng, tolerance};
use crate::kernels::groups::of_fields::{self, Pair};
use crate::kernels::suite;
use rand::Rng;
use stencil_runtime::blocks::{
    Absent, BlockGrid, BlockKey, BlockList, FlagsReader, HaloExchange, HaloRule, HaloWidths,
    PointPack, Side,
};
use stencil_runtime::{stencil, Backend, BlockField, Error, Field, Real};

mod halo;
mod regions;
pub use halo::{halo_matches_dense, RULE};
pub use regions::bad_regions_are_refused;
use regions::regions_match_whole_blocks;

/// Red-black Gauss-Seidel for -lap(u) = f: an in-place kernel of one colour.
#[stencil(red_black = colour)]
pub fn gauss_seidel<T: Real>(u: InOut<T>, f: In<T>, colour: i64, h2: T) {
    u = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] + h2 * f) * 0.25;
}

/// The grid's halo in these checks (the widest any kernel here reads is 2).
pub const HALO: usize = 2;

/// A grid over `domain` in blocks of `block` with each block present with probability
/// `share` (at least one present).
pub fn random_grid(
    backend: &Backend,
    seed: &str,
    domain: &[usize],
    block: &[usize],
    share: f64,
) -> BlockGrid {
    let mut r = rng(seed);
    let mut grid = BlockGrid::new(backend, domain, block, HALO).expect("a valid grid");
    let all: Vec<BlockKey> = grid.geometry().all_keys().collect();
    let mut some: Vec<BlockKey> = all
        .iter()
        .copied()
        .filter(|_| r.random_bool(share))
        .collect();
    if some.is_empty() {
        some.push(all[0]);
    }
    grid.update(&some, &[]).expect("keys of the domain");
    grid
}

/// A conformance check of this module, by name, run on a backend.
pub type BackendCheck = (&'static str, fn(&Backend));

/// The conformance checks of this module every backend runs, at precision `T`.
pub fn backend_checks<T: Real>() -> [BackendCheck; 7] {
    [
        ("kernels_match_dense", kernels_match_dense::<T>),
        ("halo_matches_dense", halo_matches_dense::<T>),
        ("flags_match_the_field", flags_match_the_field::<T>),
        ("fields_follow_the_blocks", fields_follow_the_blocks::<T>),
        ("copies_into_dense_fields", copies_into_dense_fields::<T>),
        ("point_packs_round_trip", point_packs_round_trip::<T>),
        (
            "regions_match_whole_blocks",
            regions_match_whole_blocks::<T>,
        ),
    ]
}

/// The error of `lap5` launched on `backend` over the present blocks of `grid` (a field of
/// ones in, one of zeros out, scalar 1), which must refuse it.
pub fn lap5_refusal(backend: &Backend, grid: &BlockGrid) -> Error {
    let list = BlockList::present(grid).unwrap();
    let u = BlockField::<f64>::new(grid, 1.0).unwrap();
    let mut out = BlockField::<f64>::new(grid, 0.0).unwrap();
    suite::lap5::launch_blocks(backend, &list, &u, &mut out, 1.0).unwrap_err()
}

/// Whether point `p` of the domain lies in a present block.
fn present(grid: &BlockGrid, p: [usize; 3]) -> bool {
    grid.slot(grid.geometry().key_of(p)).is_some()
}

/// The values of `dense` (halo 0) at the present points, and those of `blocks` there.
fn on_present<T: Real>(
    grid: &BlockGrid,
    dense: &Field<T>,
    blocks: &BlockField<T>,
) -> (Vec<f64>, Vec<f64>) {
    let got = blocks.to_dense(grid, 0, T::nan()).expect("readable");
    let (want, got) = (dense.to_host().expect("readable"), got);
    let g = grid.geometry();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for k in 0..g.domain[2] {
        for j in 0..g.domain[1] {
            for i in 0..g.domain[0] {
                if present(grid, [i, j, k]) {
                    let p = [i as isize, j as isize, k as isize];
                    a.push(got.get(p).expect("inside").as_f64());
                    b.push(want.get(p).expect("inside").as_f64());
                }
            }
        }
    }
    (a, b)
}

/// Asserts that `dense` (halo 0) and `blocks` hold the same values at the present points
/// of `grid`.
fn assert_same_on_present<T: Real>(
    grid: &BlockGrid,
    dense: &Field<T>,
    blocks: &BlockField<T>,
    label: &str,
) {
    let (got, want) = on_present(grid, dense, blocks);
    assert_eq!(got, want, "{label}");
}

/// A dense random field on `backend` and the block field of `grid` with its values.
fn pair<T: Real>(
    backend: &Backend,
    grid: &BlockGrid,
    seed: &str,
    lo: f64,
    hi: f64,
) -> (Field<T>, BlockField<T>) {
    let g = grid.geometry();
    let host = random_field::<T>(&mut rng(seed), &g.domain[..g.dims], HALO, lo, hi);
    let blocks = BlockField::from_dense(grid, &host, T::nan()).expect("a block field");
    (host.to(backend).expect("on the backend"), blocks)
}

/// An output pair: a dense field and a block field, both NaN.
fn outputs<T: Real>(backend: &Backend, grid: &BlockGrid) -> (Field<T>, BlockField<T>) {
    let g = grid.geometry();
    let dense = Field::from_fn(&g.domain[..g.dims], 0, |_| T::nan())
        .to(backend)
        .expect("on the backend");
    (
        dense,
        BlockField::new(grid, T::nan()).expect("a block field"),
    )
}

/// Kernels over random block sets equal the dense launch on every present point (2D and
/// 3D, reductions over all blocks against the dense reduction). The "many" case has
/// enough blocks (4 160 of 32 x 8, the last column sticking out of the domain) for device
/// launches to read rows with vectors (`MANY_TILES`).
pub fn kernels_match_dense<T: Real>(backend: &Backend) {
    let tol = tolerance::<T>();
    for (case, share, domain, block) in [
        ("some", 0.55, [100, 50], [32, 16]),
        ("all", 1.0, [100, 50], [32, 16]),
        ("many", 1.0, [2040, 520], [32, 8]),
    ] {
        let label = |k: &str| format!("{k} {:?} {case} blocks", T::PRECISION);
        // With every block present, a reduction over the blocks is the dense one.
        let same_reduction = |what: &str, blocks: T, dense: T| {
            if share == 1.0 {
                assert_close(&label(what), &[blocks.as_f64()], &[dense.as_f64()], tol);
            }
        };
        let grid = random_grid(backend, &format!("grid2 {case}"), &domain, &block, share);
        let list = BlockList::present(&grid).expect("a list");

        let (u, ub) = pair::<T>(backend, &grid, "u", -1.0, 1.0);
        let (mut out, mut outb) = outputs::<T>(backend, &grid);
        suite::lap5::launch(backend, &u, &mut out, T::from_f64(3.0)).unwrap();
        suite::lap5::launch_blocks(backend, &list, &ub, &mut outb, T::from_f64(3.0)).unwrap();
        assert_same_on_present(&grid, &out, &outb, &label("lap5"));

        let (vx, vxb) = pair::<T>(backend, &grid, "vx", -1.0, 1.0);
        let (vy, vyb) = pair::<T>(backend, &grid, "vy", -1.0, 1.0);
        suite::upwind::launch(backend, &u, &vx, &vy, &mut out, T::from_f64(0.4)).unwrap();
        suite::upwind::launch_blocks(backend, &list, &ub, &vxb, &vyb, &mut outb, T::from_f64(0.4))
            .unwrap();
        assert_same_on_present(&grid, &out, &outb, &label("upwind"));

        // Groups of fields (`In<Pair<T>>`, `Out<..>`, `InOut<..>`) over blocks.
        let (mut to_b, mut to_bb) = outputs::<T>(backend, &grid);
        let (mut acc_a, mut acc_ab) = pair::<T>(backend, &grid, "acc a", -1.0, 1.0);
        let (mut acc_b, mut acc_bb) = pair::<T>(backend, &grid, "acc b", -1.0, 1.0);
        let k = T::from_f64(0.3);
        let (from, from_b) = (Pair { a: &u, b: &vx }, Pair { a: &ub, b: &vxb });
        let (to, to_blocks) = (
            Pair {
                a: &mut out,
                b: &mut to_b,
            },
            Pair {
                a: &mut outb,
                b: &mut to_bb,
            },
        );
        let acc = Pair {
            a: &mut acc_a,
            b: &mut acc_b,
        };
        of_fields::exchange::launch(backend, from, to, acc, k).unwrap();
        let acc_blocks = Pair {
            a: &mut acc_ab,
            b: &mut acc_bb,
        };
        of_fields::exchange::launch_blocks(backend, &list, from_b, to_blocks, acc_blocks, k)
            .unwrap();
        for (what, dense, blocks) in [
            ("to.a", &out, &outb),
            ("to.b", &to_b, &to_bb),
            ("acc.a", &acc_a, &acc_ab),
            ("acc.b", &acc_b, &acc_bb),
        ] {
            assert_same_on_present(&grid, dense, blocks, &label(&format!("exchange {what}")));
        }

        // Indices, extents and coordinates are the domain's.
        suite::checker::launch(backend, &u, &mut out, T::from_f64(0.5), T::from_f64(0.25)).unwrap();
        suite::checker::launch_blocks(
            backend,
            &list,
            &ub,
            &mut outb,
            T::from_f64(0.5),
            T::from_f64(0.25),
        )
        .unwrap();
        assert_same_on_present(&grid, &out, &outb, &label("checker"));

        // Staged values over a block reach into the neighbouring blocks' points.
        let dt = T::from_f64(0.3);
        let dense_fastest = suite::staged_update::launch(backend, &u, &vx, &mut out, dt).unwrap();
        let block_fastest =
            suite::staged_update::launch_blocks(backend, &list, &ub, &vxb, &mut outb, dt).unwrap();
        assert_same_on_present(&grid, &out, &outb, &label("staged_update"));
        same_reduction("staged_update fastest", block_fastest, dense_fastest);

        let dense_total = suite::edge_tests::launch(backend, &u, &mut out).unwrap();
        let block_total = suite::edge_tests::launch_blocks(backend, &list, &ub, &mut outb).unwrap();
        assert_same_on_present(&grid, &out, &outb, &label("edge_tests"));
        same_reduction("edge_tests total", block_total, dense_total);

        // A max over the present blocks: the largest |u| of their points.
        let largest = suite::maxabs::launch_blocks(backend, &list, &ub).unwrap();
        let host = u.to_host().unwrap();
        let g = grid.geometry();
        let mut want = f64::NEG_INFINITY;
        for j in 0..g.domain[1] {
            for i in 0..g.domain[0] {
                if present(&grid, [i, j, 0]) {
                    want = want.max(
                        host.get([i as isize, j as isize, 0])
                            .unwrap()
                            .as_f64()
                            .abs(),
                    );
                }
            }
        }
        assert_eq!(largest.as_f64(), want, "{}", label("maxabs"));

        // Red-black Gauss-Seidel in place, both colours.
        let (f, fb) = pair::<T>(backend, &grid, "f", -1.0, 1.0);
        let (mut e, mut eb) = pair::<T>(backend, &grid, "e", -1.0, 1.0);
        for colour in [0, 1] {
            gauss_seidel::launch(backend, &mut e, &f, colour, T::from_f64(0.01)).unwrap();
            gauss_seidel::launch_blocks(backend, &list, &mut eb, &fb, colour, T::from_f64(0.01))
                .unwrap();
        }
        // (The second colour read first-colour values from neighbouring blocks' halos,
        // which were not exchanged: compare the first colour's points and the second
        // colour's points away from block edges.)
        let dense = eb.to_dense(&grid, 0, T::nan()).unwrap();
        let want = e.to_host().unwrap();
        for j in 0..g.domain[1] {
            for i in 0..g.domain[0] {
                let (bi, bj) = (i % g.block[0], j % g.block[1]);
                let inner = bi > 0 && bj > 0 && bi + 1 < g.block[0] && bj + 1 < g.block[1];
                if present(&grid, [i, j, 0]) && ((i + j) % 2 == 0 || inner) {
                    let p = [i as isize, j as isize, 0];
                    assert_eq!(
                        dense.get(p),
                        want.get(p),
                        "{} at {p:?}",
                        label("gauss_seidel")
                    );
                }
            }
        }

        // 3D.
        let grid3 = random_grid(
            backend,
            &format!("grid3 {case}"),
            &[40, 20, 10],
            &[32, 8, 4],
            share,
        );
        let list3 = BlockList::present(&grid3).unwrap();
        let (w, wb) = pair::<T>(backend, &grid3, "w", -1.0, 1.0);
        let (mut out3, mut out3b) = outputs::<T>(backend, &grid3);
        suite::lap7::launch(backend, &w, &mut out3, T::from_f64(2.0)).unwrap();
        suite::lap7::launch_blocks(backend, &list3, &wb, &mut out3b, T::from_f64(2.0)).unwrap();
        assert_same_on_present(&grid3, &out3, &out3b, &label("lap7"));
    }
}

/// Block flags equal what the field holds: per block, any non-zero point, and any within
/// the margin of each side.
pub fn flags_match_the_field<T: Real>(backend: &Backend) {
    for (domain, block) in [
        (vec![100usize, 70], vec![32usize, 16]),
        (vec![40, 20, 12], vec![16, 8, 4]),
    ] {
        let grid = random_grid(backend, &format!("flags {domain:?}"), &domain, &block, 0.7);
        let g = *grid.geometry();
        let mut r = rng("flags values");
        // Mostly zero; a few non-zero points, one NaN.
        let mut dense = vec![0.0f64; g.domain.iter().product()];
        for v in dense.iter_mut() {
            if r.random_bool(0.002) {
                *v = r.random_range(-1.0..1.0);
            }
        }
        dense[g.domain[0] + 3] = f64::NAN;
        let index = |q: [usize; 3]| q[0] + g.domain[0] * (q[1] + g.domain[1] * q[2]);
        let field = BlockField::from_fn(&grid, |p| {
            let inside = (0..3).all(|a| p[a] >= 0 && (p[a] as usize) < g.domain[a]);
            // Non-zero halos, which the flags must not see.
            if inside {
                T::from_f64(dense[index(p.map(|x| x as usize))])
            } else {
                T::one()
            }
        })
        .unwrap();
        let list = BlockList::present(&grid).unwrap();
        // One reader for both margins: its memory is reused.
        let mut reader = FlagsReader::new();
        for margin in [1, 3] {
            let flags = field.flags(&list, margin).unwrap();
            assert_eq!(flags.len(), list.len());
            reader.start(&field, &list, margin).unwrap();
            assert!(reader.is_pending());
            let late = reader.finish(&list).unwrap();
            assert_eq!(
                late.as_ref(),
                Some(&flags),
                "flags read late, margin {margin}"
            );
            assert_eq!(reader.finish(&list).unwrap(), None, "finished twice");
            let mut seen = 0;
            for (key, got) in list.keys().iter().zip(&flags) {
                let o = g.origin(*key);
                let (mut any, mut near) = (false, [[false; 2]; 3]);
                for q in points_of(&g, o) {
                    let v = dense[index(q)];
                    if v != 0.0 {
                        any = true;
                        for a in 0..g.dims {
                            let local = q[a] - o[a];
                            near[a][0] |= local < margin;
                            near[a][1] |= local + margin >= g.block[a];
                        }
                    }
                }
                assert_eq!(got.any(), any, "block {key:?}");
                seen += usize::from(any);
                for (a, sides) in near.iter().enumerate().take(g.dims) {
                    for (side, &want) in sides.iter().enumerate() {
                        assert_eq!(
                            got.near(a, side),
                            want,
                            "block {key:?} axis {a} side {side}"
                        );
                    }
                }
            }
            assert!(
                seen > 0 && seen < list.len(),
                "some blocks flagged, not all"
            );
        }
        // Flags started on one layout cannot be finished on another.
        reader.start(&field, &list, 1).unwrap();
        let absent = g
            .all_keys()
            .find(|k| !grid.contains(*k))
            .expect("an absent block");
        let mut grid = grid;
        grid.update(&[absent], &[]).unwrap();
        let other = BlockList::present(&grid).unwrap();
        let err = reader.finish(&other).unwrap_err().to_string();
        assert!(err.contains("another layout"), "{err}");
    }
}

/// The points of the domain in the block at origin `o`.
fn points_of(g: &stencil_runtime::blocks::Geometry, o: [usize; 3]) -> Vec<[usize; 3]> {
    let end = [0, 1, 2].map(|a| (o[a] + g.block[a]).min(g.domain[a]));
    let mut out = Vec::new();
    for k in o[2]..end[2] {
        for j in o[1]..end[1] {
            for i in o[0]..end[0] {
                out.push([i, j, k]);
            }
        }
    }
    out
}

/// Blocks added and removed during a run: kept blocks keep their values, added ones get
/// theirs (or zero, `follow_zeroed`), and a field that has not followed is refused by a
/// launch.
pub fn fields_follow_the_blocks<T: Real>(backend: &Backend) {
    let mut grid = random_grid(backend, "follow", &[96, 64], &[32, 16], 0.5);
    let value = |p: [isize; 3]| T::from_f64((p[0] * 3 + p[1] * 1000) as f64);
    let mut field = BlockField::from_fn(&grid, value).unwrap();
    let mut other = BlockField::from_fn(&grid, value).unwrap();
    let mut zeroed = BlockField::from_fn(&grid, value).unwrap();
    let keys = grid.keys();
    let all: Vec<BlockKey> = grid.geometry().all_keys().collect();
    let absent: Vec<BlockKey> = all.iter().copied().filter(|k| !keys.contains(k)).collect();
    let change = grid
        .update(&absent[..absent.len().min(3)], &keys[..keys.len() / 2])
        .unwrap();
    field.follow(&grid, &change, value).unwrap();
    let g = *grid.geometry();
    for k in grid.keys() {
        let o = g.origin(k);
        for j in 0..g.block[1] {
            for i in 0..g.block[0] {
                let p = [o[0] + i, o[1] + j, 0];
                let want = value([p[0] as isize, p[1] as isize, 0]);
                assert_eq!(field.get(&grid, p).unwrap(), Some(want), "point {p:?}");
            }
        }
    }
    // Following with added blocks zero: kept blocks keep their values, added ones are 0.
    zeroed.follow_zeroed(&grid, &change).unwrap();
    let added = &absent[..absent.len().min(3)];
    let dense = zeroed.to_dense(&grid, 0, T::nan()).unwrap();
    for k in grid.keys() {
        let o = g.origin(k);
        for j in 0..g.block[1] {
            for i in 0..g.block[0] {
                let p = [(o[0] + i) as isize, (o[1] + j) as isize, 0];
                let want = if added.contains(&k) {
                    T::zero()
                } else {
                    value(p)
                };
                assert_eq!(dense.get(p), Some(want), "zero-following: point {p:?}");
            }
        }
    }
    let list = BlockList::present(&grid).unwrap();
    let mut out = BlockField::new(&grid, T::zero()).unwrap();
    let e = suite::lap5::launch_blocks(backend, &list, &other, &mut out, T::one()).unwrap_err();
    assert!(e.to_string().contains("BlockField::follow"), "{e}");
    other.follow(&grid, &change, value).unwrap();
    suite::lap5::launch_blocks(backend, &list, &other, &mut out, T::one()).unwrap();
    // A field of another grid is refused.
    let stranger = random_grid(backend, "stranger", &[96, 64], &[32, 16], 1.0);
    let foreign = BlockField::<T>::new(&stranger, T::zero()).unwrap();
    let e = suite::lap5::launch_blocks(backend, &list, &foreign, &mut out, T::one()).unwrap_err();
    assert!(e.to_string().contains("another block grid"), "{e}");
}

/// A block field made of zeros where it lives equals one uploaded. A block field copied
/// into a dense field where both live equals its host copy
/// (`to_dense`) on the present blocks and leaves the other points alone, also for a domain
/// that is no whole number of blocks. Points read together (`get_many`) equal points read
/// one by one, in block fields and dense fields.
pub fn copies_into_dense_fields<T: Real>(backend: &Backend) {
    for (seed, domain, block) in [
        ("dense-2d", [100, 70], [32, 16]),
        ("dense-odd", [33, 47], [16, 16]),
    ] {
        let grid = random_grid(backend, seed, &domain, &block, 0.5);
        let value = |p: [isize; 3]| T::from_f64((p[0] * 7 + p[1] * 1000) as f64);
        let field = BlockField::from_fn(&grid, value).unwrap();
        let zeroed = BlockField::<T>::zeroed(&grid).unwrap().arena().unwrap();
        let uploaded = BlockField::new(&grid, T::zero()).unwrap().arena().unwrap();
        assert!(zeroed == uploaded, "{seed}: zeroed where it lives");
        let mut dense = Field::from_fn(&domain, 1, |_| T::from_f64(-1.0))
            .to(backend)
            .unwrap();
        field.copy_into_dense(&grid, &mut dense).unwrap();
        let got = dense.to_host().unwrap();
        let want = field.to_dense(&grid, 1, T::from_f64(-1.0)).unwrap();
        assert_eq!(got.interior().unwrap(), want.interior().unwrap(), "{seed}");
        // Zeroed, then copied again: absent blocks read zero.
        dense.set_zero().unwrap();
        field.copy_into_dense(&grid, &mut dense).unwrap();
        let got = dense.interior().unwrap();
        let want = field
            .to_dense(&grid, 0, T::zero())
            .unwrap()
            .interior()
            .unwrap();
        assert_eq!(got, want, "{seed}: after set_zero");
        // Points read together (one wait on a device) equal points read one by one,
        // in absent blocks, outside the domain and outside a dense field's storage too.
        let points: Vec<[usize; 3]> = (0..40)
            .map(|k| [(k * 37) % (domain[0] + 3), (k * 11) % (domain[1] + 2), 0])
            .chain([[domain[0] + 2, domain[1] + 1, 0]])
            .collect();
        let one_by_one: Vec<_> = points
            .iter()
            .map(|&p| field.get(&grid, p).unwrap())
            .collect();
        assert_eq!(
            field.get_many(&grid, &points).unwrap(),
            one_by_one,
            "{seed}"
        );
        assert!(one_by_one.contains(&None) && one_by_one.iter().any(Option::is_some));
        let shifted: Vec<_> = points
            .iter()
            .map(|p| [p[0] as isize - 1, p[1] as isize - 1, 0])
            .collect();
        let one_by_one: Vec<_> = shifted.iter().map(|&p| dense.get(p)).collect();
        assert_eq!(dense.get_many(&shifted).unwrap(), one_by_one, "{seed}");
        assert!(one_by_one.contains(&None) && one_by_one.iter().flatten().any(|&x| x != T::zero()));
        let mut wrong = Field::<T>::zeros_on(backend, &[domain[0] + 1, domain[1]], 0).unwrap();
        let e = field.copy_into_dense(&grid, &mut wrong).unwrap_err();
        assert!(e.to_string().contains("is not the grid's domain"), "{e}");
    }
}

/// A [`PointPack`] of scattered points of three fields, packed and unpacked into zeroed
/// fields: those points (and no others) take the fields' values. On the CPU the buffer
/// is read directly: field after field. Bad packs are refused.
pub fn point_packs_round_trip<T: Real>(backend: &Backend) {
    let grid = random_grid(backend, "pack", &[100, 70], &[32, 16], 0.6);
    let g = *grid.geometry();
    let keys = grid.keys();
    // Every third block, and in each a handful of elements (halo points included).
    let points: Vec<(BlockKey, Vec<usize>)> = keys
        .iter()
        .step_by(3)
        .enumerate()
        .map(|(k, &key)| {
            let list = (0..g.slot_len()).skip(k % 5).step_by(37).collect();
            (key, list)
        })
        .collect();
    let value = |f: usize| {
        move |p: [isize; 3]| T::from_f64((p[0] * 3 + p[1] * 1000) as f64 + f as f64 * 0.25)
    };
    let fields: Vec<BlockField<T>> = (0..3)
        .map(|f| BlockField::from_fn(&grid, value(f)).unwrap())
        .collect();
    let mut pack = PointPack::<T>::new(&grid, &points, 3).unwrap();
    let count: usize = points.iter().map(|(_, e)| e.len()).sum();
    assert_eq!(pack.count(), count);
    pack.pack(&grid, &fields.iter().collect::<Vec<_>>())
        .unwrap();
    let mut zeroed: Vec<BlockField<T>> =
        (0..3).map(|_| BlockField::zeroed(&grid).unwrap()).collect();
    pack.unpack(&grid, &mut zeroed.iter_mut().collect::<Vec<_>>())
        .unwrap();
    for f in 0..3 {
        let (full, got) = (fields[f].arena().unwrap(), zeroed[f].arena().unwrap());
        let mut want = vec![T::zero(); full.len()];
        for (key, list) in &points {
            let slot = grid.slot(*key).unwrap();
            for &e in list {
                let at = slot * g.slot_len() + e;
                want[at] = full[at];
            }
        }
        assert!(want == got, "field {f}: unpacked points differ");
    }
    // The buffer's order: on the CPU it is readable directly.
    if let Some(values) = pack.host_values() {
        let first = fields[1].slot_values(&grid, points[0].0).unwrap().unwrap();
        assert!(
            values[count] == first[points[0].1[0]],
            "field 1 starts at `count`"
        );
    }
    let e = PointPack::<T>::new(&grid, &points, 9).unwrap_err();
    assert!(e.to_string().contains("1 to 8 fields"), "{e}");
    let absent = g.all_keys().find(|k| !grid.contains(*k));
    if let Some(k) = absent {
        let e = PointPack::<T>::new(&grid, &[(k, vec![0])], 1).unwrap_err();
        assert!(e.to_string().contains("not present"), "{e}");
    }
    let e = PointPack::<T>::new(&grid, &[(keys[0], vec![g.slot_len()])], 1).unwrap_err();
    assert!(e.to_string().contains("outside its slot"), "{e}");
    let e = pack.pack(&grid, &[&fields[0]]).unwrap_err();
    assert!(e.to_string().contains("3 fields was given 1"), "{e}");
}
