//! A Runge-Kutta stage in one pass (`kp07::stage_in_one`: the face fluxes staged, the
//! update from them; the time step from `kp07::face_speeds`) and as rates and their
//! update (`kp07::rates`: each cell's sides staged once, the face fluxes staged from
//! them, each cell's rates written; `kp07::apply_rates`) take the steps of two passes (`faces`, then `advance` from the
//! fluxes in memory) bit for bit: on the CPU (which computes the staged fluxes into row
//! buffers) and on a device (which keeps them in shared memory).
//!
//! Their PTX assembles with ptxas for sm_90 without spilling registers: every entry of
//! `kp07::stage_in_one` and `kp07::rates` (1, 2 and 4 points per thread), of
//! `kp07::apply_rates` and of the CFL pass `kp07::face_speeds`, each entry's registers
//! printed (skipped, saying why, without ptxas; CI requires it:
//! `STENCIL_REQUIRE_PTXAS=1`). The two-pass `faces` is not checked: its f64 entry of 2 x 4
//! points spills.

mod common;

use shallow_water::kernels::kp07;
use shallow_water::*;
use stencil_runtime::{Backend, Real};
use stencil_tests::device::gpu_or_skip;

/// The state's bits after `steps` host-decided steps of `setup` on `backend`, each stage
/// run as `passes` says.
fn state_bits<T: Real>(backend: &Backend, setup: &Setup, steps: usize, passes: Passes) -> Vec<u64> {
    let mut flow = ShallowWater::<T>::new(backend, setup).unwrap();
    flow.set_passes(passes).unwrap();
    assert_eq!(flow.passes(), passes);
    assert_eq!(flow.one_pass(), passes == Passes::One);
    for _ in 0..steps {
        flow.step(f64::INFINITY).unwrap();
    }
    flow.check().unwrap();
    bits(&flow)
}

/// The bits of `flow`'s state: surface, then the discharges.
fn bits<T: Real>(flow: &ShallowWater<T>) -> Vec<u64> {
    let state = flow.state().unwrap();
    state.concat().iter().map(|v| v.to_bits()).collect()
}

/// The state's bits after `setup` on `backend` advanced to `end` by the clock (the steps
/// decided on the backend; on a device each step a replayed graph), each stage run as
/// `passes` says.
fn clocked_bits<T: Real>(backend: &Backend, setup: &Setup, end: f64, passes: Passes) -> Vec<u64> {
    let mut flow = ShallowWater::<T>::new(backend, setup).unwrap();
    flow.set_passes(passes).unwrap();
    flow.advance_to(end).unwrap();
    bits(&flow)
}

/// The radial dam break with Manning friction and walls: sides whose values do not change,
/// so that `advance_to` runs on the clock.
fn clocked_case() -> Setup {
    let mut setup = cases::radial(40).unwrap().setup;
    setup.physics.manning = 0.03;
    setup
}

/// A partly dry dam break over a bumpy bed, with every side kind but periodic.
fn mixed_sides(manning: f64) -> Setup {
    let grid = Grid::new(45, 37, 0.5, 0.5, 0.0, 0.0).unwrap();
    let terrain = Terrain::from_fn(grid, |x, y| {
        0.3 * (0.4 * x).sin() * (0.3 * y).cos() + 0.02 * x
    })
    .unwrap();
    let water = Water::from_surface(&terrain, |x, y| if x < 8.0 || y > 15.0 { 1.2 } else { 0.1 });
    let inflow = Series::new("inflow", vec![(0.0, 0.0), (1.0, 0.5)]).unwrap();
    let sides = Boundaries {
        west: Boundary::Discharge(inflow),
        east: Boundary::Open,
        south: Boundary::Depth(Series::constant(0.8)),
        north: Boundary::Wall,
    };
    let physics = Physics {
        manning,
        ..Physics::default()
    };
    Setup::new(terrain, water, sides, physics)
}

/// The cases: mixed sides with and without friction, a radial dam break, and
/// Malpasset's wet/dry fronts where its terrain is at hand.
fn cases() -> Vec<(&'static str, Setup, usize)> {
    let mut all = vec![
        ("mixed sides", mixed_sides(0.0), 120),
        ("mixed sides with friction", mixed_sides(0.03), 120),
        ("radial dam break", cases::radial(40).unwrap().setup, 60),
    ];
    match common::malpasset() {
        Some(case) => all.push(("malpasset", case.setup, 40)),
        None => println!("SKIPPED Malpasset: its terrain is not at hand"),
    }
    all
}

#[test]
fn one_pass_and_rates_take_the_steps_of_two_on_the_cpu() {
    for (name, setup, steps) in cases() {
        let b = &Backend::Cpu;
        let two = state_bits::<f64>(b, &setup, steps, Passes::Two);
        for passes in [Passes::One, Passes::Rates] {
            let other = state_bits::<f64>(b, &setup, steps, passes);
            assert!(other == two, "{name}: f64, {passes:?}");
        }
        let two = state_bits::<f32>(b, &setup, steps, Passes::Two);
        for passes in [Passes::One, Passes::Rates] {
            let other = state_bits::<f32>(b, &setup, steps, passes);
            assert!(other == two, "{name}: f32, {passes:?}");
        }
    }
}

#[test]
fn on_the_clock_one_pass_and_rates_take_the_steps_of_two_on_the_cpu() {
    let (b, setup) = (&Backend::Cpu, clocked_case());
    let two = clocked_bits::<f64>(b, &setup, 3.0, Passes::Two);
    assert!(
        two != clocked_bits::<f64>(b, &setup, 0.0, Passes::Two),
        "no step taken"
    );
    for passes in [Passes::One, Passes::Rates] {
        assert!(
            clocked_bits::<f64>(b, &setup, 3.0, passes) == two,
            "{passes:?}"
        );
    }
}

#[test]
fn a_periodic_side_refuses_one_pass_and_rates() {
    let case = cases::radial(16).unwrap();
    let setup = Setup {
        boundaries: Boundaries::all(Boundary::Periodic),
        ..case.setup
    };
    let mut flow = ShallowWater::<f64>::new(&Backend::Cpu, &setup).unwrap();
    assert!(!flow.one_pass());
    let e = flow.set_one_pass(true).unwrap_err();
    assert!(e.to_string().contains("periodic"), "{e}");
    let e = flow.set_passes(Passes::Rates).unwrap_err();
    assert!(e.to_string().contains("periodic"), "{e}");
    flow.set_one_pass(false).unwrap();
}

#[test]
fn on_a_device_one_pass_and_rates_take_the_steps_of_two() {
    let Some(gpu) = gpu_or_skip() else { return };
    assert!(ShallowWater::<f64>::new(&gpu, &mixed_sides(0.0))
        .unwrap()
        .one_pass());
    for (name, setup, steps) in cases() {
        let two = state_bits::<f64>(&gpu, &setup, steps, Passes::Two);
        for passes in [Passes::One, Passes::Rates] {
            let other = state_bits::<f64>(&gpu, &setup, steps, passes);
            assert!(other == two, "{name}: f64, {passes:?}");
        }
        // Without friction the device computes the CPU's bits (no FMA contraction, every
        // operation correctly rounded); friction's `powf` differs in the last bits.
        if setup.physics.manning == 0.0 {
            assert!(
                two == state_bits::<f64>(&Backend::Cpu, &setup, steps, Passes::Two),
                "{name}: device against the CPU"
            );
        }
        let two = state_bits::<f32>(&gpu, &setup, steps, Passes::Two);
        for passes in [Passes::One, Passes::Rates] {
            let other = state_bits::<f32>(&gpu, &setup, steps, passes);
            assert!(other == two, "{name}: f32, {passes:?}");
        }
    }
    // Steps decided on the device and replayed as graphs.
    let setup = clocked_case();
    let two = clocked_bits::<f32>(&gpu, &setup, 3.0, Passes::Two);
    for passes in [Passes::One, Passes::Rates] {
        assert!(
            clocked_bits::<f32>(&gpu, &setup, 3.0, passes) == two,
            "clocked {passes:?}"
        );
    }
}

#[test]
fn the_stage_kernels_assemble_without_spills() {
    let Some(ptxas) = stencil_tests::ptxas::Assembler::required("shallow-water-ptx") else {
        return;
    };
    let kernels = [
        (
            "stage_in_one",
            [kp07::stage_in_one::PTX_F32, kp07::stage_in_one::PTX_F64],
        ),
        (
            "face_speeds",
            [kp07::face_speeds::PTX_F32, kp07::face_speeds::PTX_F64],
        ),
        ("rates", [kp07::rates::PTX_F32, kp07::rates::PTX_F64]),
        (
            "apply_rates",
            [kp07::apply_rates::PTX_F32, kp07::apply_rates::PTX_F64],
        ),
    ];
    let mut entries = 0;
    for (name, texts) in kernels {
        for (precision, ptx) in ["f32", "f64"].into_iter().zip(texts) {
            let log = ptxas.assemble(&format!("{name}_{precision}"), ptx, "sm_90");
            let spills = log.matches("0 bytes spill stores").count();
            let used: Vec<&str> = log.lines().filter(|l| l.contains("registers")).collect();
            assert!(!used.is_empty(), "{name} {precision}: no report:\n{log}");
            assert_eq!(spills, used.len(), "{name} {precision} spills:\n{log}");
            for line in used {
                println!(
                    "{name} {precision}: {}",
                    line.trim_start_matches("ptxas info    : ")
                );
            }
            entries += spills;
        }
    }
    // Per precision: three entries of each staged kernel, four of the CFL pass, and
    // those of the pointwise update.
    let update = ["f32", "f64"].map(|p| {
        let ptx = if p == "f32" {
            kp07::apply_rates::PTX_F32
        } else {
            kp07::apply_rates::PTX_F64
        };
        ptx.matches(".entry").count()
    });
    assert_eq!(entries, 2 * (3 + 4 + 3) + update[0] + update[1], "entries");
}
