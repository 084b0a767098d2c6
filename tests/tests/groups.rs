//! Parameter groups (`#[stencil_group]`): a kernel that takes its values as groups computes
//! what the same kernel with every value passed alone computes, bit for bit, on the CPU
//! and on a device, with the same operations; the launcher takes the group's struct.

use stencil_runtime::{Axes, Backend, Error, Field, Real};
use stencil_tests::device::cuda_or_skip;
use stencil_tests::harness::{
    assert_same_bits, bits, kernel_ir, kernel_ir_of_dims, poisoned_on, random_fields_on, rng,
};
use stencil_tests::kernels::groups::grouped::{self, Steps};
use stencil_tests::kernels::groups::per_axis::{self, Diffusion};
use stencil_tests::kernels::groups::waves::Wave;
use stencil_tests::{
    assert_written_out_alike_on_the_cpu, assert_written_out_alike_on_the_device, for_precisions,
};

/// `step` and `step_written_out` on `backend` over a `n` grid for each side and step
/// setting: the outputs' bits, (grouped, written out) for each.
fn both_on<T: Real>(backend: &Backend, n: &[usize]) -> Vec<(Vec<u64>, Vec<u64>)> {
    let [u] = random_fields_on::<T, 1>(&mut rng(&format!("groups {n:?}")), backend, n);
    let [mut a, mut b] = poisoned_on::<T, 2>(backend, n);
    let mut out = Vec::new();
    for (west, east, full) in [(0, 1, true), (1, 0, true), (1, 1, false)] {
        let w = Wave {
            c: T::from_f64(0.7),
            damping: T::from_f64(0.05),
            west,
            east,
            wall: T::from_f64(0.25),
        };
        let s = Steps { dt: 0.1, full };
        grouped::step::launch(backend, &u, &mut a, &w, &s).unwrap();
        grouped::step_written_out::launch(
            backend, &u, &mut b, w.c, w.damping, w.west, w.east, w.wall, s.dt, s.full,
        )
        .unwrap();
        out.push((bits(&a), bits(&b)));
    }
    out
}

/// `diffuse` and `diffuse_written_out` (a group with `Axes` members) on `backend` over a
/// grid of extents `n` (2D or 3D): the outputs' bits, (grouped, written out).
fn per_axis_on<T: Real>(backend: &Backend, n: &[usize]) -> (Vec<u64>, Vec<u64>) {
    let [u] = random_fields_on::<T, 1>(&mut rng(&format!("per axis {n:?}")), backend, n);
    let [mut a, mut b] = poisoned_on::<T, 2>(backend, n);
    let k: Vec<T> = [0.5, 2.0, 1.25][..n.len()]
        .iter()
        .map(|&x| T::from_f64(x))
        .collect();
    let from = [1i64, 0, 2][..n.len()].to_vec();
    let d = Diffusion {
        k: Axes::new(&k),
        dt: T::from_f64(0.1),
        from: Axes::new(&from),
    };
    per_axis::diffuse::launch(backend, &u, &mut a, &d).unwrap();
    per_axis::diffuse_written_out::launch(backend, &u, &mut b, &k, d.dt, &from).unwrap();
    (bits(&a), bits(&b))
}

#[test]
fn a_group_with_values_per_axis_computes_the_written_out_kernel_in_2d_and_3d() {
    for_precisions!(T => {
        for n in [vec![1usize, 1], vec![17, 9], vec![9, 7, 5]] {
            let what = format!("{n:?} {:?}", T::PRECISION);
            assert_same_bits(&what, &[per_axis_on::<T>(&Backend::Cpu, &n)]);
        }
    });
}

#[test]
fn a_member_per_axis_with_the_wrong_number_of_values_is_a_typed_error() {
    let n = [5usize, 4, 3];
    let u = Field::<f64>::zeros(&n, 1).unwrap();
    let mut out = Field::<f64>::zeros(&n, 1).unwrap();
    let d = Diffusion {
        k: Axes::new(&[1.0, 1.0]),
        dt: 0.1,
        from: Axes::new(&[0, 0, 0]),
    };
    match per_axis::diffuse::launch(&Backend::Cpu, &u, &mut out, &d) {
        Err(Error::Axes {
            param, given, dims, ..
        }) => {
            assert_eq!((param, given, dims), ("d.k", 2, 3));
        }
        other => panic!("expected an Axes error naming d.k, got {other:?}"),
    }
}

#[test]
fn a_kernel_with_groups_computes_the_written_out_kernel_on_the_cpu() {
    assert_written_out_alike_on_the_cpu!(both_on);
}

#[test]
fn on_a_device_a_kernel_with_groups_computes_the_cpu_result() {
    let Some(cuda) = cuda_or_skip() else { return };
    let gpu = Backend::Cuda(cuda.clone());
    // Both kernels, every setting: the device's bits are the CPU's.
    assert_written_out_alike_on_the_device!(&gpu, both_on);
    for_precisions!(T => {
        for n in [vec![300usize, 129], vec![40, 33, 17]] {
            let on_device = per_axis_on::<T>(&gpu, &n);
            assert!(on_device.0 == on_device.1, "{n:?} {:?}", T::PRECISION);
            assert!(on_device == per_axis_on::<T>(&Backend::Cpu, &n), "{n:?} {:?}", T::PRECISION);
        }
    });
    println!(
        "kernels with groups equal the CPU on {}",
        cuda.device_name()
    );
}

#[test]
fn a_group_is_its_members_passed_alone() {
    let grouped = kernel_ir(grouped::step::SOURCE, "step");
    let written = kernel_ir(grouped::step_written_out::SOURCE, "step_written_out");
    // The same operations on the same number of scalars, in the same order.
    assert_eq!(grouped.op_counts(), written.op_counts());
    let names: Vec<&str> = grouped.scalars.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "w_c",
            "w_damping",
            "w_west",
            "w_east",
            "w_wall",
            "s_dt",
            "s_full"
        ]
    );
    let types = |k: &kernels_gen::ir::Kernel| k.scalars.iter().map(|s| s.ty).collect::<Vec<_>>();
    assert_eq!(types(&grouped), types(&written));
    let member = grouped.scalars[4].member_of.as_ref().expect("a member");
    assert_eq!(
        (
            member.param.as_str(),
            member.group_type.as_str(),
            member.member.as_str()
        ),
        ("w", "Wave<T>", "wall")
    );
    assert!(written.scalars.iter().all(|s| s.member_of.is_none()));
}

#[test]
fn a_member_per_axis_is_one_scalar_per_axis_of_each_kernel() {
    for (dims, names) in [
        (2, vec!["d_k_0", "d_k_1", "d_dt", "d_from_0", "d_from_1"]),
        (
            3,
            vec![
                "d_k_0", "d_k_1", "d_k_2", "d_dt", "d_from_0", "d_from_1", "d_from_2",
            ],
        ),
    ] {
        let k = kernel_ir_of_dims(per_axis::diffuse::d2::SOURCE, "diffuse", dims);
        let got: Vec<&str> = k.scalars.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(got, names);
        // Every value of a member per axis knows its member and its axis.
        let m = k.scalars[1].member_of.as_ref().expect("a member");
        assert_eq!((m.param.as_str(), m.member.as_str()), ("d", "k"));
        assert_eq!(k.scalars[1].axis_of, Some(("d_k".to_string(), 1)));
    }
}

#[test]
fn parameters_named_like_the_launchers_variables_reach_the_kernel() {
    let n = [9usize, 4];
    let u = Field::<f64>::from_fn(&n, 1, |[i, j, _]| (i + 10 * j) as f64);
    let mut out = Field::<f64>::zeros(&n, 1).unwrap();
    let backends = [Some(Backend::Cpu), cuda_or_skip().map(Backend::Cuda)];
    for b in backends.into_iter().flatten() {
        let (u, mut o) = (u.to(&b).unwrap(), out.to(&b).unwrap());
        grouped::named_like_locals::launch(&b, &u, &mut o, 2.0, 3, 0.5, 4.0, 0.25, 1.0).unwrap();
        out = o.to_host().unwrap();
        for j in 0..4 {
            for i in 0..9 {
                let want = 2.0 * (i + 10 * j) as f64 + 1.5 + 1.0 - 1.0;
                assert_eq!(
                    out.get([i as isize, j as isize, 0]),
                    Some(want),
                    "{i} {j} on {b:?}"
                );
            }
        }
    }
}

#[test]
fn a_group_that_exists_only_in_some_instances_is_taken_by_those() {
    use grouped::{step_forced, Forcing};
    let n = [11usize, 5];
    let w = Wave {
        c: 0.7,
        damping: 0.05,
        west: 0,
        east: 1,
        wall: 0.25,
    };
    let s = Steps {
        dt: 0.1,
        full: true,
    };
    let f = Forcing {
        amplitude: 2.0,
        from: 4,
    };
    let backends = [Some(Backend::Cpu), cuda_or_skip().map(Backend::Cuda)];
    for b in backends.into_iter().flatten() {
        let [u] = random_fields_on::<f64, 1>(&mut rng("forced"), &b, &n);
        let [mut plain, mut forced, mut unforced] = poisoned_on::<f64, 3>(&b, &n);
        grouped::step::launch(&b, &u, &mut plain, &w, &s).unwrap();
        step_forced::forced_false::launch(&b, &u, &mut unforced, &w, &s).unwrap();
        step_forced::forced_true::launch(&b, &u, &mut forced, &w, &s, &f).unwrap();
        let (plain, unforced) = (plain.to_host().unwrap(), unforced.to_host().unwrap());
        let forced = forced.to_host().unwrap();
        for j in 0..5isize {
            for i in 0..11isize {
                let p = plain.get([i, j, 0]).unwrap();
                // Without the forcing the step is `step`'s, bit for bit.
                assert_eq!(unforced.get([i, j, 0]), Some(p), "{i} {j} on {b:?}");
                let push = if i >= 4 { 0.1 * 2.0 } else { 0.0 };
                let got = forced.get([i, j, 0]).unwrap();
                assert!(
                    (got - (p + push)).abs() < 1e-12,
                    "{i} {j}: {got} against {p} + {push} on {b:?}"
                );
            }
        }
    }
}

#[test]
fn a_kernel_whose_type_parameter_has_another_name_takes_the_group() {
    let n = [6usize, 3];
    let u = Field::<f32>::from_fn(&n, 1, |[i, j, _]| (i + 2 * j) as f32);
    let mut out = Field::<f32>::zeros(&n, 1).unwrap();
    let w = Wave {
        c: 1.0,
        damping: 0.25,
        west: 0,
        east: 0,
        wall: 0.0,
    };
    grouped::damped::launch(&Backend::Cpu, &u, &mut out, &w).unwrap();
    for j in 0..3isize {
        for i in 0..6isize {
            let v = (i + 2 * j) as f32;
            assert_eq!(out.get([i, j, 0]), Some(v - 0.25 * v), "{i} {j}");
        }
    }
}
