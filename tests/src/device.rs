//! The CUDA device GPU tests run on, or the printed reason they skip: every GPU test
//! starts with `let Some(gpu) = gpu_or_skip() else { return };`.

use stencil_runtime::{Backend, Cuda};

/// Device 0, or `None` after printing why there is none.
pub fn cuda_or_skip() -> Option<Cuda> {
    match Cuda::new(0) {
        Ok(c) => Some(c),
        Err(why) => {
            println!("SKIPPED: this test needs a CUDA device: {why}");
            None
        }
    }
}

/// The backend of device 0, or `None` after printing why there is none.
pub fn gpu_or_skip() -> Option<Backend> {
    cuda_or_skip().map(Backend::Cuda)
}
