//! Effective bandwidth of the generated PTX on a GPU, against the device's measured copy
//! bandwidth, in one run. A first look for the CUDA run-time work: fixed launch shapes, no
//! tuning, one point per thread.
//!
//! `../shared/tools/stage-gpu -p stencil-tests --no-default-features --bench gpu_bandwidth`
//! then `.gpu/run gpu_bandwidth` on the GPU machine. Without a GPU it says so and exits.

use cudarc::driver::result;
use std::time::Instant;
use stencil_runtime::{Field, Real};
use stencil_tests::gpu::{device, grid_for, synchronize, DeviceBuffer, DeviceField, Entry, Params};
use stencil_tests::harness::{kernel_ir, precision};
use stencil_tests::kernels::{Compiled, ALL};

const REPS: usize = 20;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

/// Median seconds of `f` over REPS runs after 3 warm-ups, synchronising around each.
fn time(mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    synchronize().expect("warm-up");
    let mut ts = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let t = Instant::now();
        f();
        synchronize().expect("timed run");
        ts.push(t.elapsed().as_secs_f64());
    }
    median(ts)
}

/// Device-to-device copy bandwidth, bytes read plus written per second.
fn copy_bandwidth() -> f64 {
    let bytes = 1usize << 31;
    let a = DeviceBuffer::new(bytes);
    let b = DeviceBuffer::new(bytes);
    // SAFETY: both buffers hold `bytes` bytes.
    let t = time(|| unsafe { result::memcpy_dtod_sync(b.ptr, a.ptr, bytes).expect("copy") });
    2.0 * bytes as f64 / t
}

/// Times kernel `c` at precision `T` over `n`; returns (seconds, bytes that must move).
fn kernel_time<T: Real>(c: &Compiled, n: &[usize]) -> (f64, f64) {
    let k = kernel_ir(c.source, c.name);
    let (ptx, entry) = if T::PRECISION == stencil_runtime::Precision::F32 {
        c.ptx_f32
    } else {
        c.ptx_f64
    };
    let inputs: Vec<DeviceField> = k
        .fields
        .iter()
        .filter(|f| f.access == kernels_gen::ir::Access::In)
        .map(|f| {
            let field = Field::<T>::from_fn(n, f.halo() as usize, |[i, j, l]| {
                T::from_f64(1.0 + ((i * 7 + j * 3 + l) % 13) as f64 * 0.01)
            });
            DeviceField::upload(&field)
        })
        .collect();
    let n_out = k.fields.len() - inputs.len();
    let outputs: Vec<DeviceField> = (0..n_out)
        .map(|_| DeviceField::upload(&Field::<T>::zeros(n, 0).expect("extent")))
        .collect();
    let n3 = stencil_runtime::launch::domain3(n);
    let block = if n.len() == 3 { (32, 4, 2) } else { (32, 8, 1) };
    let scalars = vec![0.5; k.scalars.len()];
    let mut params = Params::new(
        &k,
        precision::<T>(),
        n3,
        &inputs.iter().collect::<Vec<_>>(),
        &outputs.iter().collect::<Vec<_>>(),
        &scalars,
        &[],
    );
    let e = Entry::load(ptx, entry).expect("load PTX");
    let grid = grid_for(n3, block);
    // SAFETY: parameters follow the calling convention; fields cover domain plus halo.
    let t = time(|| unsafe { e.launch(grid, block, &mut params).expect("launch") });
    let points: f64 = n.iter().map(|&x| x as f64).product();
    (
        t,
        points * k.fields.len() as f64 * std::mem::size_of::<T>() as f64,
    )
}

fn main() {
    let name = match device() {
        Ok(n) => n,
        Err(why) => {
            println!("SKIPPED: the GPU bandwidth benchmark needs a CUDA device: {why}");
            return;
        }
    };
    let copy = copy_bandwidth();
    println!(
        "device: {name}; copy bandwidth {:.0} GB/s (bytes read + written)\n",
        copy / 1e9
    );
    println!("| kernel | precision | size | time (ms) | T_eff (GB/s) | T_eff / copy |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let find = |n: &str| ALL.iter().find(|c| c.name == n).expect("kernel");
    let cases: [(&str, Vec<usize>); 5] = [
        ("lap5", vec![8192, 8192]),
        ("lap5", vec![16384, 16384]),
        ("jacobi", vec![8192, 8192]),
        ("lap9", vec![8192, 8192]),
        ("lap7", vec![512, 512, 512]),
    ];
    for (kname, n) in &cases {
        for prec in ["f32", "f64"] {
            let (t, bytes) = if prec == "f32" {
                kernel_time::<f32>(find(kname), n)
            } else {
                kernel_time::<f64>(find(kname), n)
            };
            let teff = bytes / t;
            let size = n
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x");
            println!(
                "| {kname} | {prec} | {size} | {:.3} | {:.0} | {:.2} |",
                t * 1e3,
                teff / 1e9,
                teff / copy
            );
        }
    }
}
