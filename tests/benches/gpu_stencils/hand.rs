//! The hand-written CUDA kernels of the GPU benchmark (`benchmarks/cuda/stencils.cu`):
//! loading the cubin, launching a kernel with its arguments, the block shapes and grids
//! they are timed with, and the fastest shape of a set.

use super::median_time;
use cudarc::driver::{result, sys};
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use stencil_runtime::cuda::{LaunchShape, Tiles};
use stencil_runtime::{Cuda, Precision, Real};
use stencil_tests::bench::R;

/// The hand-written kernels, loaded from the nvcc-built cubin.
pub(crate) struct Hand {
    module: sys::CUmodule,
}

/// A launch argument of a hand-written kernel, each in its own 8-byte slot.
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// A device pointer.
    Ptr(u64),
    /// A 32-bit integer.
    Int(i32),
    /// A real of the given precision.
    Real(f64, Precision),
}

impl Hand {
    /// The kernels of the cubin at `path`.
    pub(crate) fn load(path: &PathBuf) -> R<Hand> {
        let image = std::fs::read(path)?;
        let mut module = std::ptr::null_mut();
        // SAFETY: a cubin image read whole from disk.
        unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr() as *const c_void) }
            .result()
            .map_err(|e| format!("cannot load {}: {e:?}", path.display()))?;
        Ok(Hand { module })
    }

    /// Launches kernel `name` over `grid` blocks of `block` threads with `args`.
    pub(crate) fn launch(
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
        // SAFETY: the arguments match the kernel's signature in stencils.cu (integers and
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

    /// The fastest of `shapes` for `run(block)`; returns (seconds, shape).
    pub(crate) fn best(
        cuda: &Cuda,
        shapes: &[[u32; 3]],
        mut run: impl FnMut([u32; 3]) -> R<()>,
    ) -> R<(f64, [u32; 3])> {
        let mut best = (f64::INFINITY, shapes[0]);
        for &s in shapes {
            let t = median_time(cuda, || run(s))?;
            if t < best.0 {
                best = (t, s);
            }
        }
        Ok(best)
    }
}

/// The block shapes a hand-written kernel is timed with: the blocks the generated
/// kernels' full search tries for `dims` dimensions ([`LaunchShape::candidates`]).
pub(crate) fn hand_blocks(dims: usize) -> Vec<[u32; 3]> {
    LaunchShape::candidates(dims, Tiles::ONE, 1)
        .iter()
        .map(|s| s.block)
        .collect()
}

/// The grid of blocks `b` over domain `n`, one point per thread.
pub(crate) fn grid(n: &[usize], b: [u32; 3]) -> [u32; 3] {
    let mut g = [1u32; 3];
    for a in 0..n.len() {
        g[a] = n[a].div_ceil(b[a] as usize) as u32;
    }
    g
}

/// The points along the last axis per thread the tuned kernels exist for.
pub(crate) const TUNED_POINTS: [usize; 3] = [1, 2, 4];

/// Points along x per thread of a tuned kernel: one 16-byte vector.
pub(crate) fn vector_width<T: Real>() -> usize {
    16 / std::mem::size_of::<T>()
}

/// The grid of a tuned kernel over domain `n` with block `b`, `points` along the last
/// axis per thread.
pub(crate) fn tuned_grid<T: Real>(n: &[usize], b: [u32; 3], points: usize) -> [u32; 3] {
    let mut g = grid(n, b);
    g[0] = n[0].div_ceil(b[0] as usize * vector_width::<T>()) as u32;
    let last = n.len() - 1;
    g[last] = n[last].div_ceil(b[last] as usize * points) as u32;
    g
}
