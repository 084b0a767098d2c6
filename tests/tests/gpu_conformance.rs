//! Every kernel of the suite runs on a CUDA device through the runtime's CUDA backend
//! (`launch(&Backend::Cuda(..), ..)` on device fields) and agrees with the CPU path:
//! f64 to 1e-12, f32 to 1e-5 relative, outputs and reductions, for the default launch
//! shape, for fixed shapes that use each points-per-thread variant, and after tuning.
//! Also: fields round-trip between host and device, and each CUDA failure is a typed error.
//!
//! Without a driver or a device the tests print why they skipped. This binary does not
//! link LLVM, so it can be staged for a GPU machine:
//! `../shared/tools/stage-gpu -p stencil-tests --no-default-features --test gpu_conformance`.

use kernels_gen::ir::Access;
use stencil_runtime::cuda::{CudaLaunch, KernelCode, LaunchShape, Ptx, Tuning};
use stencil_runtime::{Backend, Cuda, Element, Error, Field, Precision, Real};
use stencil_tests::device::{cuda_or_skip, decided_shapes, TILE_SHAPES};
use stencil_tests::dispatch;
use stencil_tests::harness::{
    assert_close, kernel_ir_of_dims, poisoned, random_field, rng, tolerance, values,
};
use stencil_tests::kernels::{suite, Compiled, ALL};

fn extent(dims: u8) -> Vec<usize> {
    match dims {
        1 => vec![1003],
        2 => vec![67, 45],
        _ => vec![21, 13, 11],
    }
}

/// Extents of other size classes than [`extent`]'s (a tuning cache holds a shape per
/// class).
fn other_extent(dims: u8) -> Vec<usize> {
    match dims {
        1 => vec![2100],
        2 => vec![130, 70],
        _ => vec![40, 20, 12],
    }
}

/// Runs kernel `c` at precision `T` on the CPU and on `cuda` (fields on the device) from
/// the same random inputs over [`extent`], and compares outputs and reductions.
fn check<T: Real>(c: &Compiled, cuda: &Cuda, label: &str) {
    check_over::<T>(c, cuda, label, extent)
}

/// [`check`] over the extent `extent` gives for the kernel's dimensions.
fn check_over<T: Real>(c: &Compiled, cuda: &Cuda, label: &str, extent: fn(u8) -> Vec<usize>) {
    let k = kernel_ir_of_dims(c.source, c.name, c.dims);
    let name = format!("{} {:?} [{label}]", k.name, T::PRECISION);
    let n = extent(k.dims);
    let mut r = rng(&name);
    let inputs: Vec<Field<T>> = k
        .fields
        .iter()
        .filter(|f| f.access == Access::In)
        .map(|f| random_field(&mut r, &n, f.halo() as usize, 0.5, 2.0))
        .collect();
    let n_out = k.fields.len() - inputs.len();
    let scalars = vec![0.7; k.scalars.len()];

    let cpu_in: Vec<&Field<T>> = inputs.iter().collect();
    let mut want: Vec<Field<T>> = (0..n_out).map(|_| poisoned(&n)).collect();
    let want_red = dispatch::launch(c.name, &Backend::Cpu, &cpu_in, &mut want, &scalars)
        .unwrap_or_else(|e| panic!("{name} on the CPU: {e}"));

    let backend = Backend::Cuda(cuda.clone());
    let on_gpu = |f: &Field<T>| f.to(&backend).unwrap_or_else(|e| panic!("{name}: {e}"));
    let gpu_in: Vec<Field<T>> = inputs.iter().map(on_gpu).collect();
    let gpu_in_refs: Vec<&Field<T>> = gpu_in.iter().collect();
    // Poisoned outputs on the device: a point the kernel does not write stays NaN.
    let mut got: Vec<Field<T>> = (0..n_out).map(|_| on_gpu(&poisoned(&n))).collect();
    let got_red = dispatch::launch(c.name, &backend, &gpu_in_refs, &mut got, &scalars)
        .unwrap_or_else(|e| panic!("{name} on the GPU: {e}"));

    let tol = tolerance::<T>();
    for (o, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_close(&format!("{name} output {o}"), &values(g), &values(w), tol);
    }
    assert_close(&format!("{name} reductions"), &got_red, &want_red, tol);
}

fn check_suite(cuda: &Cuda, label: &str) {
    for c in ALL {
        check::<f32>(c, cuda, label);
        check::<f64>(c, cuda, label);
    }
}

#[test]
fn every_kernel_agrees_with_the_cpu_for_every_launch_shape() {
    let Some(cuda) = cuda_or_skip() else { return };
    let cache = std::env::temp_dir().join(format!("stencil-tune-{}.tsv", std::process::id()));
    let _ = std::fs::remove_file(&cache);
    std::env::set_var(stencil_runtime::cuda::TUNE_CACHE_ENV, &cache);

    check_suite(&cuda.clone().with_tuning(Tuning::Off), "default shape");
    for shape in TILE_SHAPES.into_iter().chain(["128x1x1p1"]) {
        let s: LaunchShape = shape.parse().expect("a shape");
        check_suite(&cuda.clone().with_tuning(Tuning::Fixed(s)), shape);
    }
    check_suite(&cuda.clone().with_tuning(Tuning::Search), "searched");
    let written = std::fs::read_to_string(&cache).expect("the tuning cache was written");
    let lines = decided_shapes(&written);
    assert!(
        lines >= ALL.len() && written.contains(cuda.device_name()),
        "tuning cache:\n{written}"
    );
    // Trials reuse the searched shapes (and still agree).
    let tuned = cuda.clone().with_tuning(Tuning::On);
    check_suite(&tuned, "tuned, cached");
    let again = std::fs::read_to_string(&cache).expect("cache");
    assert_eq!(decided_shapes(&again), lines, "no new search");

    // Over other size classes the first launches are trials of the proposed shapes, each
    // launch a real one that agrees with the CPU; once every proposal of a kernel has run
    // and a later launch sees their times, the fastest is written to the cache.
    let trial_suite = |label: &str| {
        for c in ALL {
            check_over::<f32>(c, &tuned, label, other_extent);
            check_over::<f64>(c, &tuned, label, other_extent);
        }
    };
    trial_suite("first trial launch");
    cuda.synchronize().expect("the first trial launches finish");
    let after_first = std::fs::read_to_string(&cache).expect("cache");
    assert_eq!(
        decided_shapes(&after_first),
        lines,
        "one launch decides no trial"
    );
    assert!(
        after_first.lines().count() > lines,
        "the first timed launches are in the file once they finished:\n{after_first}"
    );
    for run in 1..LaunchShape::MOST_TRIAL_LAUNCHES {
        trial_suite(&format!("trial launch {}", run + 1));
    }
    cuda.synchronize().expect("the trial launches finish");
    trial_suite("decided");
    let decided = std::fs::read_to_string(&cache).expect("cache");
    assert_eq!(
        decided_shapes(&decided),
        lines + 2 * ALL.len(),
        "every kernel's trial decided once, in each precision:\n{decided}"
    );
    let _ = std::fs::remove_file(&cache);
    println!(
        "{} kernels x 2 precisions x 14 launch policies, and over other sizes in {} trial launches, agree with the CPU on {}",
        ALL.len(),
        LaunchShape::MOST_TRIAL_LAUNCHES + 1,
        cuda.device_name()
    );
}

/// The environment variable that makes [`launches_of_one_run`] launch.
const CHILD_RUN: &str = "STENCIL_TEST_TRIAL_CHILD";

/// Launches used by [`trials_go_on_across_runs`] in a process of its own: three lap5
/// launches on a size class of their own, fewer than a trial takes, then a wait.
#[test]
fn launches_of_one_run() {
    if std::env::var_os(CHILD_RUN).is_none() {
        return;
    }
    let cuda = Cuda::new(0).expect("the parent test found a device");
    let b = Backend::Cuda(cuda.clone().with_tuning(Tuning::On));
    let n = [1500, 700];
    let u = Field::<f32>::from_fn(&n, 1, |p| (p[0] * 3 + p[1]) as f32 * 0.01)
        .to(&b)
        .expect("a device field");
    let mut out = Field::<f32>::zeros_on(&b, &n, 0).expect("a device field");
    for _ in 0..3 {
        suite::lap5::launch(&b, &u, &mut out, 1.0).expect("a launch");
    }
    cuda.synchronize().expect("the launches finish");
}

/// A kernel launched fewer times per run than a trial takes still gets its shape decided:
/// each run's timed launches go to the tuning cache file and the next run's trial goes on
/// from them, until a run decides it; later runs add nothing.
#[test]
fn trials_go_on_across_runs() {
    let Some(cuda) = cuda_or_skip() else { return };
    let cache = std::env::temp_dir().join(format!("stencil-runs-{}.tsv", std::process::id()));
    let _ = std::fs::remove_file(&cache);
    let run = || {
        let out = std::process::Command::new(std::env::current_exe().expect("this test"))
            .args(["--exact", "launches_of_one_run", "--include-ignored"])
            .env(CHILD_RUN, "1")
            .env(stencil_runtime::cuda::TUNE_CACHE_ENV, &cache)
            .env("STENCIL_TUNE", "on")
            .output()
            .expect("the test runs itself");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        std::fs::read_to_string(&cache).unwrap_or_default()
    };
    let first = run();
    assert_eq!(
        decided_shapes(&first),
        0,
        "three launches decide no trial:\n{first}"
    );
    assert_eq!(first.lines().count(), 3, "each timed launch kept:\n{first}");
    // Three launches a run, and a trial of at most 8 launches decided by the launch after.
    let most_runs = LaunchShape::MOST_TRIAL_LAUNCHES.div_ceil(3) + 1;
    let mut text = first;
    let mut runs = 1;
    while decided_shapes(&text) == 0 {
        assert!(runs < most_runs, "no decision after {runs} runs:\n{text}");
        text = run();
        runs += 1;
    }
    assert_eq!(decided_shapes(&text), 1, "{text}");
    let settled = run();
    assert_eq!(settled, text, "a decided kernel adds nothing");
    let _ = std::fs::remove_file(&cache);
    println!(
        "a trial of three launches a run decided in {runs} runs on {}",
        cuda.device_name()
    );
}

#[test]
fn fields_round_trip_between_host_and_device() {
    let Some(cuda) = cuda_or_skip() else { return };
    let gpu = Backend::Cuda(cuda);
    for (extent, halo) in [
        (vec![37], 0),
        (vec![37], 3),
        (vec![33, 7], 1),
        (vec![5, 4, 3], 2),
    ] {
        let host = Field::<f64>::from_fn(&extent, halo, |[i, j, k]| {
            (i * 10_000 + j * 100 + k) as f64 + 0.5
        });
        let dev = host.to(&gpu).expect("upload");
        assert!(!dev.is_host());
        let (_, ptr, _) = dev.device_args().expect("a device field");
        assert_eq!(ptr % 128, 0, "interior rows start on 128-byte lines");
        let back = dev.to_host().expect("download");
        assert_eq!(back, host, "extent {extent:?} halo {halo}");
        let mut dev = dev;
        let p = [-(halo as isize), 0, 0];
        assert_eq!(dev.get(p), host.get(p));
        assert!(dev.set(p, -1.0));
        assert_eq!(dev.get(p), Some(-1.0));
        assert!(!dev.set([extent[0] as isize + halo as isize, 0, 0], 0.0));
        let mut copy = Field::<f64>::zeros_on(&gpu, &extent, halo).expect("alloc");
        copy.copy_from(&dev).expect("device to device");
        assert_eq!(copy.get(p), Some(-1.0));
        assert!(matches!(dev.as_slice(), Err(Error::NotOnHost { .. })));
    }
}

#[test]
fn cuda_failures_are_typed_errors() {
    let Some(cuda) = cuda_or_skip() else { return };
    let gpu = Backend::Cuda(cuda.clone());
    // A host field passed to a GPU launch.
    let u = Field::<f64>::zeros(&[16, 16], 1).expect("field");
    let mut out = Field::<f64>::zeros_on(&gpu, &[16, 16], 0).expect("field");
    let e = stencil_tests::kernels::suite::lap5::launch(&gpu, &u, &mut out, 1.0).unwrap_err();
    assert!(
        matches!(&e, Error::Residency { kernel, field, .. } if kernel == "lap5" && field == "u"),
        "{e}"
    );
    // Mismatched sizes are caught before any device work.
    let u = Field::<f64>::zeros_on(&gpu, &[16, 15], 1).expect("field");
    let e = stencil_tests::kernels::suite::lap5::launch(&gpu, &u, &mut out, 1.0).unwrap_err();
    assert!(matches!(e, Error::Extent { .. }), "{e}");
    // PTX the driver rejects.
    static BROKEN: KernelCode = KernelCode {
        name: "broken",
        dims: 1,
        f32: Ptx {
            text: ".version 7.0\n.target sm_80\n.address_size 64\nthis is not PTX\n",
            entry: "broken_f32",
            hash: 1,
            vector: 1,
            sass: &[],
        },
        f64: Ptx {
            text: ".version 7.0\n.target sm_80\n.address_size 64\nthis is not PTX either\n",
            entry: "broken_f64",
            hash: 2,
            vector: 1,
            sass: &[],
        },
        tiles: stencil_runtime::cuda::Tiles::ONE,
        line: None,
        in_place: false,
        vertex: false,
        texture: None,
        staging: None,
    };
    let e = CudaLaunch::new(&cuda, &BROKEN, Precision::F64)
        .run([8, 1, 1])
        .unwrap_err();
    assert!(
        matches!(&e, Error::PtxLoad { kernel, .. } if kernel == "broken"),
        "{e}"
    );
    println!("PTX error: {e}");
    // Out of memory: 8 TiB.
    let e = Field::<f64>::zeros_on(&gpu, &[1 << 20, 1 << 20], 0).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    println!("OOM error: {e}");
    // A device that does not exist.
    let e = Backend::cuda(4096).unwrap_err();
    assert!(matches!(e, Error::NoDevice { ordinal: 4096, .. }), "{e}");
}

#[test]
fn streams_and_timers_work() {
    let Some(cuda) = cuda_or_skip() else { return };
    let second = cuda.new_stream().expect("a second stream");
    assert_ne!(second, cuda);
    let b = Backend::Cuda(second.clone().with_tuning(Tuning::Off));
    let n = [512, 512];
    let u = Field::<f32>::from_fn(&n, 1, |[i, j, _]| (i + j) as f32)
        .to(&b)
        .expect("upload");
    let mut out = Field::<f32>::zeros_on(&b, &n, 0).expect("alloc");
    let mut timer = second.timer().expect("timer");
    timer.start().expect("start");
    for _ in 0..10 {
        stencil_tests::kernels::suite::lap5::launch(&b, &u, &mut out, 1.0).expect("launch");
    }
    let t = timer.stop().expect("stop");
    assert!(t > 0.0 && t < 10.0, "10 launches took {t} s");
    // lap5 of i + j is 0 in the interior away from the boundary-free halo formula.
    assert_eq!(out.get([5, 5, 0]), Some(0.0));
    b.synchronize().expect("sync");
}

#[test]
fn deferred_reductions_are_read_later_in_launch_order() {
    let Some(cuda) = cuda_or_skip() else { return };
    let now = Backend::Cuda(cuda.new_stream().expect("stream"));
    let Backend::Cuda(c) = &now else {
        unreachable!()
    };
    let later = Backend::Cuda(c.clone().with_deferred_reductions(true));
    let n = [300, 200];
    let fields: Vec<Field<f64>> = (0..3)
        .map(|k| {
            Field::from_fn(&n, 1, |[i, j, _]| ((i * 7 + j * 3 + k) % 11) as f64 - 2.5)
                .to(&now)
                .expect("upload")
        })
        .collect();
    use stencil_tests::kernels::suite::mass;
    let expected: Vec<Vec<f64>> = fields
        .iter()
        .map(|h| {
            let (total, lowest) = mass::launch(&now, h, 0.5).expect("launch");
            vec![total, lowest]
        })
        .collect();
    // Queued without waiting: NaN placeholders, the values read afterwards in order.
    for h in &fields {
        let (total, lowest) = mass::launch(&later, h, 0.5).expect("deferred launch");
        assert!(total.is_nan() && lowest.is_nan());
    }
    let Backend::Cuda(lc) = &later else {
        unreachable!()
    };
    for want in &expected {
        let got = lc.read_deferred().expect("read").expect("values wait");
        assert_eq!(
            &got, want,
            "deferred values differ from values read at once"
        );
    }
    assert!(lc.read_deferred().expect("read").is_none(), "nothing left");
    // Forgotten values do not linger.
    mass::launch(&later, &fields[0], 0.5).expect("deferred launch");
    lc.discard_deferred();
    assert!(lc.read_deferred().expect("read").is_none());
}

/// The cell-centred transfers (`Fine` of `2n`, `Coarse` of `n / 2` points) and the
/// vertex-centred prolongation, which the
/// suite-wide check cannot size: device and CPU agree.
#[test]
fn cell_centred_transfers_agree_with_the_cpu() {
    let Some(cuda) = cuda_or_skip() else { return };
    fn both<T: Real>(cuda: &Cuda) {
        let backend = Backend::Cuda(cuda.clone());
        let mut r = rng("cell transfers on the device");
        let fine: Field<T> = random_field(&mut r, &[36, 28], 1, -1.0, 1.0);
        let coarse: Field<T> = random_field(&mut r, &[18, 14], 1, -1.0, 1.0);
        let (mut restricted, mut prolonged) = (poisoned::<T>(&[18, 14]), poisoned::<T>(&[36, 28]));
        suite::restrict_cells::launch(&Backend::Cpu, &fine, &mut restricted).expect("cpu");
        suite::prolong_cells::launch(&Backend::Cpu, &coarse, &mut prolonged).expect("cpu");
        let on = |f: &Field<T>| f.to(&backend).expect("to the device");
        let (mut gr, mut gp) = (on(&poisoned(&[18, 14])), on(&poisoned(&[36, 28])));
        suite::restrict_cells::launch(&backend, &on(&fine), &mut gr).expect("restrict");
        suite::prolong_cells::launch(&backend, &on(&coarse), &mut gp).expect("prolong");
        let tol = tolerance::<T>();
        assert_close("restrict_cells", &values(&gr), &values(&restricted), tol);
        assert_close("prolong_cells", &values(&gp), &values(&prolonged), tol);
        // The vertex-centred one, whose rows the CPU runs in pairs.
        let nodes: Field<T> = random_field(&mut r, &[19, 15], 1, -1.0, 1.0);
        let mut by_cpu = poisoned::<T>(&[37, 29]);
        suite::prolong_nodes::launch(&Backend::Cpu, &nodes, &mut by_cpu).expect("cpu");
        let mut by_device = on(&poisoned(&[37, 29]));
        suite::prolong_nodes::launch(&backend, &on(&nodes), &mut by_device).expect("prolong");
        assert_close("prolong_nodes", &values(&by_device), &values(&by_cpu), tol);
    }
    both::<f32>(&cuda);
    both::<f64>(&cuda);
}

/// Asserts that the interior of `device` (copied back) equals that of `host`.
fn assert_same_interior<E: Element + PartialEq + std::fmt::Debug>(
    host: &Field<E>,
    device: &Field<E>,
    what: &str,
) {
    assert_eq!(
        host.interior().expect("host"),
        device.interior().expect("copy back"),
        "{what}"
    );
}

/// Fields of bytes, booleans and `i32` (Conway's Game of Life, its flags, bit
/// operations): device and CPU agree exactly.
#[test]
fn integer_and_boolean_fields_agree_with_the_cpu() {
    use stencil_tests::kernels::life;
    let Some(cuda) = cuda_or_skip() else { return };
    let backend = Backend::Cuda(cuda);
    let n = [301usize, 207];
    let start = |[i, j, _]: [isize; 3]| -> u8 {
        let inside = i >= 0 && j >= 0 && i < 301 && j < 207;
        u8::from(inside && (i * 7 + j * 3 + i * j) % 5 < 2)
    };
    let mut cpu = Field::<u8>::from_fn(&n, 1, start);
    let mut dev = cpu.to(&backend).expect("to the device");
    for generation in 0..6 {
        let mut next = Field::<u8>::zeros(&n, 1).expect("field");
        life::generation::launch(&Backend::Cpu, &cpu, &mut next).expect("cpu");
        let mut next_dev = Field::<u8>::zeros_on(&backend, &n, 1).expect("device field");
        life::generation::launch(&backend, &dev, &mut next_dev).expect("device");
        assert_same_interior(&next, &next_dev, &format!("generation {generation}"));
        (cpu, dev) = (next, next_dev);
    }
    assert_eq!(
        life::census::launch(&Backend::Cpu, &cpu).expect("cpu"),
        life::census::launch(&backend, &dev).expect("device"),
        "census"
    );
    let mut alive = Field::<bool>::zeros(&n, 0).expect("field");
    let mut count = Field::<i32>::from_fn(&n, 0, |[i, _, _]| i as i32 - 150);
    let (mut alive_dev, mut count_dev) = (
        alive.to(&backend).expect("device"),
        count.to(&backend).expect("device"),
    );
    life::flags::launch(&Backend::Cpu, &cpu, &mut alive, &mut count).expect("cpu");
    life::flags::launch(&backend, &dev, &mut alive_dev, &mut count_dev).expect("device");
    assert_same_interior(&alive, &alive_dev, "alive");
    assert_same_interior(&count, &count_dev, "count");
    // Bit operations.
    use stencil_tests::kernels::bits;
    let a = Field::<i32>::from_fn(&n, 0, |[i, j, _]| (i * 7919 - j * 104_729) as i32 * 977);
    let b = Field::<u8>::from_fn(&n, 0, |[i, j, _]| ((i * 13 + j * 31) % 256) as u8);
    let (mut mixed, mut odd) = (
        Field::<i32>::zeros(&n, 0).expect("field"),
        Field::<bool>::zeros(&n, 0).expect("field"),
    );
    let (mut mixed_dev, mut odd_dev) = (
        mixed.to(&backend).expect("device"),
        odd.to(&backend).expect("device"),
    );
    bits::mix::launch(&Backend::Cpu, &a, &b, &mut mixed, &mut odd).expect("cpu");
    let (a_dev, b_dev) = (
        a.to(&backend).expect("device"),
        b.to(&backend).expect("device"),
    );
    bits::mix::launch(&backend, &a_dev, &b_dev, &mut mixed_dev, &mut odd_dev).expect("device");
    assert_same_interior(&mixed, &mixed_dev, "mixed");
    assert_same_interior(&odd, &odd_dev, "odd");
    // Narrow casts.
    let r = Field::<f64>::from_fn(&n, 0, |[i, j, _]| match (i + j) % 5 {
        0 => f64::NAN,
        1 => 3e9 * (i - j) as f64,
        _ => (i * 37 - j * 101) as f64 * 1.37e7,
    });
    let mut host: Vec<Field<f64>> = (0..4)
        .map(|_| Field::zeros(&n, 0).expect("field"))
        .collect();
    let mut dev: Vec<Field<f64>> = host
        .iter()
        .map(|f| f.to(&backend).expect("device"))
        .collect();
    let [w, b, s, sb] = &mut host[..] else {
        unreachable!()
    };
    bits::narrow::launch(&Backend::Cpu, &a, &r, w, b, s, sb).expect("cpu");
    let r_dev = r.to(&backend).expect("device");
    let [w, b, s, sb] = &mut dev[..] else {
        unreachable!()
    };
    bits::narrow::launch(&backend, &a_dev, &r_dev, w, b, s, sb).expect("device");
    for (h, d) in host.iter().zip(&dev) {
        assert_same_interior(h, d, "narrow casts");
    }
}
