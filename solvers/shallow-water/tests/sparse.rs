//! Sparse runs (only wet blocks and their neighbours stored) equal dense runs bit for bit
//! in f64 on the CPU: a pond on 26% of the domain, a pool that spreads over many blocks
//! (blocks added and freed as it goes), the fully wet radial dam break, a periodic
//! channel whose side length is not a whole number of blocks, and Malpasset at 15 m. The
//! flood's extent survives blocks that are freed. The device side is in `gpu.rs`; the
//! program's outputs and resuming in `program.rs`.

mod common;

use shallow_water::*;
use stencil_runtime::Backend;

/// `terrain` between walls under still water of depth `depth(x, y)`, default physics.
fn walled(terrain: Terrain, depth: impl Fn(f64, f64) -> f64) -> Setup {
    let water = Water::from_depth(&terrain, depth);
    Setup::new(
        terrain,
        water,
        Boundaries::all(Boundary::Wall),
        Physics::default(),
    )
}

/// Runs `steps` steps dense and sparse and compares the states bit for bit.
fn same_as_dense(setup: &Setup, steps: usize, label: &str) -> SparseShallowWater<f64> {
    let cadence = (sparse::REGRID_EVERY, sparse::REGRID_LAG);
    same_as_dense_updated(setup, steps, label, cadence)
}

/// [`same_as_dense`] with the present blocks updated every `cadence.0` steps, each update
/// chosen `cadence.1` steps after its measure.
fn same_as_dense_updated(
    setup: &Setup,
    steps: usize,
    label: &str,
    (every, lag): (u64, u64),
) -> SparseShallowWater<f64> {
    let mut dense = ShallowWater::<f64>::new(&Backend::Cpu, setup).unwrap();
    let mut sparse = SparseShallowWater::<f64>::new(&Backend::Cpu, setup).unwrap();
    sparse.set_block_updates(every, lag).unwrap();
    for step in 0..steps {
        let a = dense.step(f64::INFINITY).unwrap();
        let b = sparse.step(f64::INFINITY).unwrap();
        assert_eq!(a, b, "{label}: time step {step}");
    }
    let (a, b) = (dense.state().unwrap(), sparse.state().unwrap());
    for k in 0..3 {
        let first = a[k]
            .iter()
            .zip(&b[k])
            .position(|(x, y)| x.to_bits() != y.to_bits());
        if let Some(c) = first {
            let g = dense.grid();
            panic!(
                "{label}: field {k} differs first at cell ({}, {}): dense {} sparse {}",
                c % g.nx,
                c / g.nx,
                a[k][c],
                b[k][c]
            );
        }
    }
    let (va, vb) = (
        dense.survey().unwrap().volume,
        sparse.survey().unwrap().volume,
    );
    assert!(
        (va - vb).abs() <= 1e-12 * va.abs(),
        "{label}: volume {va} vs {vb}"
    );
    sparse
}

#[test]
fn a_pond_runs_as_dense() {
    // 12 x 12 blocks, of which the wet circle and a ring around it are present.
    let case = cases::pond(384).unwrap();
    let sparse = same_as_dense(&case.setup, 16, "pond");
    let all = sparse.block_count();
    assert!(sparse.blocks().len() < all, "some blocks are absent");
}

#[test]
fn a_spreading_pool_adds_blocks_as_it_goes() {
    // Dry but for a pool in one corner block, on a slope towards the far corner.
    let grid = Grid::new(192, 160, 1.0, 1.0, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |x, y| -0.02 * x - 0.01 * y).unwrap();
    let setup = walled(terrain, |x, y| if x < 20.0 && y < 20.0 { 2.0 } else { 0.0 });
    let start = SparseShallowWater::<f64>::new(&Backend::Cpu, &setup).unwrap();
    let first = start.blocks().len();
    let sparse = same_as_dense(&setup, 160, "spreading pool");
    assert!(
        sparse.blocks().len() > first,
        "blocks were added ({first} at first)"
    );
}

#[test]
fn blocks_updated_as_seldom_and_late_as_allowed_keep_the_run_as_dense() {
    // The spreading pool with the present blocks updated as seldom as allowed, and with
    // each update chosen as late after its measure as allowed: the wider margin keeps
    // every block the water reaches before the next update.
    let grid = Grid::new(192, 160, 1.0, 1.0, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |x, y| -0.02 * x - 0.01 * y).unwrap();
    let setup = walled(terrain, |x, y| if x < 20.0 && y < 20.0 { 2.0 } else { 0.0 });
    let most = sparse::MOST_REGRID_EVERY;
    let first = SparseShallowWater::<f64>::new(&Backend::Cpu, &setup)
        .unwrap()
        .blocks()
        .len();
    for (every, lag) in [(most, 0), (most / 2 + 1, most / 2), (2, 1)] {
        let label = format!("pool, updates every {every} steps, {lag} late");
        let run = same_as_dense_updated(&setup, 160, &label, (every, lag));
        assert!(run.blocks().len() > first, "{label}: blocks were added");
        assert!(run.layout_changes().0 >= 2, "{label}: the layout changed");
    }
}

#[test]
fn a_bad_update_cadence_is_refused_with_its_range() {
    let case = cases::pond(128).unwrap();
    let mut run = SparseShallowWater::<f64>::new(&Backend::Cpu, &case.setup).unwrap();
    let most = sparse::MOST_REGRID_EVERY;
    for (every, lag) in [(0, 0), (most + 1, 0), (3, 3), (most, 1)] {
        let e = run.set_block_updates(every, lag).unwrap_err().to_string();
        assert!(e.contains("block updates") && e.contains("at most"), "{e}");
    }
    run.step(f64::INFINITY).unwrap();
    let e = run.set_block_updates(3, 1).unwrap_err().to_string();
    assert!(e.contains("before the first step"), "{e}");
    let defaults = (sparse::REGRID_EVERY, sparse::REGRID_LAG);
    assert_eq!(run.block_updates(), defaults);
}

#[test]
fn a_sparse_run_without_water_steps_as_a_dry_dense_one() {
    // No water anywhere: no block is present, and the largest speed over no cells is no
    // wave, as a dry dense run's (it was taken for an instability at step 0).
    let grid = Grid::new(96, 64, 1.0, 1.0, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |x, _| 0.01 * x).unwrap();
    let setup = walled(terrain, |_, _| 0.0);
    let mut dense = ShallowWater::<f64>::new(&Backend::Cpu, &setup).unwrap();
    let mut run = SparseShallowWater::<f64>::new(&Backend::Cpu, &setup).unwrap();
    assert!(run.blocks().is_empty(), "no block is present");
    for _ in 0..3 {
        // Without a wave the step is the limit.
        assert_eq!(dense.step(0.5).unwrap(), 0.5);
        assert_eq!(run.step(0.5).unwrap(), 0.5);
    }
    assert_eq!(dense.state().unwrap(), run.state().unwrap());
    let mut clocked = SparseShallowWater::<f64>::new(&Backend::Cpu, &setup).unwrap();
    clocked.advance_to(5.0).unwrap();
    assert_eq!(clocked.time(), 5.0, "the clock steps to the end at once");
}

#[test]
fn a_wet_domain_runs_as_dense() {
    let case = cases::radial(100).unwrap();
    same_as_dense(&case.setup, 20, "radial");
}

#[test]
fn a_periodic_channel_runs_as_dense() {
    let grid = Grid::new(70, 40, 1.0, 1.0, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |x, _| 0.1 * (x / 10.0).sin()).unwrap();
    let water = Water::from_surface(&terrain, |x, y| {
        1.0 + 0.2 * ((x - 20.0).powi(2) + (y - 20.0).powi(2) < 50.0) as i32 as f64
    });
    let boundaries = Boundaries {
        west: Boundary::Periodic,
        east: Boundary::Periodic,
        south: Boundary::Wall,
        north: Boundary::Wall,
    };
    let setup = Setup::new(terrain, water, boundaries, Physics::default());
    same_as_dense(&setup, 30, "periodic channel");
}

#[test]
fn malpasset_runs_as_dense() {
    let Some(case) = common::malpasset() else {
        return;
    };
    let sparse = same_as_dense(&case.setup, 40, "malpasset");
    let all = sparse.block_count();
    println!("{} of {all} blocks present", sparse.blocks().len());
    assert!(sparse.blocks().len() * 4 < all, "most blocks are absent");
}

#[test]
fn the_flood_extent_outlives_freed_blocks() {
    // At the start every neighbour of a wet block is present; the first regrid frees
    // those the water cannot reach. An extent set beforehand (1 m deepest, arrival at
    // 0.5 s everywhere) must come back whole: freed blocks hand theirs to the host.
    let case = cases::pond(384).unwrap();
    let mut flow = SparseShallowWater::<f64>::new(&Backend::Cpu, &case.setup).unwrap();
    flow.track_flood(0.01).unwrap();
    let cells = 384 * 384;
    flow.set_flood_extent(&vec![1.0; cells], &vec![0.5; cells])
        .unwrap();
    let before = flow.blocks().len();
    for _ in 0..8 {
        flow.step(f64::INFINITY).unwrap();
        flow.track().unwrap();
    }
    assert!(
        flow.blocks().len() < before,
        "the first regrid freed blocks"
    );
    let [deepest, arrival] = flow.flood_extent().unwrap().unwrap();
    assert!(
        deepest.iter().all(|&d| d >= 1.0),
        "a cell lost its largest depth"
    );
    assert!(
        arrival.iter().all(|&t| t == 0.5),
        "a cell lost its arrival time"
    );
    // A fresh extent: zero and never outside the water, the pond's depth inside.
    flow.track_flood(0.01).unwrap();
    flow.track().unwrap();
    let [deepest, arrival] = flow.flood_extent().unwrap().unwrap();
    let (h, _, _) = flow.depth_and_velocity().unwrap();
    for k in 0..cells {
        assert_eq!(deepest[k], h[k].max(0.0), "cell {k}");
        assert_eq!(arrival[k] >= 0.0, h[k] > 0.01, "cell {k}");
    }
}

#[test]
fn auto_storage_is_sparse_on_the_cpu_where_most_blocks_are_dry() {
    let choose = |setup: &Setup| Storage::Auto.choose(setup, &Backend::Cpu).unwrap();
    assert_eq!(choose(&cases::radial(200).unwrap().setup), Storage::Dense);
    assert_eq!(choose(&cases::pond(384).unwrap().setup), Storage::Dense);
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset");
    if let Ok(case) = cases::malpasset(&dir) {
        assert_eq!(choose(&case.setup), Storage::Sparse);
    }
    // An 8 x 2 block channel (blocks of 64 x 32), wet in its first block only: 4 of 16
    // blocks start present.
    let grid = Grid::new(512, 64, 1.0, 1.0, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |_, _| 0.0).unwrap();
    let setup = walled(terrain, |x, y| if x < 10.0 && y < 10.0 { 1.0 } else { 0.0 });
    assert_eq!(choose(&setup), Storage::Sparse);
    assert_eq!(
        shallow_water::sparse::starting_blocks(&setup).unwrap(),
        (4, 16)
    );
}

#[test]
fn an_unstable_sparse_run_names_the_cell() {
    // A NaN put into a wet cell (through a restored state) is found where it is.
    let case = cases::pond(384).unwrap();
    let mut flow = SparseShallowWater::<f64>::new(&Backend::Cpu, &case.setup).unwrap();
    flow.step(f64::INFINITY).unwrap();
    let mut state = flow.state().unwrap();
    let (i, j) = (192, 200);
    state[1][j * 384 + i] = f64::NAN;
    let saved = SavedState {
        time: flow.time(),
        steps: flow.steps(),
        initial_volume: flow.initial_volume(),
        state,
    };
    flow.restore(&saved).unwrap();
    match flow.check() {
        Err(FloodError::Unstable { at, .. }) => assert_eq!((at.i, at.j), (i, j)),
        other => panic!("expected an instability at ({i}, {j}), got {other:?}"),
    }
}

/// The live view's picture (`kp07::picture`, and for a sparse run the copy of its blocks
/// into dense fields) is the same for both storages, its depth the state's depth.
#[test]
fn the_live_picture_of_a_sparse_run_equals_the_dense_ones() {
    let case = cases::pond(384).unwrap();
    let mut dense = ShallowWater::<f64>::new(&Backend::Cpu, &case.setup).unwrap();
    let mut sparse = SparseShallowWater::<f64>::new(&Backend::Cpu, &case.setup).unwrap();
    for _ in 0..16 {
        dense.step(f64::INFINITY).unwrap();
        sparse.step(f64::INFINITY).unwrap();
    }
    let g = *dense.grid();
    let picture =
        |draw: &dyn Fn(&mut stencil_runtime::Field<f64>, &mut stencil_runtime::Field<f64>)| {
            let mut depth = stencil_runtime::Field::from_fn(&[g.nx, g.ny], 1, |_| -1.0);
            let mut speed = stencil_runtime::Field::from_fn(&[g.nx, g.ny], 1, |_| -1.0);
            draw(&mut depth, &mut speed);
            (depth.interior().unwrap(), speed.interior().unwrap())
        };
    let (dd, ds) = picture(&|d, s| dense.picture(d, s).unwrap());
    let (sd, ss) = picture(&|d, s| sparse.picture(d, Some(s)).unwrap());
    assert!(dd == sd, "the depths differ");
    assert!(ds == ss, "the speeds differ");
    let depth = dense.depth().unwrap();
    for (c, (&p, &h)) in dd.iter().zip(&depth).enumerate() {
        assert_eq!(p, h.max(0.0), "cell {c}");
    }
    assert!(
        sparse.blocks().len() < sparse.block_count(),
        "some blocks are absent"
    );
    assert!(dd.iter().any(|&h| h > 0.1) && ds.iter().all(|&s| s >= 0.0));
}
