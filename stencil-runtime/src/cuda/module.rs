//! Loading embedded code through the driver and finding kernel entries, each once per
//! device. Where the build assembled a kernel's PTX for the device's architecture
//! ([`crate::cuda::Sass`], `STENCIL_SASS`) that cubin is loaded, whole, with nothing to
//! compile. Otherwise each tile variant a program launches is loaded as a module of its
//! own, cut from the kernel's PTX ([`only_entry`]), so that the driver's JIT compiles only
//! the variants in use.

use crate::cuda::driver::{describe, Device};
use crate::cuda::launch::{Ptx, Sass};
use crate::Error;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::OnceLock;
use stencil_ptx::{for_dependent_launch, is_cubin, only_entry};

/// Entry points already loaded on one device (each in a module of its own, or from a
/// kernel's SASS module), keyed by the hash of the kernel's PTX text and the tile variant:
/// vector width and points per thread.
#[derive(Default)]
pub(crate) struct ModuleCache {
    functions: HashMap<(u64, u32, u32), Function>,
    /// The SASS modules loaded, by the hash of the PTX they were assembled from (`None`
    /// where the load failed and the PTX is used instead).
    sass: HashMap<u64, Option<sys::CUmodule>>,
}

/// A kernel entry ready to launch.
#[derive(Clone, Copy)]
pub(crate) struct Function {
    /// The driver's handle.
    pub raw: sys::CUfunction,
    /// Whether the entry waits for the grids it depends on
    /// ([`for_dependent_launch`]), so that it may be launched before they finish.
    pub waits: bool,
}

/// Environment variable that, when set, makes every load print (to standard error) its
/// size and time: an entry's PTX and the driver's compile of it, or a kernel's SASS
/// module: what a first launch pays for its code.
pub const LOG_LOADS_ENV: &str = "STENCIL_LOG_LOADS";

/// Environment variable: `1` makes devices compile kernels' PTX even where the build
/// embedded SASS for them (to compare the two).
pub const PTX_ONLY_ENV: &str = "STENCIL_PTX_ONLY";

/// Environment variable for experiments with occupancy: a number of registers per thread
/// (16 to 255) that the driver's compile of PTX may use at most (its
/// `CU_JIT_MAX_REGISTERS`). SASS built ahead of time is not recompiled, so set
/// [`PTX_ONLY_ENV`] too. Unset, the compiler chooses, as by default.
pub const MAX_REGISTERS_ENV: &str = "STENCIL_MAX_REGISTERS";

/// The register cap [`MAX_REGISTERS_ENV`] asks for, read once; a value that is not a
/// number from 16 to 255 is an error naming it.
fn max_registers() -> Result<Option<u32>, Error> {
    static CAP: OnceLock<Result<Option<u32>, String>> = OnceLock::new();
    let cap = CAP.get_or_init(|| match std::env::var(MAX_REGISTERS_ENV) {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(n) if (16..=255).contains(&n) => Ok(Some(n)),
            _ => Err(format!(
                "{MAX_REGISTERS_ENV}={v} is not a number of registers from 16 to 255; give one, or unset it"
            )),
        },
    });
    cap.clone().map_err(Error::Backend)
}

// SAFETY: function handles stay valid for the process (modules are never unloaded) and
// may be launched from any thread with the context current.
unsafe impl Send for Function {}

impl Function {
    /// The most threads a block of this entry may have (fewer than 1024 where its
    /// registers run out first). Needs the device's context current.
    pub fn max_threads(&self) -> Result<u32, Error> {
        let mut v = 0i32;
        // SAFETY: `raw` is a loaded entry; the attribute is an int.
        unsafe {
            sys::cuFuncGetAttribute(
                &mut v,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                self.raw,
            )
        }
        .result()
        .map_err(|e| crate::cuda::driver::cuda_error("reading an entry's block limit", e))?;
        Ok(v.max(0) as u32)
    }
}

/// The entry of the PTX module `ptx` of kernel `kernel` whose threads compute `vector`
/// points along axis 0 times `points` along the last axis, on `device`; the entry is
/// loaded on first use: from the kernel's SASS for the device's architecture if it has
/// some (the whole module, once), else as a PTX module holding only it.
pub(crate) fn function(
    device: &Device,
    kernel: &str,
    ptx: &Ptx,
    vector: u32,
    points: u32,
) -> Result<Function, Error> {
    let key = (ptx.hash, vector, points);
    let mut cache = device.modules.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&f) = cache.functions.get(&key) {
        return Ok(f);
    }
    let entry = entry_name(ptx.entry, vector, points);
    device.bind()?;
    let log = std::env::var_os(LOG_LOADS_ENV).is_some();
    let sass = match uses_sass(device, ptx) {
        Some(s) => match cache.sass.get(&ptx.hash) {
            Some(&loaded) => loaded.map(|m| (m, s.dependent)),
            None => {
                let started = std::time::Instant::now();
                let loaded = match load_sass(kernel, s) {
                    Ok(m) => {
                        if log {
                            eprintln!(
                                "stencil-runtime: loaded {kernel}'s SASS for sm_{} ({} bytes) in {:.1} ms",
                                s.arch,
                                s.image.len(),
                                started.elapsed().as_secs_f64() * 1e3
                            );
                        }
                        Some(m)
                    }
                    Err(cause) => {
                        // Correct code is still at hand: say so (once), and compile the PTX.
                        eprintln!(
                            "stencil-runtime: kernel `{kernel}`: its SASS for sm_{} did not load ({cause}); compiling its PTX instead",
                            s.arch
                        );
                        None
                    }
                };
                cache.sass.insert(ptx.hash, loaded);
                loaded.map(|m| (m, s.dependent))
            }
        },
        None => None,
    };
    let (module, waits) = match sass {
        Some(loaded) => loaded,
        None => {
            // A text without the entry is loaded whole: the driver then names what is
            // missing.
            let own = only_entry(ptx.text, &entry);
            let text = own.as_deref().unwrap_or(ptx.text);
            let specialised = device
                .dependent_launch
                .then(|| for_dependent_launch(text))
                .flatten();
            let text = specialised.as_deref().unwrap_or(text);
            let image = CString::new(text).map_err(|_| Error::PtxLoad {
                kernel: kernel.into(),
                cause: "the PTX text contains a NUL byte".into(),
                log: String::new(),
            })?;
            let started = std::time::Instant::now();
            let module = load(kernel, image.as_bytes_with_nul())?;
            if log {
                eprintln!(
                    "stencil-runtime: loaded {entry} ({} bytes of PTX) in {:.1} ms",
                    text.len(),
                    started.elapsed().as_secs_f64() * 1e3
                );
            }
            (module, specialised.is_some())
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
            cause: format!("no entry `{entry}` in its code: {}", describe(e)),
            log: String::new(),
        })?;
    if log {
        let mut registers = 0i32;
        // SAFETY: `f` is a function of a loaded module; the attribute is an int.
        let r = unsafe {
            sys::cuFuncGetAttribute(
                &mut registers,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS,
                f,
            )
        };
        if r.result().is_ok() {
            eprintln!("stencil-runtime: {entry} uses {registers} registers per thread");
        }
    }
    let f = Function { raw: f, waits };
    cache.functions.insert(key, f);
    Ok(f)
}

/// The code assembled ahead of time that `ptx` carries for `device`'s architecture, unless
/// [`PTX_ONLY_ENV`] is `1`.
pub(crate) fn uses_sass(device: &Device, ptx: &Ptx) -> Option<&'static Sass> {
    static PTX_ONLY: OnceLock<bool> = OnceLock::new();
    let ptx_only = *PTX_ONLY.get_or_init(|| std::env::var(PTX_ONLY_ENV).is_ok_and(|v| v == "1"));
    ptx.sass_for(device.arch).filter(|_| !ptx_only)
}

/// Loads a kernel's SASS (whole: every entry), after checking that it is a whole cubin,
/// from a copy on an 8-byte boundary; the cause of a failure otherwise.
fn load_sass(kernel: &str, sass: &Sass) -> Result<sys::CUmodule, String> {
    if !is_cubin(sass.image) {
        return Err("not a whole cubin".into());
    }
    let mut aligned = vec![0u64; sass.image.len().div_ceil(8)];
    // SAFETY: `aligned` holds at least `image.len()` bytes; plain bytes into `u64`s.
    unsafe {
        std::ptr::copy_nonoverlapping(
            sass.image.as_ptr(),
            aligned.as_mut_ptr() as *mut u8,
            sass.image.len(),
        );
    }
    // SAFETY: the bytes were just checked to be a CUDA ELF image whose headers and
    // sections lie inside them (`is_cubin`), so the driver reads no further.
    let bytes =
        unsafe { std::slice::from_raw_parts(aligned.as_ptr() as *const u8, sass.image.len()) };
    load(kernel, bytes).map_err(|e| match e {
        Error::PtxLoad { cause, log, .. } => format!("{cause}{log}"),
        other => other.to_string(),
    })
}

/// Loads a module image (NUL-terminated PTX text, or a checked cubin), returning the
/// driver's error log with any failure.
fn load(kernel: &str, image: &[u8]) -> Result<sys::CUmodule, Error> {
    const LOG: usize = 16 * 1024;
    let mut log = vec![0u8; LOG];
    let mut options = vec![
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = vec![log.as_mut_ptr() as *mut c_void, LOG as *mut c_void];
    if let Some(cap) = max_registers()? {
        options.push(sys::CUjit_option::CU_JIT_MAX_REGISTERS);
        values.push(cap as usize as *mut c_void);
    }
    let mut module = std::ptr::null_mut();
    // SAFETY: NUL-terminated PTX, or a cubin checked to lie within its bytes; the option
    // arrays have matching lengths and the log buffer outlives the call.
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
    let tag = |letter: char, n: u32| {
        if n > 1 {
            format!("_{letter}{n}")
        } else {
            String::new()
        }
    };
    format!("{base}{}{}", tag('v', vector), tag('p', points))
}

#[cfg(test)]
mod tests {
    use super::entry_name;

    #[test]
    fn variant_entries_are_named_as_the_compiler_names_them() {
        assert_eq!(entry_name("jacobi_f32", 1, 1), "jacobi_f32");
        assert_eq!(entry_name("jacobi_f32", 4, 2), "jacobi_f32_v4_p2");
        assert_eq!(entry_name("jacobi_f64", 1, 4), "jacobi_f64_p4");
        assert_eq!(entry_name("jacobi_f64", 2, 1), "jacobi_f64_v2");
    }
}
