//! The embedded PTX of every kernel runs on a CUDA device and agrees with the reference
//! interpreter (f64 to 1e-12, f32 to 1e-5 relative), outputs and reductions.
//!
//! Uses the driver API directly (cudarc, loaded at run time). Without a driver or a device
//! it prints why it skipped. This binary does not link LLVM, so it can be staged for a GPU
//! machine: `../shared/tools/stage-gpu -p stencil-tests --no-default-features --test gpu_conformance`.

use cudarc::driver::{result, sys};
use kernels_gen::ir::{Kernel, ParamKind, ReduceOp, Ty};
use std::ffi::{c_void, CString};
use stencil_runtime::{Field, Real};
use stencil_tests::harness::{
    assert_close, kernel_ir, poisoned, precision, random_field, rng, run, tolerance, values, Path,
};
use stencil_tests::kernels::ALL;

/// Sets up device 0 and makes its primary context current, or says why not.
fn device() -> Result<String, String> {
    // SAFETY: probing for the library has no preconditions.
    let present = std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false);
    if !present {
        return Err("the CUDA driver library (libcuda.so) is not installed".into());
    }
    result::init().map_err(|e| format!("cuInit failed: {e:?}"))?;
    let dev = result::device::get(0).map_err(|e| format!("no CUDA device 0: {e:?}"))?;
    let name = result::device::get_name(dev).map_err(|e| format!("{e:?}"))?;
    // SAFETY: `dev` is a valid device handle.
    unsafe {
        let ctx = result::primary_ctx::retain(dev).map_err(|e| format!("{e:?}"))?;
        result::ctx::set_current(ctx).map_err(|e| format!("{e:?}"))?;
    }
    Ok(name)
}

/// A device copy of a field's whole storage (halo included).
struct DeviceField {
    base: sys::CUdeviceptr,
    origin_bytes: u64,
    strides: [usize; 2],
}

impl DeviceField {
    fn upload<T: Real>(f: &Field<T>) -> DeviceField {
        let data = f.as_slice();
        // SAFETY: allocation and copy of exactly `data`'s bytes.
        let base = unsafe {
            let p = result::malloc_sync(std::mem::size_of_val(data)).expect("cuMemAlloc");
            result::memcpy_htod_sync(p, data).expect("copy to device");
            p
        };
        DeviceField {
            base,
            origin_bytes: (f.origin() * std::mem::size_of::<T>()) as u64,
            strides: f.strides(),
        }
    }

    fn download<T: Real>(&self, f: &mut Field<T>) {
        // SAFETY: the allocation holds exactly the field's storage.
        unsafe { result::memcpy_dtoh_sync(f.as_mut_slice(), self.base).expect("copy to host") }
    }
}

impl Drop for DeviceField {
    fn drop(&mut self) {
        // SAFETY: allocated by `upload`, freed once.
        unsafe {
            let _ = result::free_sync(self.base);
        }
    }
}

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
        .filter(|f| f.access == kernels_gen::ir::Access::In)
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
    let grid = (
        n3[0].div_ceil(block.0 as usize) as u32,
        n3[1].div_ceil(block.1 as usize) as u32,
        n3[2].div_ceil(block.2 as usize) as u32,
    );
    let blocks = (grid.0 * grid.1 * grid.2) as usize;
    let size = std::mem::size_of::<T>();
    // SAFETY: plain allocations for the per-block reduction partials.
    let partials: Vec<sys::CUdeviceptr> = k
        .reductions
        .iter()
        .map(|_| unsafe { result::malloc_sync(blocks * size).expect("cuMemAlloc") })
        .collect();

    // Parameter values in calling-convention order: 8-byte slots, f32 scalars apart.
    let mut wide: Vec<u64> = n3.iter().map(|&x| x as u64).collect();
    let mut narrow: Vec<u32> = Vec::new();
    let mut order: Vec<(bool, usize)> = (0..3).map(|i| (true, i)).collect();
    let (mut next_in, mut next_out, mut next_s) = (0, 0, 0);
    for &(kind, i) in &k.param_order {
        match kind {
            ParamKind::Field => {
                let d = if k.fields[i as usize].access == kernels_gen::ir::Access::In {
                    next_in += 1;
                    &dev_in[next_in - 1]
                } else {
                    next_out += 1;
                    &dev_out[next_out - 1]
                };
                for v in [
                    d.base + d.origin_bytes,
                    d.strides[0] as u64,
                    d.strides[1] as u64,
                ] {
                    order.push((true, wide.len()));
                    wide.push(v);
                }
            }
            ParamKind::Scalar => {
                let v = scalars[next_s];
                next_s += 1;
                match k.scalars[i as usize].ty.concrete(precision::<T>()) {
                    Ty::F32 => {
                        order.push((false, narrow.len()));
                        narrow.push((v as f32).to_bits());
                    }
                    Ty::Bool => {
                        order.push((false, narrow.len()));
                        narrow.push((v != 0.0) as u32);
                    }
                    Ty::Int => {
                        order.push((true, wide.len()));
                        wide.push(v as i64 as u64);
                    }
                    _ => {
                        order.push((true, wide.len()));
                        wide.push(v.to_bits());
                    }
                }
            }
            ParamKind::Reduction => {
                order.push((true, wide.len()));
                wide.push(partials[i as usize]);
            }
        }
    }
    let mut params: Vec<*mut c_void> = order
        .iter()
        .map(|&(is_wide, j)| {
            if is_wide {
                &mut wide[j] as *mut u64 as *mut c_void
            } else {
                &mut narrow[j] as *mut u32 as *mut c_void
            }
        })
        .collect();

    // SAFETY: the PTX is NUL-terminated text; the parameters match the entry's signature
    // (the calling convention of kernels_gen::llvm) and point at live device memory.
    unsafe {
        let image = CString::new(ptx).expect("PTX has no NUL");
        let module = result::module::load_data(image.as_ptr() as *const c_void)
            .unwrap_or_else(|e| panic!("{name}: the driver rejected the PTX: {e:?}"));
        let func = result::module::get_function(module, CString::new(entry).unwrap())
            .unwrap_or_else(|e| panic!("{name}: no entry {entry}: {e:?}"));
        result::launch_kernel(func, grid, block, 0, std::ptr::null_mut(), &mut params)
            .unwrap_or_else(|e| panic!("{name}: launch failed: {e:?}"));
        result::ctx::synchronize().unwrap_or_else(|e| panic!("{name}: kernel failed: {e:?}"));
        result::module::unload(module).expect("unload");
    }
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
    for (red, &p) in k.reductions.iter().zip(&partials) {
        let mut host = vec![T::zero(); blocks];
        // SAFETY: `p` holds `blocks` elements written by the kernel.
        unsafe {
            result::memcpy_dtoh_sync(&mut host, p).expect("copy partials");
            let _ = result::free_sync(p);
        }
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
