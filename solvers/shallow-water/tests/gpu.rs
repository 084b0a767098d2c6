//! The shallow-water solver on a CUDA device agrees with the CPU: every kernel on random
//! inputs, and whole runs (every boundary kind, friction, wet/dry fronts, f32 and f64).
//! The lake at rest stays at rest on the device too. Skips, saying why, without a GPU.
//! Stage for a GPU machine with `../shared/tools/stage-gpu -p shallow-water --test gpu`.

mod common;

use shallow_water::kernels::kp07::{self, Fluxes, StateFields};
use shallow_water::*;
use stencil_runtime::{Backend, Field, Real};
use stencil_tests::device::gpu_or_skip;
use stencil_tests::harness::{assert_close, random_field, rng, values};

/// The kernels' outputs: the fields, the CFL speed and the survey.
type Outputs<T> = (Vec<Vec<f64>>, f64, (f64, T, T, T));

/// Runs the scheme's kernels on random states (some cells dry) on both backends.
fn kernels_agree<T: Real>(gpu: &Backend, tolerance: f64) {
    let n = [37, 29];
    let mut r = rng("kp07 kernels");
    let bed = random_field::<T>(&mut r, &n, 3, -1.0, 0.0);
    let depth = random_field::<T>(&mut r, &n, 2, -0.3, 1.0);
    // Surfaces at or above the bed: a third of the cells dry.
    let w = Field::from_fn(&n, 2, |p| {
        let b = bed.get(p).unwrap_or(T::zero());
        b + Real::max(depth.get(p).unwrap_or(T::zero()), T::zero())
    });
    let q = random_field::<T>(&mut r, &n, 2, -0.5, 0.5);
    let p = random_field::<T>(&mut r, &n, 2, -0.5, 0.5);
    let run = |b: &Backend, kinds: [i64; 4]| -> Outputs<T> {
        let on = |f: &Field<T>| f.to(b).unwrap();
        let (w, q, p, bed) = (on(&w), on(&q), on(&p), on(&bed));
        let zeros = |halo| Field::<T>::zeros_on(b, &n, halo).unwrap();
        let f = T::from_f64;
        let (mut u, mut v) = (zeros(2), zeros(2));
        kp07::velocities::launch(b, &w, &q, &p, &bed, &mut u, &mut v, f(1e-8)).unwrap();
        let mut fluxes: [Field<T>; 6] = std::array::from_fn(|_| zeros(1));
        let s = kp07::Kp07 {
            g: f(9.81),
            g_n2: f(0.01),
            theta: f(1.3),
            eps: f(1e-8),
            dx_inv: f(30.0),
            dy_inv: f(20.0),
            west: kinds[0],
            east: kinds[1],
            south: kinds[2],
            north: kinds[3],
            west_value: f(0.4),
            east_value: f(0.3),
            south_value: f(0.2),
            north_value: f(0.1),
        };
        let state = [&w, &q, &p, &u, &v];
        let faces = Fluxes::of(fluxes.each_mut());
        let speed = kp07::faces::launch(b, StateFields::of(state), &bed, faces, &s).unwrap();
        let mut to = [on(&w), on(&q), on(&p), zeros(2), zeros(2)];
        let dt = stencil_runtime::Value::new(b, f(1e-3)).unwrap();
        let faces = Fluxes::of(fluxes.each_ref());
        let (from, to_fields) = (StateFields::of(state), StateFields::of(to.each_mut()));
        kp07::advance::launch(b, from, &bed, faces, to_fields, &dt, f(0.5), &s).unwrap();
        let [tw, tq, tp, _, _] = &to;
        let survey = kp07::survey::launch(b, tw, tq, tp, &bed, f(1e-3)).unwrap();
        let mut all: Vec<Vec<f64>> = vec![values(&u), values(&v)];
        all.extend(fluxes.iter().map(values));
        all.extend(to.iter().map(values));
        (all, speed.as_f64(), survey)
    };
    // Walls, fixed depth, fixed discharge, open on the four sides, then periodic.
    for kinds in [[0, 1, 2, 3], [3, 2, 1, 0], [4, 4, 4, 4]] {
        let (c, cs, csv) = run(&Backend::Cpu, kinds);
        let (g, gs, gsv) = run(gpu, kinds);
        for (k, (c, g)) in c.iter().zip(&g).enumerate() {
            assert_close(&format!("output {k} with sides {kinds:?}"), g, c, tolerance);
        }
        assert_close("the CFL speed", &[gs], &[cs], tolerance);
        assert_close("the volume", &[gsv.0], &[csv.0], tolerance);
        assert_close(
            "the survey's extremes",
            &[gsv.1.as_f64(), gsv.2.as_f64(), gsv.3.as_f64()],
            &[csv.1.as_f64(), csv.2.as_f64(), csv.3.as_f64()],
            tolerance,
        );
    }
}

#[test]
fn every_kernel_agrees_with_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    kernels_agree::<f64>(&gpu, 1e-12);
    kernels_agree::<f32>(&gpu, 1e-5);
}

/// A partly dry 2D dam break over a bumpy bed with friction and the given sides, run
/// for `steps` steps on `backend`; returns the depth and discharges.
fn run<T: Real>(
    backend: &Backend,
    boundaries: &Boundaries,
    manning: f64,
    steps: usize,
) -> Vec<f64> {
    let n = 48;
    let grid = Grid::new(n, n - 8, 0.5, 0.5, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |x, y| {
        0.3 * (0.4 * x).sin() * (0.3 * y).cos() + 0.02 * x
    })
    .unwrap();
    let water = Water::from_surface(&terrain, |x, y| if x < 8.0 || y > 15.0 { 1.2 } else { 0.1 });
    let physics = Physics {
        manning,
        ..Physics::default()
    };
    let setup = Setup::new(terrain, water, boundaries.clone(), physics);
    let mut flow = ShallowWater::<T>::new(backend, &setup).unwrap();
    for _ in 0..steps {
        flow.step(f64::INFINITY).unwrap();
    }
    flow.check().unwrap();
    let mut out = flow.depth().unwrap();
    let (q, p) = flow.discharge().unwrap();
    out.extend(q);
    out.extend(p);
    out
}

#[test]
fn whole_runs_agree_with_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    let inflow = Series::new("inflow", vec![(0.0, 0.0), (1.0, 0.5)]).unwrap();
    let sides = [
        Boundaries::all(Boundary::Wall),
        Boundaries {
            west: Boundary::Discharge(inflow),
            east: Boundary::Open,
            south: Boundary::Depth(Series::constant(0.8)),
            north: Boundary::Wall,
        },
        Boundaries::all(Boundary::Periodic),
    ];
    for b in &sides {
        // Without friction every operation is correctly rounded on both backends (no FMA
        // contraction in the PTX), so the runs agree to the last bit.
        let (c, g) = (
            run::<f64>(&Backend::Cpu, b, 0.0, 200),
            run::<f64>(&gpu, b, 0.0, 200),
        );
        assert_close(&format!("f64 run with {b:?}"), &g, &c, 1e-12);
        let (c, g) = (
            run::<f32>(&Backend::Cpu, b, 0.0, 200),
            run::<f32>(&gpu, b, 0.0, 200),
        );
        assert_close(&format!("f32 run with {b:?}"), &g, &c, 1e-5);
    }
    // Manning friction needs `h^(4/3)`: libm's `powf` on the CPU and the language's own
    // `exp(y ln x)` on the device differ in the last bits, and over 200 steps of wet/dry
    // fronts the differences grow (seen on an H200: 2e-4 of the largest value, at a
    // cell on a front).
    let walls = &sides[0];
    let (c, g) = (
        run::<f64>(&Backend::Cpu, walls, 0.03, 200),
        run::<f64>(&gpu, walls, 0.03, 200),
    );
    assert_close("f64 run with friction", &g, &c, 1e-3);
}

#[test]
fn thacker_on_the_device_matches_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    let case = cases::thacker(32).unwrap();
    let depth = |b: &Backend| {
        let mut flow = ShallowWater::<f64>::new(b, &case.setup).unwrap();
        flow.advance_to(case.end_time / 3.0).unwrap();
        flow.depth().unwrap()
    };
    assert_close(
        "Thacker depth after one period",
        &depth(&gpu),
        &depth(&Backend::Cpu),
        1e-9,
    );
}

#[test]
fn the_example_scenario_on_the_device_matches_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/channel.toml");
    let run = |b: &Backend, name: &str| {
        let out = std::env::temp_dir().join(format!("flood-gpu-{name}-{}", std::process::id()));
        let options = RunOptions {
            out: out.clone(),
            progress: false,
            storage: Storage::Dense,
            serve: None,
        };
        let summary = Run::<f64>::new(b, Scenario::read(&path).unwrap(), options)
            .unwrap()
            .run()
            .unwrap();
        let grid = |f: &str| Raster::read(&out.join(f)).map(|r| r.values);
        let deepest = grid("max_depth.asc").unwrap();
        let far = std::fs::read_to_string(out.join("gauges/far.csv")).unwrap();
        let series: Vec<f64> = far
            .lines()
            .skip(2)
            .flat_map(|l| {
                l.split(',')
                    .map(|x| x.parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        std::fs::remove_dir_all(&out).unwrap();
        (summary, deepest, series)
    };
    let (cs, cd, cg) = run(&Backend::Cpu, "cpu");
    let (gs, gd, gg) = run(&gpu, "gpu");
    // Manning friction: powf differs in the last bits between the backends (see above).
    assert_close("largest depths", &gd, &cd, 1e-3);
    assert_close("the far gauge's series", &gg, &cg, 1e-3);
    assert_close("final volume", &[gs.final_volume], &[cs.final_volume], 1e-9);
}

#[test]
fn sparse_runs_on_the_device_equal_dense_ones() {
    let Some(gpu) = gpu_or_skip() else { return };
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset");
    let mut runs = vec![
        ("pond", cases::pond(384).unwrap(), 60),
        ("radial", cases::radial(160).unwrap(), 40),
    ];
    match cases::malpasset(&data) {
        Ok(case) => runs.push(("malpasset 15 m", case, 400)),
        Err(e) => println!("SKIPPED Malpasset: {e}"),
    }
    for (name, case, steps) in runs {
        let dense = {
            let mut flow = ShallowWater::<f64>::new(&gpu, &case.setup).unwrap();
            for _ in 0..steps {
                flow.step(f64::INFINITY).unwrap();
            }
            flow.state().unwrap().concat()
        };
        let sparse_on = |b: &Backend| {
            let mut flow = SparseShallowWater::<f64>::new(b, &case.setup).unwrap();
            for _ in 0..steps {
                flow.step(f64::INFINITY).unwrap();
            }
            let all = flow.block_count();
            (flow.state().unwrap().concat(), flow.blocks().len(), all)
        };
        let (sparse, present, all) = sparse_on(&gpu);
        println!("{name}: {present} of {all} blocks present after {steps} steps");
        // The same kernels on the same device: bit for bit.
        assert!(
            dense == sparse,
            "{name}: the sparse device run differs from the dense one"
        );
        let (cpu, _, _) = sparse_on(&Backend::Cpu);
        assert_close(
            &format!("{name}: sparse device run against the CPU"),
            &sparse,
            &cpu,
            1e-10,
        );
    }
}

#[test]
fn clocked_runs_on_the_device_equal_host_stepped_ones() {
    // The time step decided on the device (kept maximum, clock kernel, read back a step
    // late) takes the same steps as the host's, to the bit, dense and sparse.
    let Some(gpu) = gpu_or_skip() else { return };
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset");
    let mut euler = cases::radial(160).unwrap();
    euler.setup.physics.integrator = Integrator::Euler;
    let mut runs = vec![
        ("radial", cases::radial(160).unwrap(), 0.25, 1.0),
        ("radial, Euler", euler, 0.25, 1.0),
    ];
    match cases::malpasset(&data) {
        Ok(case) => runs.push(("malpasset 15 m", case, 5.0, 20.0)),
        Err(e) => println!("SKIPPED Malpasset: {e}"),
    }
    for (name, case, every, end) in runs {
        let want = common::host::<ShallowWater<f64>>(&gpu, &case.setup, every, end);
        println!("{name}: {} steps", want.1);
        assert!(want.1 > 10, "{name}: {} steps", want.1);
        let dense = common::clocked::<ShallowWater<f64>>(&gpu, &case.setup, every, end, 64);
        assert!(dense == want, "{name}: clocked dense run on the device");
        let sparse = common::clocked::<SparseShallowWater<f64>>(&gpu, &case.setup, every, end, 64);
        assert!(sparse == want, "{name}: clocked sparse run on the device");
    }
}

#[test]
fn the_device_runs_mostly_dry_domains_sparse() {
    let Some(gpu) = gpu_or_skip() else { return };
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset");
    let choose = |setup: &Setup| Storage::Auto.choose(setup, &gpu).unwrap();
    assert_eq!(choose(&cases::radial(200).unwrap().setup), Storage::Dense);
    match cases::malpasset(&data) {
        Ok(case) => assert_eq!(choose(&case.setup), Storage::Sparse),
        Err(e) => println!("SKIPPED Malpasset: {e}"),
    }
}

#[test]
fn live_pictures_on_the_device_match_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    let case = cases::pond(384).unwrap();
    let on = |b: &Backend, sparse: bool| -> Vec<Vec<f32>> {
        let storage = if sparse {
            Storage::Sparse
        } else {
            Storage::Dense
        };
        let mut flow = Flow::<f64>::new(b, &case.setup, storage, 0.01).unwrap();
        for _ in 0..30 {
            flow.step(f64::INFINITY).unwrap();
        }
        let g = *flow.grid();
        // The pictures live where the simulation queues its work (its own stream).
        let b = flow.backend();
        let mut depth = stencil_runtime::Field::zeros_on(b, &[g.nx, g.ny], 1).unwrap();
        let mut speed = stencil_runtime::Field::zeros_on(b, &[g.nx, g.ny], 1).unwrap();
        flow.picture(&mut depth, &mut speed, true).unwrap();
        let mut down = live_view::Downsampler::<f64>::new(b);
        let (_, _, small) = down.frame(&depth, [100, 70]).unwrap();
        let full = |f: &stencil_runtime::Field<f64>| {
            f.interior().unwrap().iter().map(|&v| v as f32).collect()
        };
        vec![full(&depth), full(&speed), small]
    };
    for sparse in [false, true] {
        let (g, c) = (on(&gpu, sparse), on(&Backend::Cpu, sparse));
        for (k, name) in ["depth", "speed", "downsampled depth"].iter().enumerate() {
            let a: Vec<f64> = g[k].iter().map(|&v| v as f64).collect();
            let b: Vec<f64> = c[k].iter().map(|&v| v as f64).collect();
            assert_close(&format!("{name} (sparse: {sparse})"), &a, &b, 1e-6);
        }
    }
}

/// The two parts' speeds of a step over ranks combine on the device as on the CPU
/// (`clock::kernels::larger`): an empty part's minus infinity gives way, an instability's
/// NaN or infinity gives infinity; f32 and f64.
#[test]
fn combined_speeds_on_the_device_match_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    fn larger<T: Real>(b: &Backend, x: f64, y: f64) -> u64 {
        let value = |v: f64| stencil_runtime::Value::new(b, T::from_f64(v)).unwrap();
        let mut out = value(0.0);
        shallow_water::clock::kernels::larger::launch(b, &value(x), &value(y), out.field_mut())
            .unwrap();
        out.get().unwrap().as_f64().to_bits()
    }
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let pairs = [
        (1.5, 2.5),
        (3.0, 0.0),
        (-inf, 2.0),
        (1.0, -inf),
        (-inf, -inf),
    ];
    for (x, y) in pairs
        .into_iter()
        .chain([(nan, 1.0), (1.0, nan), (inf, 1.0)])
    {
        assert_eq!(
            larger::<f32>(&gpu, x, y),
            larger::<f32>(&Backend::Cpu, x, y)
        );
        assert_eq!(
            larger::<f64>(&gpu, x, y),
            larger::<f64>(&Backend::Cpu, x, y)
        );
    }
    assert_eq!(larger::<f64>(&gpu, nan, 1.0), inf.to_bits());
}
