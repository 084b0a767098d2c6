//! Runs one kernel through the interpreter and the host-JIT LLVM lowering on the same
//! inputs, for comparison with the generated Rust (called through the kernel's `launch`).

use kernels_gen::ir::{Access, Kernel, ParamKind, Ty};
use kernels_gen::{compile_rust_source, Precision};
use rand::{Rng, SeedableRng};
use stencil_runtime::{Backend, Field, Real};

/// The IR of kernel `name`, recompiled from the source the macro embedded.
pub fn kernel_ir(source: &str, name: &str) -> Kernel {
    let kernels = compile_rust_source(source).unwrap_or_else(|e| panic!("{name}: {e}"));
    kernels
        .into_iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("kernel {name} not in its own source"))
}

/// The `dims`-dimensional kernel `name` of a kernel defined for several dimensions.
pub fn kernel_ir_of_dims(source: &str, name: &str, dims: usize) -> Kernel {
    let kernels = compile_rust_source(source).unwrap_or_else(|e| panic!("{name}: {e}"));
    kernels
        .into_iter()
        .find(|k| k.name == name && k.dims as usize == dims)
        .unwrap_or_else(|| panic!("no {dims}D kernel {name} in its own source"))
}

/// The precision of `T`.
pub fn precision<T: Real>() -> Precision {
    match T::PRECISION {
        stencil_runtime::Precision::F32 => Precision::F32,
        stencil_runtime::Precision::F64 => Precision::F64,
    }
}

/// A deterministic random generator for a test (seeded by name, so failures reproduce).
pub fn rng(seed: &str) -> rand::rngs::StdRng {
    let s = seed.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    rand::rngs::StdRng::seed_from_u64(s)
}

/// A field of uniform random values in `[lo, hi)`, halo included.
pub fn random_field<T: Real>(
    rng: &mut impl Rng,
    extent: &[usize],
    halo: usize,
    lo: f64,
    hi: f64,
) -> Field<T> {
    let mut f = Field::zeros(extent, halo).expect("valid extent");
    for v in f.as_mut_slice().expect("a host field") {
        *v = T::from_f64(rng.random_range(lo..hi));
    }
    f
}

/// A field of the given extent (halo 0) filled with NaN, so unwritten points show.
pub fn poisoned<T: Real>(extent: &[usize]) -> Field<T> {
    let mut f = Field::zeros(extent, 0).expect("valid extent");
    for v in f.as_mut_slice().expect("a host field") {
        *v = T::nan();
    }
    f
}

/// `K` fields of the given extent (halo 1) on `backend`, of values drawn from `rng`
/// uniformly in `[-1, 1)`, in turn.
pub fn random_fields_on<T: Real, const K: usize>(
    rng: &mut impl Rng,
    backend: &Backend,
    extent: &[usize],
) -> [Field<T>; K] {
    std::array::from_fn(|_| {
        let f = random_field::<T>(rng, extent, 1, -1.0, 1.0);
        f.to(backend).expect("a field on the backend")
    })
}

/// `K` fields of the given extent on `backend` filled with NaN ([`poisoned`]).
pub fn poisoned_on<T: Real, const K: usize>(backend: &Backend, extent: &[usize]) -> [Field<T>; K] {
    std::array::from_fn(|_| {
        poisoned(extent)
            .to(backend)
            .expect("a field on the backend")
    })
}

/// Which executor to run.
#[derive(Clone, Copy, Debug)]
pub enum Path {
    /// The reference interpreter.
    Interpreter,
    /// The LLVM lowering, JIT-compiled for the host.
    #[cfg(feature = "jit")]
    HostJit,
}

/// Runs `k` on `path`. `inputs` and `outputs` are the kernel's read-only fields and the
/// fields it writes (`Out`, `InOut`) in declaration order; `scalars` its scalar parameters (as f64). Returns the reductions.
pub fn run<T: Real>(
    path: Path,
    k: &Kernel,
    inputs: &[&Field<T>],
    outputs: &mut [Field<T>],
    scalars: &[f64],
) -> Vec<f64> {
    let p = precision::<T>();
    let domain = outputs
        .first()
        .map(|f| f.extent().to_vec())
        .unwrap_or_else(|| inputs[0].extent().to_vec());
    let mut slots: Vec<u64> = stencil_runtime::launch::domain3(&domain)
        .iter()
        .map(|&n| n as u64)
        .collect();
    let mut results: Vec<T> = vec![T::zero(); k.reductions.len()];
    let (mut next_in, mut next_out, mut next_scalar) = (0, 0, 0);
    let out_ptrs: Vec<(u64, [usize; 2])> = outputs
        .iter_mut()
        .map(|f| {
            (
                f.view_mut("harness", "out").expect("a host field").ptr as u64,
                f.strides(),
            )
        })
        .collect();
    for &(kind, i) in &k.param_order {
        match kind {
            ParamKind::Field => {
                let (ptr, strides) = match k.fields[i as usize].access {
                    Access::In => {
                        let f = inputs[next_in];
                        next_in += 1;
                        (
                            f.view("harness", "in").expect("a host field").ptr as u64,
                            f.strides(),
                        )
                    }
                    Access::Out | Access::InOut => {
                        next_out += 1;
                        out_ptrs[next_out - 1]
                    }
                };
                slots.extend([ptr, strides[0] as u64, strides[1] as u64]);
            }
            ParamKind::Scalar => {
                let v = scalars[next_scalar];
                next_scalar += 1;
                slots.push(match k.scalars[i as usize].ty.concrete(p) {
                    Ty::F32 => (v as f32).to_bits() as u64,
                    Ty::F64 => v.to_bits(),
                    Ty::Int => v as i64 as u64,
                    _ => (v != 0.0) as u64,
                });
            }
            ParamKind::Reduction => slots.push(&mut results[i as usize] as *mut T as u64),
            ParamKind::Mesh | ParamKind::Sampled => {
                panic!("the harness runs grid kernels without meshes or sampled grids")
            }
        }
    }
    // A line kernel's scratch: one value per point of the domain.
    let scratch_len = if k.line.is_some() {
        slots[..3].iter().product::<u64>() as usize
    } else {
        0
    };
    let mut scratch: Vec<T> = vec![T::zero(); scratch_len];
    if k.line.is_some() {
        slots.push(scratch.as_mut_ptr() as u64);
    }
    assert_eq!(next_in, inputs.len(), "{}: number of inputs", k.name);
    assert_eq!(next_scalar, scalars.len(), "{}: number of scalars", k.name);
    // SAFETY: the slots point at live fields whose halos cover what the kernel reads
    // (checked by the caller through the kernel's own launch on the same fields).
    unsafe {
        match path {
            Path::Interpreter => kernels_gen::interp::run(k, p, &slots),
            #[cfg(feature = "jit")]
            Path::HostJit => kernels_gen::llvm::jit::run_host(k, p, &slots)
                .unwrap_or_else(|e| panic!("{}: {e}", k.name)),
        }
    }
    results.iter().map(|r| r.as_f64()).collect()
}

/// The tolerance the suite holds every path to: 1e-12 in f64, 1e-5 in f32.
pub fn tolerance<T: Real>() -> f64 {
    match T::PRECISION {
        stencil_runtime::Precision::F32 => 1e-5,
        stencil_runtime::Precision::F64 => 1e-12,
    }
}

/// Asserts `got` agrees with `want` pointwise to `tol` relative (with a floor of `tol`
/// times the largest magnitude in `want`, for values near zero) and has no NaN.
pub fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            !g.is_nan() && !w.is_nan(),
            "{what}: NaN at {i} (got {g}, want {w})"
        );
        let err = (g - w).abs();
        let bound = tol * w.abs().max(g.abs()).max(scale * 1e-3);
        assert!(
            err <= bound || g == w,
            "{what}: point {i}: got {g:e}, want {w:e}, error {err:e} > {bound:e}"
        );
    }
}

/// The interior values of a field as f64.
pub fn values<T: Real>(f: &Field<T>) -> Vec<f64> {
    f.interior()
        .expect("readable")
        .iter()
        .map(|v| v.as_f64())
        .collect()
}

/// The bits of a field's interior values (the field on any backend), for comparisons bit
/// for bit.
pub fn bits<T: Real>(f: &Field<T>) -> Vec<u64> {
    values(&f.to_host().expect("a field"))
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

/// Asserts of each pair of outputs' bits ([`bits`]), a kernel's and those of the kernel
/// it is checked against, that they are equal and that every point was written (no NaN).
pub fn assert_same_bits(what: &str, pairs: &[(Vec<u64>, Vec<u64>)]) {
    for (k, (got, want)) in pairs.iter().enumerate() {
        assert_eq!(got, want, "{what}: pair {k}");
        let written = got.iter().all(|&b| !f64::from_bits(b).is_nan());
        assert!(written, "{what}: pair {k} has unwritten points");
    }
}

/// Compares `got` with the exact values `want(i)` (Rust's std) in ulp of `T`, over the
/// inputs whose value is finite and not zero (more than half of them): in f32 never more
/// than one ulp off and almost always equal, in f64 at most `f64_ulps` off.
pub fn assert_ulps<T: Real>(what: &str, got: &[f64], want: impl Fn(usize) -> f64, f64_ulps: u64) {
    let single = T::PRECISION == stencil_runtime::Precision::F32;
    let (mut off, mut worst, mut checked) = (0, 0, 0);
    for (i, &g) in got.iter().enumerate() {
        let want = T::from_f64(want(i)).as_f64();
        if !want.is_finite() || want == 0.0 {
            continue;
        }
        let ulps = if single {
            u64::from((g as f32).to_bits().abs_diff((want as f32).to_bits()))
        } else {
            g.to_bits().abs_diff(want.to_bits())
        };
        worst = worst.max(ulps);
        off += usize::from(ulps > 0);
        checked += 1;
    }
    println!(
        "{what} {:?}: {off} of {checked} off, worst {worst} ulp",
        T::PRECISION
    );
    assert!(
        checked * 2 > got.len(),
        "{what}: only {checked} finite results"
    );
    if single {
        assert!(worst <= 1, "{what} f32: {worst} ulp");
        assert!(
            off * 1000 < checked,
            "{what} f32: {off} of {checked} not correctly rounded"
        );
    } else {
        assert!(worst <= f64_ulps, "{what} f64: {worst} ulp");
    }
}

/// Runs `$body` twice, with `$t` the type `f32` and then `f64`.
#[macro_export]
macro_rules! for_precisions {
    ($t:ident => $body:block) => {{
        {
            type $t = f32;
            $body
        }
        {
            type $t = f64;
            $body
        }
    }};
}

/// Asserts, in both precisions, on grids of 1 x 1, 7 x 3 and 53 x 37 on the CPU, that each
/// of the functions `$case::<T>(&Backend, &[usize])` gives pairs of equal bits: a
/// kernel's outputs beside those of the same kernel written out another way.
#[macro_export]
macro_rules! assert_written_out_alike_on_the_cpu {
    ($($case:ident),+) => {
        $crate::for_precisions!(T => {
            for n in [[1usize, 1], [7, 3], [53, 37]] {
                let what = format!("{:?} {n:?}", <T as ::stencil_runtime::Real>::PRECISION);
                $($crate::harness::assert_same_bits(
                    &format!("{} {what}", stringify!($case)),
                    &$case::<T>(&::stencil_runtime::Backend::Cpu, &n),
                );)+
            }
        })
    };
}

/// Asserts, in both precisions, on grids of 7 x 3 and 300 x 129, that each of the
/// functions `$case::<T>(&Backend, &[usize])` gives pairs of equal bits on the device
/// `$gpu` (a `Backend`), and the bits the CPU gives.
#[macro_export]
macro_rules! assert_written_out_alike_on_the_device {
    ($gpu:expr, $($case:ident),+) => {
        $crate::for_precisions!(T => {
            for n in [[7usize, 3], [300, 129]] {
                let what = format!("{:?} {n:?}", <T as ::stencil_runtime::Real>::PRECISION);
                $(
                    let on_device = $case::<T>($gpu, &n);
                    let label = format!("{} {what}", stringify!($case));
                    $crate::harness::assert_same_bits(&format!("{label} on the device"), &on_device);
                    let on_cpu = $case::<T>(&::stencil_runtime::Backend::Cpu, &n);
                    assert!(on_device[..] == on_cpu[..], "{label}: the device against the CPU");
                )+
            }
        })
    };
}

/// A macro module's `SOURCE` as the text format reads it: without the `#[doc = ".."]`
/// attributes the macro keeps its doc comments as (the text format reads `///` comments).
pub fn undocumented(source: &str) -> String {
    let mut text = String::new();
    let mut rest = source;
    while let Some(at) = rest.find("#[doc") {
        text.push_str(&rest[..at]);
        // The attribute ends at the first `]` outside its string.
        let (mut in_string, mut escaped) = (false, false);
        let end = rest[at..].char_indices().find_map(|(i, c)| {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                ']' if !in_string => return Some(at + i + 1),
                _ => {}
            }
            None
        });
        rest = &rest[end.expect("a doc attribute's closing bracket")..];
    }
    text + rest
}
