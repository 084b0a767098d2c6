//! Block grids on a CUDA device: the conformance checks of `stencil_tests::blocks` (kernels
//! over present blocks equal dense launches there, halo exchange, blocks that come and
//! go, halos of several weighted sources and transfers between levels against the CPU),
//! and the CUDA-only refusals (a block size that is no whole number of launch tiles).
//!
//! Without a driver or a device the tests print why they skipped. Stage for a GPU machine
//! with `../shared/tools/stage-gpu -p stencil-tests --no-default-features --test gpu_block_grids`.

use stencil_runtime::blocks::{
    Absent, BlockGrid, HaloExchange, HaloRule, LevelTransfer, Predictor, Refinement, Side,
};
use stencil_runtime::{Backend, BlockField, BlockKey, BlockList, KeptReductions, Precision, Real};
use stencil_tests::blocks::{backend_checks, lap5_refusal};
use stencil_tests::device::gpu_or_skip;
use stencil_tests::kernels::suite;

/// Every check of [`backend_checks`] on the device, in f32 and f64: kernels on blocks equal
/// dense launches, halo exchange fills what the dense field holds, block flags show where a
/// field is non-zero, fields follow blocks added and removed, block fields copy into dense
/// fields.
#[test]
fn block_grid_checks_on_the_device() {
    let Some(gpu) = gpu_or_skip() else { return };
    for (name, check) in backend_checks::<f32>()
        .into_iter()
        .chain(backend_checks::<f64>())
    {
        println!("{name}");
        check(&gpu);
    }
}

#[test]
fn blocks_that_are_no_whole_number_of_tiles_are_refused() {
    let Some(gpu) = gpu_or_skip() else { return };
    let grid = BlockGrid::full(&gpu, &[60, 60], &[12, 12], 1).unwrap();
    let e = lap5_refusal(&gpu, &grid);
    assert!(e.to_string().contains("whole number"), "{e}");
}

#[test]
fn a_cpu_grid_is_refused_on_the_device() {
    let Some(gpu) = gpu_or_skip() else { return };
    let grid = BlockGrid::full(&Backend::Cpu, &[64, 32], &[32, 16], 1).unwrap();
    let e = lap5_refusal(&gpu, &grid);
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

/// A grid of three vertex-centred levels on `backend`: level 0 whole, four level-1 blocks
/// in the middle (their halos border absent level-1 blocks), one level-2 block at their
/// centre.
fn levelled(backend: &Backend) -> BlockGrid {
    let mut g = BlockGrid::new(backend, &[17, 17], &[8, 8], 3)
        .unwrap()
        .with_levels(3, Refinement::Vertex)
        .unwrap();
    let level0: Vec<BlockKey> = g.geometry().all_keys().collect();
    g.update(&level0, &[]).unwrap();
    let fine: Vec<BlockKey> = [[1, 1, 0], [2, 1, 0], [1, 2, 0], [2, 2, 0]]
        .into_iter()
        .map(|i| BlockKey::at(1, i))
        .collect();
    g.update(&fine, &[]).unwrap();
    g.update(&[BlockKey::at(2, [4, 4, 0])], &[]).unwrap();
    g
}

/// Halos of several weighted sources (extrapolated past the sides, predicted from the
/// coarser level) and the transfers between levels (restriction, prediction) give on the
/// device what they give on the CPU: the same sums in the same order, to rounding.
fn level_transfers_match_the_cpu<T: Real>(gpu: &Backend) {
    let (cpu_grid, gpu_grid) = (levelled(&Backend::Cpu), levelled(gpu));
    let smooth = |g: &BlockGrid, l: u8, p: [isize; 3]| {
        let h = 1.0 / (g.geometry().at_level(l).domain[0] - 1) as f64;
        let (x, y) = (p[0] as f64 * h, p[1] as f64 * h);
        T::from_f64((1.0 + x).ln() * (2.0 * y).cos() + x * x * y + f64::from(l))
    };
    let field = |g: &BlockGrid| {
        let mut u = BlockField::<T>::from_level_fn(g, |l, p| smooth(g, l, p)).unwrap();
        u.fill_halos(T::from_f64(-7.0)).unwrap();
        u
    };
    let rule = HaloRule {
        sides: [[Side::Extrapolate; 2]; 3],
        absent: Absent::Coarser(Predictor::Cubic),
    };
    let steps = |g: &BlockGrid, u: &mut BlockField<T>| {
        let fine = [BlockKey::at(1, [1, 1, 0])];
        LevelTransfer::restriction(g).unwrap().run(u).unwrap();
        LevelTransfer::prediction(g, &fine, Predictor::Cubic)
            .unwrap()
            .run(u)
            .unwrap();
        let exchange = HaloExchange::new(g, &rule).unwrap();
        assert!(!exchange.is_empty());
        exchange.run(u).unwrap();
    };
    let (mut on_cpu, mut on_gpu) = (field(&cpu_grid), field(&gpu_grid));
    steps(&cpu_grid, &mut on_cpu);
    steps(&gpu_grid, &mut on_gpu);
    let (c, d) = (on_cpu.arena().unwrap(), on_gpu.arena().unwrap());
    assert_eq!(c.len(), d.len());
    let tolerance = if T::PRECISION == Precision::F32 {
        1e-6
    } else {
        1e-14
    };
    let mut changed = 0;
    for (i, (c, d)) in c.iter().zip(&d).enumerate() {
        let (c, d) = (c.as_f64(), d.as_f64());
        assert!(
            (c - d).abs() <= tolerance * c.abs().max(1.0),
            "{:?} element {i}: cpu {c}, device {d}",
            T::PRECISION
        );
        changed += usize::from(c != -7.0);
    }
    assert!(changed > 0);
}

#[test]
fn weighted_halos_and_level_transfers_on_the_device_match_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    level_transfers_match_the_cpu::<f32>(&gpu);
    level_transfers_match_the_cpu::<f64>(&gpu);
}

/// Work queued on a second stream of the device, ordered by `wait_for` both ways, gives
/// what the grid's own stream gives, bit for bit: a halo fill
/// (`HaloExchange::run_many_on`), a kernel over blocks reading the halos and one with a
/// maximum kept on the device (`Backend::on_stream_of`), taken on the grid's stream
/// (`KeptReductions::take`) as ranks on devices do with their strips.
#[test]
fn work_on_a_second_stream_equals_the_grids_stream() {
    let Some(gpu) = gpu_or_skip() else { return };
    let Backend::Cuda(main) = &gpu else { return };
    let side = main.new_stream().unwrap();
    let n = [512, 256];
    let grid = BlockGrid::full(&gpu, &n, &[128, 64], 1).unwrap();
    let list = BlockList::present(&grid).unwrap();
    let dense = stencil_runtime::Field::<f64>::from_fn(&n, 1, |[i, j, _]| {
        ((i * 37 + j * 11) % 997) as f64 / 7.0 - 71.0
    });
    let rule = HaloRule::uniform(Side::Mirror(1.0), Absent::Value(0.0));
    let plan = HaloExchange::new(&grid, &rule).unwrap();
    // On the grid's stream.
    let mut a = BlockField::from_dense(&grid, &dense, 0.0).unwrap();
    let mut out_a = BlockField::<f64>::new(&grid, 0.0).unwrap();
    plan.run(&mut a).unwrap();
    suite::lap5::launch_blocks(&gpu, &list, &a, &mut out_a, 1.0).unwrap();
    let want = suite::maxabs::launch_blocks(&gpu, &list, &out_a).unwrap();
    // On the second stream, after the uploads queued on the grid's.
    let mut b = BlockField::from_dense(&grid, &dense, 0.0).unwrap();
    let mut out_b = BlockField::<f64>::new(&grid, 0.0).unwrap();
    let on_side = gpu.on_stream_of(&side);
    assert!(
        matches!(&on_side, Backend::Cuda(c) if *c == side && c != main),
        "the work goes on the second stream"
    );
    let kept = KeptReductions::new();
    side.wait_for(main).unwrap();
    plan.run_many_on(&on_side, &mut [&mut b]).unwrap();
    suite::lap5::launch_blocks(&on_side, &list, &b, &mut out_b, 1.0).unwrap();
    let keeping = on_side.keeping_reductions(&kept);
    let returned = suite::maxabs::launch_blocks(&keeping, &list, &out_b).unwrap();
    main.wait_for(&side).unwrap();
    let got = kept.take(&gpu, returned).unwrap().get().unwrap();
    assert_eq!(got, want, "the kept maximum");
    let values = |f: &BlockField<f64>| f.to_dense(&grid, 0, f64::NAN).unwrap().interior().unwrap();
    assert_eq!(
        values(&out_a),
        values(&out_b),
        "the kernel over the filled halos"
    );
}
