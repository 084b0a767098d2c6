//! Texture objects: a 2D grid of `f32` samples in a CUDA array, read by kernels through the
//! texture units with hardware bilinear filtering (what `g.sample(x, y)` compiles to in the
//! texture variant of a kernel's PTX).

use crate::cuda::driver::{cuda_error, Device};
use crate::cuda::Cuda;
use crate::Error;
use cudarc::driver::sys;
use std::sync::Arc;

/// A texture object over a CUDA array of `nx x ny` `f32` samples: unnormalised
/// coordinates, linear filtering, clamped at the edges. Destroyed when dropped.
pub(crate) struct Texture {
    device: Arc<Device>,
    array: sys::CUarray,
    /// The texture object's handle, a kernel parameter.
    pub object: sys::CUtexObject,
}

// SAFETY: the handles are plain driver handles, usable from any thread once the device's
// context is current (which every use makes it).
unsafe impl Send for Texture {}
unsafe impl Sync for Texture {}

impl std::fmt::Debug for Texture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Texture({} on {:?})", self.object, self.device)
    }
}

impl Texture {
    /// A texture holding `samples` (`nx * ny` values, row by row) on `cuda`'s device.
    pub fn new(cuda: &Cuda, nx: usize, ny: usize, samples: &[f32]) -> Result<Texture, Error> {
        assert_eq!(samples.len(), nx * ny, "checked by SampledGrid");
        let device = cuda.stream().device.clone();
        device.bind()?;
        let check = |op: &str, r: sys::CUresult| {
            r.result()
                .map_err(|e| cuda_error(format!("{op} for a texture of {nx} x {ny} samples"), e))
        };
        let descriptor = sys::CUDA_ARRAY_DESCRIPTOR {
            Width: nx,
            Height: ny,
            Format: sys::CUarray_format::CU_AD_FORMAT_FLOAT,
            NumChannels: 1,
        };
        let mut array: sys::CUarray = std::ptr::null_mut();
        // SAFETY: plain driver calls on the current context with valid descriptors; the
        // copy reads `samples`, which holds `nx * ny` values, and completes before
        // `cuMemcpy2D` returns.
        unsafe {
            check(
                "creating the CUDA array",
                sys::cuArrayCreate_v2(&mut array, &descriptor),
            )?;
            let mut texture = Texture {
                device,
                array,
                object: 0,
            };
            // (Not zero-initialised: the memory-type enums have no zero value.)
            let copy = sys::CUDA_MEMCPY2D {
                srcXInBytes: 0,
                srcY: 0,
                srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
                srcHost: samples.as_ptr().cast(),
                srcDevice: 0,
                srcArray: std::ptr::null_mut(),
                srcPitch: nx * 4,
                dstXInBytes: 0,
                dstY: 0,
                dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
                dstHost: std::ptr::null_mut(),
                dstDevice: 0,
                dstArray: array,
                dstPitch: 0,
                WidthInBytes: nx * 4,
                Height: ny,
            };
            check("copying the samples", sys::cuMemcpy2D_v2(&copy))?;
            let mut resource: sys::CUDA_RESOURCE_DESC = std::mem::zeroed();
            resource.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
            resource.res.array.hArray = array;
            let mut sampling: sys::CUDA_TEXTURE_DESC = std::mem::zeroed();
            sampling.addressMode = [sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3];
            sampling.filterMode = sys::CUfilter_mode::CU_TR_FILTER_MODE_LINEAR;
            check(
                "creating the texture object",
                sys::cuTexObjectCreate(&mut texture.object, &resource, &sampling, std::ptr::null()),
            )?;
            Ok(texture)
        }
    }
}

impl Drop for Texture {
    fn drop(&mut self) {
        // Errors cannot be reported from a drop; the context outlives the program's use.
        // SAFETY: the handles were created by `new` and are destroyed once.
        self.device.release(|| unsafe {
            if self.object != 0 {
                let _ = sys::cuTexObjectDestroy(self.object);
            }
            let _ = sys::cuArrayDestroy(self.array);
        });
    }
}
