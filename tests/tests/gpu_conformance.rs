//! The embedded PTX of every kernel runs on a CUDA device and agrees with the reference
//! interpreter (f64 to 1e-12, f32 to 1e-5 relative), outputs and reductions.
//!
//! Uses the driver API directly (cudarc, loaded at run time). Without a driver or a device
//! it prints why it skipped. This binary does not link LLVM, so it can be staged for a GPU
//! machine: `../shared/tools/stage-gpu -p stencil-tests --no-default-features --test gpu_conformance`.

use kernels_gen::ir::{Access, Kernel, ReduceOp};
use stencil_runtime::{Field, Real};
use stencil_tests::gpu::{device, grid_for, synchronize, DeviceBuffer, DeviceField, Entry, Params};
use stencil_tests::harness::{
    assert_close, kernel_ir, poisoned, precision, random_field, rng, run, tolerance, values, Path,
};
use stencil_tests::kernels::ALL;

fn block_shape(dims: u8) -> (u32, u32, u32) {
    match dims {
        1 => (128, 1, 1),
        2 => (32, 8, 1),
        _ => (32, 4, 2),
    }
}

fn extent(dims: u8) -> Vec<usize> {
    match dims {
        1 => vec![1003],
        2 => vec![67, 45],
        _ => vec![21, 13, 11],
    }
}

/// Runs kernel `k` from `ptx` (entry `entry`) at precision `T` on the device and compares
/// it with the interpreter on the same random inputs.
fn check<T: Real>(k: &Kernel, ptx: &str, entry: &str) {
    let name = format!("{} {:?}", k.name, T::PRECISION);
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
    let in_refs: Vec<&Field<T>> = inputs.iter().collect();
    let mut want: Vec<Field<T>> = (0..n_out).map(|_| poisoned(&n)).collect();
    let want_red = run(Path::Interpreter, k, &in_refs, &mut want, &scalars);

    let mut got: Vec<Field<T>> = (0..n_out).map(|_| poisoned(&n)).collect();
    let dev_in: Vec<DeviceField> = inputs.iter().map(DeviceField::upload).collect();
    let dev_out: Vec<DeviceField> = got.iter().map(DeviceField::upload).collect();
    let n3 = stencil_runtime::launch::domain3(&n);
    let block = block_shape(k.dims);
    let grid = grid_for(n3, block);
    let blocks = (grid.0 * grid.1 * grid.2) as usize;
    let partials: Vec<DeviceBuffer> = k
        .reductions
        .iter()
        .map(|_| DeviceBuffer::new(blocks * std::mem::size_of::<T>()))
        .collect();
    let mut params = Params::new(
        k,
        precision::<T>(),
        n3,
        &dev_in.iter().collect::<Vec<_>>(),
        &dev_out.iter().collect::<Vec<_>>(),
        &scalars,
        &partials.iter().collect::<Vec<_>>(),
    );
    let entry_fn = Entry::load(ptx, entry).unwrap_or_else(|e| panic!("{name}: {e}"));
    // SAFETY: the parameters follow the calling convention and every field covers the
    // domain plus the halo the kernel reads.
    unsafe { entry_fn.launch(grid, block, &mut params) }.unwrap_or_else(|e| panic!("{name}: {e}"));
    synchronize().unwrap_or_else(|e| panic!("{name}: {e}"));
    for (d, f) in dev_out.iter().zip(got.iter_mut()) {
        d.download(f);
    }
    let tol = tolerance::<T>();
    for (o, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_close(
            &format!("{name} GPU output {o}"),
            &values(g),
            &values(w),
            tol,
        );
    }
    let mut got_red = Vec::new();
    for (red, p) in k.reductions.iter().zip(&partials) {
        let mut host = vec![T::zero(); blocks];
        p.read(&mut host);
        let vals = host.iter().map(|v| v.as_f64());
        got_red.push(match red.op {
            ReduceOp::Sum => vals.sum(),
            ReduceOp::Max => vals.fold(f64::NEG_INFINITY, f64::max),
            ReduceOp::Min => vals.fold(f64::INFINITY, f64::min),
        });
    }
    assert_close(&format!("{name} GPU reductions"), &got_red, &want_red, tol);
}

#[test]
fn every_kernel_agrees_on_the_gpu() {
    let gpu = match device() {
        Ok(name) => name,
        Err(why) => {
            println!("SKIPPED: GPU conformance needs a CUDA device: {why}");
            return;
        }
    };
    for c in ALL {
        let k = kernel_ir(c.source, c.name);
        check::<f32>(&k, c.ptx_f32.0, c.ptx_f32.1);
        check::<f64>(&k, c.ptx_f64.0, c.ptx_f64.1);
    }
    println!("{} kernels x 2 precisions agree on {gpu}", ALL.len());
}
