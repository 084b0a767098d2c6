//! The driver call of a launch: parameters kept alive in the entry's calling convention,
//! and the launch itself (as a programmatic dependent where the device allows it).

use super::{Arg, Cuda};
use crate::cuda::driver::describe;
use crate::cuda::module::Function;
use crate::Error;
use cudarc::driver::{result, sys};
use std::ffi::c_void;

/// Launch parameters kept alive while the driver reads them.
#[derive(Default)]
pub(super) struct Params {
    wide: Vec<u64>,
    narrow: Vec<u32>,
    order: Vec<(bool, usize)>,
}

impl Params {
    /// Appends one parameter.
    pub(super) fn push(&mut self, a: Arg) {
        match a {
            Arg::Wide(v) => {
                self.order.push((true, self.wide.len()));
                self.wide.push(v);
            }
            Arg::Narrow(v) => {
                self.order.push((false, self.narrow.len()));
                self.narrow.push(v);
            }
            Arg::Partials(_) => unreachable!("resolved before pushing"),
        }
    }

    /// The parameters' addresses, as the driver takes them.
    fn pointers(&mut self) -> Vec<*mut c_void> {
        let (wide, narrow) = (&mut self.wide, &mut self.narrow);
        self.order
            .iter()
            .map(|&(w, j)| {
                if w {
                    &mut wide[j] as *mut u64 as *mut c_void
                } else {
                    &mut narrow[j] as *mut u32 as *mut c_void
                }
            })
            .collect()
    }
}

/// Queues `f` on the backend's stream.
///
/// # Safety
/// `params` must match the entry's parameter list, and point at live device memory large
/// enough for every access the kernel makes over the grid.
pub(super) unsafe fn launch_raw(
    cuda: &Cuda,
    kernel: &str,
    f: Function,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    params: &mut Params,
) -> Result<(), Error> {
    let mut ptrs = params.pointers();
    let launched = if f.waits && cuda.dependent_launches() {
        // Programmatic dependent launch: the grid may start while the kernel before it
        // on the stream finishes; its entry waits for that kernel's memory first.
        let mut attribute = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: sys::CUlaunchAttributeValue {
                programmaticStreamSerializationAllowed: 1,
            },
        };
        let config = sys::CUlaunchConfig {
            gridDimX: grid[0],
            gridDimY: grid[1],
            gridDimZ: grid[2],
            blockDimX: block[0],
            blockDimY: block[1],
            blockDimZ: block[2],
            sharedMemBytes: shared,
            hStream: cuda.raw_stream(),
            attrs: &mut attribute,
            numAttrs: 1,
        };
        sys::cuLaunchKernelEx(&config, f.raw, ptrs.as_mut_ptr(), std::ptr::null_mut()).result()
    } else {
        result::launch_kernel(
            f.raw,
            (grid[0], grid[1], grid[2]),
            (block[0], block[1], block[2]),
            shared,
            cuda.raw_stream(),
            &mut ptrs,
        )
    };
    launched.map_err(|e| Error::Launch {
        kernel: kernel.to_string(),
        cause: format!(
            "the launch (grid {grid:?}, block {block:?}) failed: {}",
            describe(e)
        ),
    })
}
