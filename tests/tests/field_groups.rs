//! Groups taken as fields (`from: In<Pair<T>>`, `Out`, `InOut`): a kernel that takes its
//! fields as groups, passes them to helpers by name and builds groups of fields or staged
//! values at helper calls computes what the kernel with every field written out computes,
//! bit for bit, on the CPU and on a device; the launcher takes the group's struct of
//! fields (over blocks too: `stencil_tests::blocks`).

use stencil_runtime::{Backend, Field, Real};
use stencil_tests::device::cuda_or_skip;
use stencil_tests::harness::{bits, kernel_ir, poisoned_on, random_field, random_fields_on, rng};
use stencil_tests::kernels::groups::of_fields::{self, Pair};
use stencil_tests::{assert_written_out_alike_on_the_cpu, assert_written_out_alike_on_the_device};

/// `exchange` and `exchange_written_out` on `backend` over a grid of extents `n`: the
/// bits of each output and in-place field, (grouped, written out).
fn exchange_on<T: Real>(backend: &Backend, n: &[usize]) -> Vec<(Vec<u64>, Vec<u64>)> {
    let [a, b] = random_fields_on::<T, 2>(&mut rng(&format!("pair {n:?}")), backend, n);
    let acc = || random_fields_on::<T, 2>(&mut rng(&format!("acc {n:?}")), backend, n);
    let ([mut acc_a, mut acc_b], [mut acc_a2, mut acc_b2]) = (acc(), acc());
    let [mut to_a, mut to_b, mut to_a2, mut to_b2] = poisoned_on::<T, 4>(backend, n);
    let k = T::from_f64(0.3);
    of_fields::exchange::launch(
        backend,
        Pair { a: &a, b: &b },
        Pair {
            a: &mut to_a,
            b: &mut to_b,
        },
        Pair {
            a: &mut acc_a,
            b: &mut acc_b,
        },
        k,
    )
    .unwrap();
    of_fields::exchange_written_out::launch(
        backend,
        &a,
        &b,
        &mut to_a2,
        &mut to_b2,
        &mut acc_a2,
        &mut acc_b2,
        k,
    )
    .unwrap();
    [
        (&to_a, &to_a2),
        (&to_b, &to_b2),
        (&acc_a, &acc_a2),
        (&acc_b, &acc_b2),
    ]
    .map(|(g, w)| (bits(g), bits(w)))
    .to_vec()
}

/// `staged_pair` (a group built from staged values) and its written-out kernel on
/// `backend`: the bits of each output, (grouped, written out).
fn staged_on<T: Real>(backend: &Backend, n: &[usize]) -> Vec<(Vec<u64>, Vec<u64>)> {
    // The staged values are computed over the tile and a point around it, so `u` is read
    // two points out.
    let u = random_field::<T>(&mut rng(&format!("staged pair {n:?}")), n, 2, -1.0, 1.0);
    let u = u.to(backend).unwrap();
    let [mut a, mut b, mut a2, mut b2] = poisoned_on::<T, 4>(backend, n);
    let k = T::from_f64(0.3);
    let to = Pair {
        a: &mut a,
        b: &mut b,
    };
    of_fields::staged_pair::launch(backend, &u, to, k).unwrap();
    of_fields::staged_pair_written_out::launch(backend, &u, &mut a2, &mut b2, k).unwrap();
    vec![(bits(&a), bits(&a2)), (bits(&b), bits(&b2))]
}

#[test]
fn a_kernel_taking_groups_of_fields_computes_the_written_out_kernel_on_the_cpu() {
    assert_written_out_alike_on_the_cpu!(exchange_on, staged_on);
}

#[test]
fn on_a_device_a_kernel_taking_groups_of_fields_computes_the_cpu_result() {
    let Some(cuda) = cuda_or_skip() else { return };
    let gpu = Backend::Cuda(cuda.clone());
    assert_written_out_alike_on_the_device!(&gpu, exchange_on, staged_on);
    println!(
        "kernels taking groups of fields equal the CPU on {}",
        cuda.device_name()
    );
}

#[test]
fn a_group_of_fields_is_its_members_passed_alone() {
    let grouped = kernel_ir(of_fields::exchange::SOURCE, "exchange");
    let written = kernel_ir(
        of_fields::exchange_written_out::SOURCE,
        "exchange_written_out",
    );
    assert_eq!(grouped.op_counts(), written.op_counts());
    let shape = |k: &kernels_gen::ir::Kernel| {
        k.fields
            .iter()
            .map(|f| (f.access, f.reach_lo, f.reach_hi))
            .collect::<Vec<_>>()
    };
    // The same fields, in the same order, read as far.
    assert_eq!(shape(&grouped), shape(&written));
    let names: Vec<&str> = grouped.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["from_a", "from_b", "to_a", "to_b", "acc_a", "acc_b"]
    );
    let m = grouped.fields[3].member_of.as_ref().expect("a member");
    assert_eq!(
        (m.param.as_str(), m.group.as_str(), m.member.as_str()),
        ("to", "Pair", "b")
    );
    assert!(written.fields.iter().all(|f| f.member_of.is_none()));
}

#[test]
fn a_group_of_fields_on_the_wrong_grid_is_a_typed_error_naming_the_member() {
    let n = [9usize, 5];
    let [a, b] = random_fields_on::<f64, 2>(&mut rng("wrong grid"), &Backend::Cpu, &n);
    let mut short = Field::<f64>::zeros(&[9, 4], 0).unwrap();
    let [mut to_a, mut acc_a, mut acc_b] = poisoned_on::<f64, 3>(&Backend::Cpu, &n);
    let e = of_fields::exchange::launch(
        &Backend::Cpu,
        Pair { a: &a, b: &b },
        Pair {
            a: &mut to_a,
            b: &mut short,
        },
        Pair {
            a: &mut acc_a,
            b: &mut acc_b,
        },
        0.5,
    )
    .unwrap_err();
    assert!(e.to_string().contains("`to.b`"), "{e}");
}

/// A kernel defined for 2D and 3D, and one with constants whose instance for `more`
/// takes a second group of fields, against their sums written out here.
#[test]
fn groups_of_fields_in_kernels_of_several_dimensions_and_constants() {
    for n in [vec![9usize, 7], vec![6, 5, 4]] {
        let [a, b] =
            random_fields_on::<f64, 2>(&mut rng(&format!("dims {n:?}")), &Backend::Cpu, &n);
        let [mut la, mut lab] = poisoned_on::<f64, 2>(&Backend::Cpu, &n);
        let to = Pair {
            a: &mut la,
            b: &mut lab,
        };
        of_fields::laplacians::launch(&Backend::Cpu, Pair { a: &a, b: &b }, to).unwrap();
        let dims = n.len();
        let lap = |f: &Field<f64>, p: [isize; 3]| -> f64 {
            (0..dims)
                .map(|ax| {
                    let (mut up, mut down) = (p, p);
                    up[ax] += 1;
                    down[ax] -= 1;
                    f.get(up).unwrap() - 2.0 * f.get(p).unwrap() + f.get(down).unwrap()
                })
                .sum()
        };
        let at = [2isize, 3, (dims == 3) as isize];
        assert_eq!(la.get(at), Some(lap(&a, at)), "{n:?}");
        assert_eq!(lab.get(at), Some(lap(&a, at) + lap(&b, at)), "{n:?}");
    }
    let n = [8usize, 5];
    let [a, b, c, d] = random_fields_on::<f64, 4>(&mut rng("consts"), &Backend::Cpu, &n);
    let [mut x, mut y] = poisoned_on::<f64, 2>(&Backend::Cpu, &n);
    let from = Pair { a: &a, b: &b };
    let to = Pair {
        a: &mut x,
        b: &mut y,
    };
    of_fields::summed::more_true::launch(&Backend::Cpu, from, Pair { a: &c, b: &d }, to).unwrap();
    let p = [3isize, 2, 0];
    let v = |f: &Field<f64>, q: [isize; 3]| f.get(q).unwrap();
    let base = v(&a, p) + v(&b, p);
    assert_eq!(x.get(p), Some(base + v(&c, [4, 2, 0]) + v(&d, p)));
    assert_eq!(y.get(p), Some(base));
    let to = Pair {
        a: &mut x,
        b: &mut y,
    };
    of_fields::summed::more_false::launch(&Backend::Cpu, Pair { a: &a, b: &b }, to).unwrap();
    assert_eq!(x.get(p), Some(base));
}

/// The kernel for 2D and 3D taking groups of fields gives on a device the CPU's bits.
#[test]
fn on_a_device_groups_of_fields_in_a_kernel_of_several_dimensions_give_the_cpu_result() {
    let Some(cuda) = cuda_or_skip() else { return };
    let gpu = Backend::Cuda(cuda);
    for n in [vec![129usize, 67], vec![40, 33, 17]] {
        let run = |b: &Backend| {
            let [a, c] = random_fields_on::<f64, 2>(&mut rng(&format!("dims gpu {n:?}")), b, &n);
            let [mut x, mut y] = poisoned_on::<f64, 2>(b, &n);
            let to = Pair {
                a: &mut x,
                b: &mut y,
            };
            of_fields::laplacians::launch(b, Pair { a: &a, b: &c }, to).unwrap();
            (bits(&x.to_host().unwrap()), bits(&y.to_host().unwrap()))
        };
        assert!(run(&gpu) == run(&Backend::Cpu), "{n:?}");
    }
}
