//! Minimal CUDA driver plumbing for tests and benchmarks: device set-up, device copies of
//! fields, and launching an embedded PTX entry with the compiler's calling convention.
//! (The runtime's own CUDA backend is separate work; this is test scaffolding.)

use cudarc::driver::{result, sys};
use kernels_gen::ir::{Access, Kernel, ParamKind, Ty};
use kernels_gen::Precision;
use std::ffi::{c_void, CString};
use stencil_runtime::{Field, Real};

/// Sets up device 0 and makes its primary context current on this thread; returns the
/// device's name, or why there is no usable GPU.
pub fn device() -> Result<String, String> {
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

/// Device memory, freed on drop.
pub struct DeviceBuffer {
    /// Device address.
    pub ptr: sys::CUdeviceptr,
    /// Size in bytes.
    pub bytes: usize,
}

impl DeviceBuffer {
    /// Allocates `bytes` bytes.
    pub fn new(bytes: usize) -> DeviceBuffer {
        // SAFETY: a plain allocation.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)).expect("cuMemAlloc") };
        DeviceBuffer { ptr, bytes }
    }

    /// Copies the whole buffer to `dst` (which must have its size).
    pub fn read<T: Copy>(&self, dst: &mut [T]) {
        assert_eq!(std::mem::size_of_val(dst), self.bytes);
        // SAFETY: sizes checked above.
        unsafe { result::memcpy_dtoh_sync(dst, self.ptr).expect("copy to host") }
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, freed once.
        unsafe {
            let _ = result::free_sync(self.ptr);
        }
    }
}

/// A device copy of a field's whole storage (halo included).
pub struct DeviceField {
    /// The storage.
    pub buf: DeviceBuffer,
    origin_bytes: u64,
    strides: [usize; 2],
}

impl DeviceField {
    /// Copies `f` to the device.
    pub fn upload<T: Real>(f: &Field<T>) -> DeviceField {
        let data = f.as_slice().expect("a host field");
        let buf = DeviceBuffer::new(std::mem::size_of_val(data));
        // SAFETY: the buffer has exactly `data`'s size.
        unsafe { result::memcpy_htod_sync(buf.ptr, data).expect("copy to device") };
        DeviceField {
            buf,
            origin_bytes: (f.origin() * std::mem::size_of::<T>()) as u64,
            strides: f.strides(),
        }
    }

    /// Copies the device storage back into `f` (same shape as uploaded).
    pub fn download<T: Real>(&self, f: &mut Field<T>) {
        self.buf.read(f.as_mut_slice().expect("a host field"));
    }
}

/// Kernel parameters in the calling convention of `kernels_gen::llvm`, kept alive while
/// the driver reads them.
pub struct Params {
    wide: Vec<u64>,
    narrow: Vec<u32>,
    order: Vec<(bool, usize)>,
}

impl Params {
    /// Parameters for `k` at precision `p` over domain `n3`: `inputs` and `outputs` in
    /// declaration order, scalars as f64, and one partials buffer per reduction.
    pub fn new(
        k: &Kernel,
        p: Precision,
        n3: [usize; 3],
        inputs: &[&DeviceField],
        outputs: &[&DeviceField],
        scalars: &[f64],
        partials: &[&DeviceBuffer],
    ) -> Params {
        let mut ps = Params {
            wide: vec![],
            narrow: vec![],
            order: vec![],
        };
        for x in n3 {
            ps.push_wide(x as u64);
        }
        let (mut next_in, mut next_out, mut next_s) = (0, 0, 0);
        for &(kind, i) in &k.param_order {
            match kind {
                ParamKind::Field => {
                    let d = if k.fields[i as usize].access == Access::In {
                        next_in += 1;
                        inputs[next_in - 1]
                    } else {
                        next_out += 1;
                        outputs[next_out - 1]
                    };
                    ps.push_wide(d.buf.ptr + d.origin_bytes);
                    ps.push_wide(d.strides[0] as u64);
                    ps.push_wide(d.strides[1] as u64);
                }
                ParamKind::Scalar => {
                    let v = scalars[next_s];
                    next_s += 1;
                    match k.scalars[i as usize].ty.concrete(p) {
                        Ty::F32 => ps.push_narrow((v as f32).to_bits()),
                        Ty::Bool => ps.push_narrow((v != 0.0) as u32),
                        Ty::Int => ps.push_wide(v as i64 as u64),
                        _ => ps.push_wide(v.to_bits()),
                    }
                }
                ParamKind::Reduction => ps.push_wide(partials[i as usize].ptr),
            }
        }
        ps
    }

    fn push_wide(&mut self, v: u64) {
        self.order.push((true, self.wide.len()));
        self.wide.push(v);
    }

    fn push_narrow(&mut self, v: u32) {
        self.order.push((false, self.narrow.len()));
        self.narrow.push(v);
    }

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

/// A loaded PTX module and one of its entries.
pub struct Entry {
    module: sys::CUmodule,
    func: sys::CUfunction,
}

impl Entry {
    /// Loads `ptx` (JIT-compiled by the driver for this GPU) and finds `entry`.
    pub fn load(ptx: &str, entry: &str) -> Result<Entry, String> {
        let image = CString::new(ptx).map_err(|e| e.to_string())?;
        // SAFETY: a NUL-terminated PTX text.
        unsafe {
            let module = result::module::load_data(image.as_ptr() as *const c_void)
                .map_err(|e| format!("the driver rejected the PTX: {e:?}"))?;
            let func = result::module::get_function(module, CString::new(entry).unwrap())
                .map_err(|e| format!("no entry {entry}: {e:?}"))?;
            Ok(Entry { module, func })
        }
    }

    /// Launches on the default stream (asynchronously).
    ///
    /// # Safety
    /// `params` must match the entry's signature and point at live device memory that
    /// covers the domain plus the kernel's halo.
    pub unsafe fn launch(
        &self,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        params: &mut Params,
    ) -> Result<(), String> {
        let mut ptrs = params.pointers();
        result::launch_kernel(self.func, grid, block, 0, std::ptr::null_mut(), &mut ptrs)
            .map_err(|e| format!("launch failed: {e:?}"))
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        // SAFETY: loaded in `load`, unloaded once.
        unsafe {
            let _ = result::module::unload(self.module);
        }
    }
}

/// Waits for the device; the error of any failed kernel surfaces here.
pub fn synchronize() -> Result<(), String> {
    result::ctx::synchronize().map_err(|e| format!("kernel failed: {e:?}"))
}

/// The launch grid that covers `n3` with blocks of shape `block`.
pub fn grid_for(n3: [usize; 3], block: (u32, u32, u32)) -> (u32, u32, u32) {
    (
        n3[0].div_ceil(block.0 as usize) as u32,
        n3[1].div_ceil(block.1 as usize) as u32,
        n3[2].div_ceil(block.2 as usize) as u32,
    )
}
