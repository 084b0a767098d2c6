//! The cavity on a CUDA device agrees with the CPU: every kernel on random inputs, and
//! whole runs (f64 and mixed-precision Poisson, launched one by one and replayed from a
//! recorded step graph) in their centre-line profiles to 1e-9. Skips, saying why, without
//! a GPU. Stage for a GPU machine with `../shared/tools/stage-gpu -p cavity --test gpu`.

use cavity::kernels::flow;
use cavity::{Cavity, Config, Profiles, Until};
use multigrid::Precision;
use stencil_runtime::{Backend, Field};
use stencil_tests::device::gpu_or_skip;
use stencil_tests::harness::{assert_close, random_field, rng, values};

#[test]
fn every_cavity_kernel_agrees_with_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    let n = [37, 29];
    // The grid's rows (the flow kernels' `nj`; the fields hold all of them).
    const NJ: i64 = 29;
    let mut r = rng("cavity kernels");
    let inputs: Vec<Field<f64>> = (0..4)
        .map(|_| random_field::<f64>(&mut r, &n, 1, -1.0, 1.0))
        .collect();
    let on = |b: &Backend| -> Vec<Field<f64>> { inputs.iter().map(|f| f.to(b).unwrap()).collect() };
    let (mut c, mut g) = (on(&Backend::Cpu), on(&gpu));
    let outs = |b: &Backend| -> Vec<Field<f64>> {
        (0..2)
            .map(|_| Field::<f64>::zeros_on(b, &n, 1).unwrap())
            .collect()
    };
    let (mut co, mut go) = (outs(&Backend::Cpu), outs(&gpu));
    for (b, f, o) in [(&Backend::Cpu, &mut c, &mut co), (&gpu, &mut g, &mut go)] {
        let (psi, rest) = f.split_first_mut().unwrap();
        flow::wall_vorticity::launch(b, psi, &mut rest[0], 900.0, 60.0, 0, NJ).unwrap();
        let [a, b2] = &mut o[..] else { unreachable!() };
        flow::rk4_stage::launch(
            b, &rest[0], psi, &rest[1], &rest[2], a, b2, 0.01, 30.0, 0.1, 0.2, false, true, 0, NJ,
        )
        .unwrap();
    }
    for k in 0..4 {
        assert_close(
            "fields after the kernels",
            &values(&g[k]),
            &values(&c[k]),
            1e-12,
        );
    }
    for k in 0..2 {
        assert_close("rk4_stage outputs", &values(&go[k]), &values(&co[k]), 1e-12);
    }
    for (b, f, o) in [(&Backend::Cpu, &c, &mut co), (&gpu, &g, &mut go)] {
        let [u, v] = &mut o[..] else { unreachable!() };
        flow::velocity::launch(b, &f[0], u, v, 30.0, 1.0, 0, NJ).unwrap();
    }
    for k in 0..2 {
        assert_close("velocity", &values(&go[k]), &values(&co[k]), 1e-12);
    }
    let s_cpu = flow::speed::launch(&Backend::Cpu, &c[0], 30.0, 0, NJ).unwrap();
    let s_gpu = flow::speed::launch(&gpu, &g[0], 30.0, 0, NJ).unwrap();
    assert_close("speed", &[s_gpu], &[s_cpu], 1e-12);
    let (a, b, m) = flow::change::launch(&Backend::Cpu, &c[1], &c[2], 0, NJ).unwrap();
    let (a2, b2, m2) = flow::change::launch(&gpu, &g[1], &g[2], 0, NJ).unwrap();
    assert_close("change", &[a2, b2, m2], &[a, b, m], 1e-12);
}

fn profiles(backend: &Backend, config: &Config) -> Profiles {
    let mut flow = Cavity::new(backend, config).expect("cavity");
    flow.run(|_, _| true).expect("run");
    Profiles::of(&mut flow).expect("profiles")
}

#[test]
fn whole_runs_agree_with_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    for precision in [Precision::F64, Precision::Mixed] {
        let config = Config {
            re: 1000.0,
            n: 65,
            precision,
            until: Until::Time(2.0),
            check_every: 20,
            ..Config::default()
        };
        let cpu = profiles(&Backend::Cpu, &config);
        for graph in [true, false] {
            let on_gpu = profiles(
                &gpu,
                &Config {
                    graph,
                    ..config.clone()
                },
            );
            let diff =
                |a: &[f64], b: &[f64]| a.iter().zip(b).fold(0f64, |m, (x, y)| m.max((x - y).abs()));
            let (du, dv) = (diff(&on_gpu.u, &cpu.u), diff(&on_gpu.v, &cpu.v));
            println!("{precision:?}, graph {graph}: centre lines differ by {du:e} (u), {dv:e} (v)");
            assert!(
                du < 1e-9 && dv < 1e-9,
                "{precision:?} graph {graph}: {du:e} {dv:e}"
            );
        }
    }
}

/// The cavity on a wavelet-adaptive tree (blocks of 32, as the program takes them on a
/// device) on the device and on the CPU: the same blocks after three adaptations (the
/// finest level partly present), and
/// the same stream function and vorticity on the finest uniform grid to 1e-9 (and the
/// device's steps replayed from recorded graphs equal those launched one by one). This runs
/// the halos predicted from coarser levels, the extrapolation past the walls, the level
/// transfers, the transform's detail flags and the tree's multigrid on the device.
#[test]
fn the_adaptive_cavity_on_the_device_agrees_with_the_cpu() {
    use cavity::adaptive::{AdaptiveCavity, AdaptiveConfig};
    let Some(gpu) = gpu_or_skip() else { return };
    let config = AdaptiveConfig {
        re: 400.0,
        n0: 5,
        block: 32,
        levels: 6,
        full: 3,
        eps: 1e-2,
        ..AdaptiveConfig::default()
    };
    let finest = config.levels - 1;
    let run = |b: &Backend, graph: bool| {
        let mut flow = AdaptiveCavity::new(b, &config).unwrap();
        flow.graph = graph;
        for _ in 0..35 {
            flow.step().unwrap();
        }
        // The finest level is partly present: its halos border absent blocks.
        let g = flow.tree().grid();
        let blocks = g.geometry().at_level(finest).blocks;
        let present = g.keys().iter().filter(|k| k.level == finest).count();
        assert!(present > 0 && present < blocks[0] * blocks[1], "{present}");
        let mut keys = flow.tree().grid().keys();
        keys.sort_by_key(|k| (k.level, k.index));
        let (psi, w) = flow.uniform(finest).unwrap();
        (keys, values(&psi), values(&w))
    };
    let (cpu_keys, cpu_psi, cpu_w) = run(&Backend::Cpu, false);
    let (gpu_keys, gpu_psi, gpu_w) = run(&gpu, true);
    // Steps replayed from recorded graphs are the steps launched one by one, bit for bit.
    let (eager_keys, eager_psi, eager_w) = run(&gpu, false);
    assert_eq!(eager_keys, gpu_keys);
    assert!(eager_psi
        .iter()
        .zip(&gpu_psi)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(eager_w
        .iter()
        .zip(&gpu_w)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    println!(
        "{} blocks present after 35 steps on the CPU, {} on the device",
        cpu_keys.len(),
        gpu_keys.len()
    );
    assert_eq!(gpu_keys, cpu_keys, "the blocks present");
    assert_close("psi", &gpu_psi, &cpu_psi, 1e-9);
    assert_close("w", &gpu_w, &cpu_w, 1e-9);
}
