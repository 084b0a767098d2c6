//! Hand-written CUDA kernels, for the benchmarks that compare the generated ones with
//! them: loading an nvcc-built cubin (`benchmarks/cuda/build.sh`) and launching a kernel
//! of it with its arguments.

use super::R;
use cudarc::driver::{result, sys};
use std::ffi::{c_void, CString};
use std::path::Path;
use stencil_runtime::{Cuda, Precision};

/// The hand-written kernels, loaded from the nvcc-built cubin.
pub struct Hand {
    module: sys::CUmodule,
}

/// A launch argument of a hand-written kernel, each in its own 8-byte slot.
#[derive(Clone, Copy)]
pub enum Arg {
    /// A device pointer.
    Ptr(u64),
    /// A 32-bit integer.
    Int(i32),
    /// A real of the given precision.
    Real(f64, Precision),
}

impl Hand {
    /// The kernels of the cubin at `path`.
    pub fn load(path: &Path) -> R<Hand> {
        let image = std::fs::read(path)?;
        let mut module = std::ptr::null_mut();
        // SAFETY: a cubin image read whole from disk.
        unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr() as *const c_void) }
            .result()
            .map_err(|e| format!("cannot load {}: {e:?}", path.display()))?;
        Ok(Hand { module })
    }

    /// Launches kernel `name` over `grid` blocks of `block` threads with `args`.
    pub fn launch(
        &self,
        cuda: &Cuda,
        name: &str,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[Arg],
    ) -> R<()> {
        let cname = CString::new(name)?;
        // SAFETY: the module is loaded; the name is NUL-terminated.
        let f = unsafe { result::module::get_function(self.module, cname) }
            .map_err(|e| format!("no kernel {name} in the cubin: {e:?}"))?;
        let mut slots: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                Arg::Ptr(p) => p,
                Arg::Int(i) => i as u32 as u64,
                Arg::Real(v, Precision::F32) => (v as f32).to_bits() as u64,
                Arg::Real(v, Precision::F64) => v.to_bits(),
            })
            .collect();
        let mut ptrs: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: the caller passes the arguments of the kernel's signature in its .cu file (integers and
        // f32 sit in the low bytes of their slots, little-endian); the fields cover the
        // domain plus the halo.
        unsafe {
            result::launch_kernel(
                f,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                0,
                cuda.raw_stream(),
                &mut ptrs,
            )
        }
        .map_err(|e| format!("{name}: {e:?}"))?;
        Ok(())
    }
}
