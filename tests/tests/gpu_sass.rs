//! Kernels assembled ahead of time (`STENCIL_SASS`, README "Backends") on a CUDA device:
//! the SASS runs as the PTX does, bit for bit (skipped, with the reason printed, when the
//! binary has no SASS for the device), and SASS that is not a whole cubin falls back to
//! the PTX (its own fake SASS: any build). Both skip under `STENCIL_PTX_ONLY=1`. Staged
//! with SASS:
//! `CARGO_TARGET_DIR=/tmp/tsass STENCIL_SASS=sm_90 ../shared/tools/stage-gpu -p stencil-tests --test gpu_sass`.

use stencil_runtime::cuda::{CudaLaunch, KernelCode, Ptx, Sass, Tuning};
use stencil_runtime::{Backend, Cuda, Field, Real};
use stencil_tests::device::{cuda_or_skip, TILE_SHAPES};
use stencil_tests::kernels::suite;

/// lap5's code without its SASS, under other module-cache keys: what a device runs when it
/// compiles the PTX.
static LAP5_FROM_PTX: KernelCode = KernelCode {
    f32: Ptx {
        sass: &[],
        hash: suite::lap5::CODE.f32.hash ^ 1,
        ..suite::lap5::CODE.f32
    },
    f64: Ptx {
        sass: &[],
        hash: suite::lap5::CODE.f64.hash ^ 1,
        ..suite::lap5::CODE.f64
    },
    ..suite::lap5::CODE
};

/// The bits of lap5's output from `code` (lap5's) at precision `T`, for each tile variant
/// ([`TILE_SHAPES`]), on `cuda`.
fn lap5_over_variants<T: Real>(cuda: &Cuda, code: &'static KernelCode) -> Vec<Vec<u64>> {
    let n = [131, 67];
    let gpu = Backend::Cuda(cuda.clone());
    let u = Field::<T>::from_fn(&n, 1, |[i, j, _]| {
        T::from_f64(((i * 7 + j * 3) % 11) as f64)
    })
    .to(&gpu)
    .expect("upload");
    TILE_SHAPES
        .into_iter()
        .map(|shape| {
            let out = Field::<T>::zeros_on(&gpu, &n, 0).expect("alloc");
            let fixed = cuda
                .clone()
                .with_tuning(Tuning::Fixed(shape.parse().expect("a shape")));
            let mut l = CudaLaunch::new(&fixed, code, T::PRECISION);
            l.field("u", &u).expect("u");
            l.field("out", &out).expect("out");
            l.real(T::from_f64(0.25));
            l.run([n[0], n[1], 1]).expect("launch");
            stencil_tests::harness::bits(&out)
        })
        .collect()
}

#[test]
fn sass_built_ahead_runs_as_the_ptx_does() {
    let Some(cuda) = cuda_or_skip() else { return };
    if ptx_only() {
        return;
    }
    let Some(sass) = suite::lap5::CODE.f32.sass_for(cuda.arch()) else {
        println!(
            "SKIPPED: built without SASS for this device's sm_{} (build with STENCIL_SASS=sm_{})",
            cuda.arch(),
            cuda.arch()
        );
        return;
    };
    assert_eq!(sass.dependent, cuda.arch() >= 90);
    assert_eq!(
        lap5_over_variants::<f32>(&cuda, &suite::lap5::CODE),
        lap5_over_variants::<f32>(&cuda, &LAP5_FROM_PTX)
    );
    assert_eq!(
        lap5_over_variants::<f64>(&cuda, &suite::lap5::CODE),
        lap5_over_variants::<f64>(&cuda, &LAP5_FROM_PTX)
    );
}

/// Whether `STENCIL_PTX_ONLY=1` keeps this run from loading SASS (printed as a skip).
fn ptx_only() -> bool {
    let only = std::env::var(stencil_runtime::cuda::PTX_ONLY_ENV).is_ok_and(|v| v == "1");
    if only {
        println!("SKIPPED: STENCIL_PTX_ONLY=1, so no SASS is loaded");
    }
    only
}

#[test]
fn sass_that_is_not_a_cubin_falls_back_to_the_ptx() {
    let Some(cuda) = cuda_or_skip() else { return };
    if ptx_only() {
        return;
    }
    // lap5 with "SASS" for this device that is not a whole cubin (a CUDA ELF header with
    // nothing after it), under its own module-cache keys.
    let mut header = [0u8; 64];
    header[..6].copy_from_slice(b"\x7fELF\x02\x01");
    header[18] = 190;
    header[0x3c] = 9; // nine section headers, past the end
    let image: &'static [u8] = Box::leak(Box::new(header));
    let sass: &'static [Sass] = Box::leak(Box::new([Sass {
        arch: cuda.arch(),
        dependent: false,
        image,
    }]));
    let code: &'static KernelCode = Box::leak(Box::new(KernelCode {
        f32: Ptx {
            sass,
            hash: suite::lap5::CODE.f32.hash ^ 2,
            ..suite::lap5::CODE.f32
        },
        ..suite::lap5::CODE
    }));
    assert_eq!(
        lap5_over_variants::<f32>(&cuda, code),
        lap5_over_variants::<f32>(&cuda, &LAP5_FROM_PTX)
    );
}
