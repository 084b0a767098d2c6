//! Compile-time constant parameters, `#[stencil(consts(a = [0, 1]))]`: one definition makes
//! one kernel per choice of the constants' values; each instance lowers exactly as the
//! kernel written out with the value in place of the parameter, computes what it says on
//! the CPU and on a device, and `launch` takes the constants as arguments and refuses a
//! value no instance was made for.

use stencil_runtime::prelude::*;
use stencil_tests::device::gpu_or_skip;
use stencil_tests::harness::{
    assert_close, kernel_ir_of_dims, poisoned, random_field, rng, values,
};

#[stencils]
mod constant {
    /// `s u(x ± e_a)`: the neighbour up (`up`) or down axis `a`, scaled.
    #[stencil(dims = [2, 3], consts(a = [0, 1], up = [true, false]))]
    pub fn shifted<T: Real>(u: In<T>, out: Out<T>, a: i64, s: T, up: bool) {
        if up {
            out = s * u[unit(a)];
        } else {
            out = s * u[-unit(a)];
        }
    }

    /// The Laplacian of order 2 or 4 (`order`) summed over the axes.
    #[stencil(dims = [2, 3], consts(order = [2, 4]))]
    pub fn laplacian<T: Real>(u: In<T>, out: Out<T>, order: i64) {
        let mut s = 0.0;
        for a in 0..ndims() {
            let e = unit(a);
            if order == 2 {
                s += u[e] - 2.0 * u + u[-e];
            } else {
                s += (16.0 * (u[e] + u[-e]) - (u[2 * e] + u[-2 * e]) - 30.0 * u) / 12.0;
            }
        }
        out = s;
    }

    /// `s k` times the sum of `u`: a reduction before the constant, which the launcher
    /// takes no argument for.
    #[stencil(dims = 2, consts(k = [1, 3]))]
    pub fn scaled_sum<T: Real>(u: In<T>, total: Sum<T>, k: i64, s: T) {
        total.reduce(s * (k as T) * u);
    }

    /// Line Gauss-Seidel along axis `a` for `4 e - (e_west + e_east) - (e_south + e_north)
    /// = r`, on the lines of colour `colour`.
    #[stencil(dims = 2, line = a, red_black = colour, consts(a = [0, 1]))]
    pub fn lines<T: Real>(e: InOut<T>, r: In<T>, a: i64, colour: i64) {
        let across = unit(1 - a);
        e = tridiagonal(-1.0, 4.0, -1.0, r + e[across] + e[-across]);
    }
}

/// The body of a kernel's IR: its text after the header line (which names the kernel and
/// its constants), with the nodes numbered in the order they appear (a branch a constant
/// decides leaves unused node numbers behind).
fn body(ir: &str) -> String {
    let rest = ir.split_once('\n').map_or("", |(_, rest)| rest);
    let mut seen: Vec<&str> = Vec::new();
    let mut out = String::new();
    let mut pieces = rest.split('%');
    out.push_str(pieces.next().unwrap_or(""));
    for piece in pieces {
        let digits = piece.len() - piece.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let (id, tail) = piece.split_at(digits);
        let n = seen.iter().position(|s| *s == id).unwrap_or_else(|| {
            seen.push(id);
            seen.len() - 1
        });
        out.push_str(&format!("%{n}{tail}"));
    }
    out
}

#[test]
fn each_instance_lowers_as_the_kernel_written_out() {
    let written = |source: &str, name: &str, dims| {
        let k = kernels_gen::compile_rust_source(source).expect("compiles");
        k.into_iter()
            .find(|k| k.name == name && k.dims == dims)
            .expect("the kernel")
            .to_string()
    };
    let shifted = "#[stencil(dims = 3)] fn down_y<T: Real>(u: In<T>, out: Out<T>, s: T) { out = s * u[-unit(1)]; }";
    assert_eq!(
        body(constant::shifted::a_1_up_false::d3::IR),
        body(&written(shifted, "down_y", 3))
    );
    let lines = "#[stencil(dims = 2, line = 1, red_black = colour)] fn along_y<T: Real>(e: InOut<T>, r: In<T>, colour: i64) { e = tridiagonal(-1.0, 4.0, -1.0, r + e[unit(0)] + e[-unit(0)]); }";
    assert_eq!(
        body(constant::lines::a_1::IR),
        body(&written(lines, "along_y", 2))
    );
    // The instances differ: the constant is no run-time parameter.
    assert_ne!(constant::lines::a_0::IR, constant::lines::a_1::IR);
    assert!(constant::lines::a_1::IR.contains("line 1, red_black colour, a = 1"));
    assert_eq!(constant::laplacian::order_2::d2::HALO, 1);
    assert_eq!(constant::laplacian::order_4::d3::HALO, 2);
}

#[test]
fn the_kept_source_recompiles_to_every_instance() {
    for (dims, a, up) in [(2, 0, "true"), (3, 1, "false"), (2, 1, "true")] {
        let name = format!("shifted_a_{a}_up_{up}");
        let got = kernel_ir_of_dims(constant::shifted::SOURCE, &name, dims);
        let want = match (dims, a, up) {
            (2, 0, "true") => constant::shifted::a_0_up_true::d2::IR,
            (3, 1, "false") => constant::shifted::a_1_up_false::d3::IR,
            _ => constant::shifted::a_1_up_true::d2::IR,
        };
        assert_eq!(got.to_string(), want, "{name} {dims}D");
    }
}

/// `shifted` in Rust, in the order of `Field::interior`.
fn shifted_in_rust(u: &Field<f64>, a: usize, s: f64, up: bool) -> Vec<f64> {
    points(u.extent())
        .map(|p| {
            let mut q = p;
            q[a] += if up { 1 } else { -1 };
            s * u.get(q).expect("inside the halo")
        })
        .collect()
}

/// `laplacian` of order 2 or 4 in Rust.
fn laplacian_in_rust(u: &Field<f64>, order: i64) -> Vec<f64> {
    let dims = u.extent().len();
    points(u.extent())
        .map(|p| {
            let at = |a: usize, d: isize| {
                let mut q = p;
                q[a] += d;
                u.get(q).expect("inside the halo")
            };
            (0..dims)
                .map(|a| {
                    if order == 2 {
                        at(a, 1) - 2.0 * at(a, 0) + at(a, -1)
                    } else {
                        (16.0 * (at(a, 1) + at(a, -1)) - (at(a, 2) + at(a, -2)) - 30.0 * at(a, 0))
                            / 12.0
                    }
                })
                .fold(0.0, |s, t| s + t)
        })
        .collect()
}

/// The points of `extent` in the order of `Field::interior`.
fn points(extent: &[usize]) -> impl Iterator<Item = [isize; 3]> + '_ {
    let size = |a: usize| extent.get(a).copied().unwrap_or(1) as isize;
    (0..size(2))
        .flat_map(move |k| (0..size(1)).flat_map(move |j| (0..size(0)).map(move |i| [i, j, k])))
}

#[test]
fn launch_runs_the_instance_made_for_the_constants() -> Result<(), Error> {
    let mut r = rng("compile-time constants");
    let fields =
        [&[23, 17][..], &[9, 8, 7][..]].map(|e| random_field::<f64>(&mut r, e, 2, -1.0, 1.0));
    for u in &fields {
        let extent = u.extent();
        for (a, up) in [(0, true), (0, false), (1, true), (1, false)] {
            let mut out = poisoned(extent);
            constant::shifted::launch(&Backend::Cpu, u, &mut out, a, 0.5, up)?;
            let want = shifted_in_rust(u, a as usize, 0.5, up);
            assert_eq!(values(&out), want, "{extent:?} a = {a} up = {up}");
        }
        for order in [2, 4] {
            let mut out = poisoned(extent);
            constant::laplacian::launch(&Backend::Cpu, u, &mut out, order)?;
            let what = format!("{extent:?} order {order}");
            assert_close(&what, &values(&out), &laplacian_in_rust(u, order), 1e-12);
        }
    }
    Ok(())
}

#[test]
fn constants_after_a_reduction_take_their_place() -> Result<(), Error> {
    let u = Field::<f64>::from_fn(&[6, 5], 0, |p| (p[0] + 2 * p[1]) as f64);
    let sum: f64 = values(&u).iter().sum();
    for k in [1, 3] {
        let total = constant::scaled_sum::launch(&Backend::Cpu, &u, k, 0.5)?;
        assert_eq!(total, 0.5 * k as f64 * sum, "k = {k}");
    }
    Ok(())
}

#[test]
fn a_value_no_instance_was_made_for_is_a_typed_error() {
    let cpu = Backend::Cpu;
    let u = Field::<f64>::zeros(&[8, 8], 1).expect("a field");
    let mut out = Field::<f64>::zeros(&[8, 8], 0).expect("a field");
    let e = constant::shifted::launch(&cpu, &u, &mut out, 2, 1.0, true)
        .expect_err("a = 2 has no instance");
    let message = e.to_string();
    assert!(
        matches!(e, Error::Parameter { param: "a, up", .. }),
        "{e:?}"
    );
    assert!(message.contains("(2, true)"), "{message}");
    assert!(message.contains("a = 1, up = false"), "{message}");
    let e = constant::laplacian::launch(&cpu, &u, &mut out, 6).expect_err("no order 6");
    assert!(e.to_string().contains("order = 2; order = 4"), "{e}");
}

/// A launch of a kernel from one field into another on a backend.
type Launch<'a> = dyn Fn(&Backend, &Field<f64>, &mut Field<f64>) -> Result<(), Error> + 'a;

/// The instances on a device equal the CPU's: the shifts and Laplacians exactly in f64
/// (the same operations), the line solves to round-off.
#[test]
fn the_instances_on_the_device_match_the_cpu() -> Result<(), Error> {
    let Some(gpu) = gpu_or_skip() else {
        return Ok(());
    };
    let cpu = Backend::Cpu;
    let mut r = rng("constants on the device");
    for extent in [&[70, 45][..], &[33, 20, 9][..]] {
        let u = random_field::<f64>(&mut r, extent, 2, -1.0, 1.0);
        let on_gpu = u.to(&gpu)?;
        let both = |run: &Launch<'_>| {
            let mut want = Field::zeros(extent, 0)?;
            run(&cpu, &u, &mut want)?;
            let mut got = Field::zeros_on(&gpu, extent, 0)?;
            run(&gpu, &on_gpu, &mut got)?;
            Ok::<_, Error>((values(&got.to_host()?), values(&want)))
        };
        for (a, up) in [(0, true), (1, false)] {
            let (got, want) = both(&|b, u, out| constant::shifted::launch(b, u, out, a, 2.0, up))?;
            assert_eq!(got, want, "{extent:?} shifted a = {a} up = {up}");
        }
        for order in [2, 4] {
            let (got, want) = both(&|b, u, out| constant::laplacian::launch(b, u, out, order))?;
            assert_eq!(got, want, "{extent:?} laplacian order {order}");
        }
    }
    let extent = [64, 40];
    let rhs = random_field::<f64>(&mut r, &extent, 1, -1.0, 1.0);
    for a in [0, 1] {
        let start = random_field::<f64>(&mut r, &extent, 1, -1.0, 1.0);
        let mut want = start.to(&cpu)?;
        let mut got = start.to(&gpu)?;
        let rhs_gpu = rhs.to(&gpu)?;
        for colour in [0, 1] {
            constant::lines::launch(&cpu, &mut want, &rhs, a, colour)?;
            constant::lines::launch(&gpu, &mut got, &rhs_gpu, a, colour)?;
        }
        let worst = values(&got.to_host()?)
            .iter()
            .zip(values(&want))
            .map(|(g, w)| (g - w).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-12, "lines along {a}: off by {worst}");
    }
    Ok(())
}
