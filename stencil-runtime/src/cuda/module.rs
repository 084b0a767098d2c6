//! Loading embedded PTX through the driver (which compiles it for the GPU at hand) and
//! finding kernel entries, each once per device.

use crate::cuda::driver::{describe, Device};
use crate::cuda::launch::Ptx;
use crate::Error;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ffi::{c_void, CString};

/// Modules and entry points already loaded on one device, keyed by the hash of the PTX
/// text (and, for entries, the tile variant: vector width and points per thread).
#[derive(Default)]
pub(crate) struct ModuleCache {
    modules: HashMap<u64, sys::CUmodule>,
    functions: HashMap<(u64, u32, u32), sys::CUfunction>,
}

/// A kernel entry ready to launch.
#[derive(Clone, Copy)]
pub(crate) struct Function(pub sys::CUfunction);

// SAFETY: function handles stay valid for the process (modules are never unloaded) and
// may be launched from any thread with the context current.
unsafe impl Send for Function {}

/// The entry of the PTX module `ptx` of kernel `kernel` whose threads compute `vector`
/// points along axis 0 times `points` along the last axis, on `device`; the module is
/// loaded on first use.
pub(crate) fn function(
    device: &Device,
    kernel: &str,
    ptx: &Ptx,
    vector: u32,
    points: u32,
) -> Result<Function, Error> {
    let key = ptx.hash;
    let mut cache = device.modules.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&f) = cache.functions.get(&(key, vector, points)) {
        return Ok(Function(f));
    }
    let entry = entry_name(ptx.entry, vector, points);
    device.bind()?;
    let module = match cache.modules.get(&key) {
        Some(&m) => m,
        None => {
            let m = load(kernel, ptx.text)?;
            cache.modules.insert(key, m);
            m
        }
    };
    let name = CString::new(entry.as_str()).map_err(|_| Error::PtxLoad {
        kernel: kernel.into(),
        cause: format!("entry name `{entry}` contains a NUL byte"),
        log: String::new(),
    })?;
    let mut f = std::ptr::null_mut();
    // SAFETY: `module` is loaded; `name` is NUL-terminated.
    unsafe { sys::cuModuleGetFunction(&mut f, module, name.as_ptr()) }
        .result()
        .map_err(|e| Error::PtxLoad {
            kernel: kernel.into(),
            cause: format!("no entry `{entry}` in its PTX: {}", describe(e)),
            log: String::new(),
        })?;
    cache.functions.insert((key, vector, points), f);
    Ok(Function(f))
}

/// Loads PTX text, returning the driver's JIT error log with any failure.
fn load(kernel: &str, ptx: &str) -> Result<sys::CUmodule, Error> {
    let image = CString::new(ptx).map_err(|_| Error::PtxLoad {
        kernel: kernel.into(),
        cause: "the PTX text contains a NUL byte".into(),
        log: String::new(),
    })?;
    const LOG: usize = 16 * 1024;
    let mut log = vec![0u8; LOG];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [log.as_mut_ptr() as *mut c_void, LOG as *mut c_void];
    let mut module = std::ptr::null_mut();
    // SAFETY: NUL-terminated PTX; the option arrays have matching lengths and the log
    // buffer outlives the call.
    let r = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr() as *const c_void,
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    r.result().map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let text = String::from_utf8_lossy(&log[..end]).trim().to_string();
        Error::PtxLoad {
            kernel: kernel.into(),
            cause: describe(e),
            log: if text.is_empty() {
                String::new()
            } else {
                format!("\n{text}")
            },
        }
    })?;
    Ok(module)
}

/// The name of a tile variant's entry: the one-point entry's name with `_v{vector}` and
/// `_p{points}` appended where they are above 1 (as `kernels_gen::llvm::variant_entry`).
fn entry_name(base: &str, vector: u32, points: u32) -> String {
    let mut name = base.to_string();
    if vector > 1 {
        name += &format!("_v{vector}");
    }
    if points > 1 {
        name += &format!("_p{points}");
    }
    name
}
