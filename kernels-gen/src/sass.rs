//! SASS ahead of time: a kernel's PTX assembled at build time by `ptxas` for the GPU
//! architectures named in `STENCIL_SASS` (`sm_90`, or a list: `sm_80,sm_90`), and embedded
//! beside the PTX. On a device of one of those architectures the run time loads the SASS
//! (no compilation: a first launch pays microseconds for its code instead of the driver's
//! PTX compiler, tens of milliseconds per entry); on any other it compiles the PTX as
//! without it. The binary still needs only the driver; the build needs ptxas (the CUDA
//! toolkit's, or `pip install nvidia-cuda-nvcc-cu12`), found through `STENCIL_PTXAS`,
//! `PTXAS`, `PATH` or that package. Unset, the default, nothing changes: PTX only, and no
//! ptxas needed.
//!
//! For an architecture with programmatic dependent launch (9.0 and later) the SASS is
//! assembled from the PTX with its grid dependency points made waits
//! ([`stencil_ptx::for_dependent_launch`]), as the run time would hand the driver.
//!
//! Cargo re-expands every kernel when `STENCIL_SASS` or `STENCIL_PTXAS` changes (the build
//! script bakes them in), not when the ptxas found on `PATH` is upgraded: the cache is
//! keyed by ptxas's version, so the next expansion uses the new one, but kernels already
//! built keep their cubins until something re-expands them (`cargo clean -p` the crate).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The architectures `STENCIL_SASS` named when this compiler was built.
const REQUESTED: &str = env!("STENCIL_SASS_AT_BUILD");

/// `STENCIL_PTXAS` when this compiler was built.
const PTXAS_AT_BUILD: &str = env!("STENCIL_PTXAS_AT_BUILD");

/// The oldest architecture the generated PTX targets (`llvm::PTX_ARCH`).
const OLDEST: u32 = 80;

/// A kernel's code assembled for one architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sass {
    /// The architecture as compute capability times ten (`90` for `sm_90`).
    pub arch: u32,
    /// Whether it was assembled with its grid dependency points made waits: its entries
    /// may be launched as programmatic dependents.
    pub dependent: bool,
    /// The cubin, as `ptxas` wrote it.
    pub image: Vec<u8>,
}

/// Why SASS could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SassError {
    /// `STENCIL_SASS` names something that is not an architecture this compiler targets.
    #[error("STENCIL_SASS names `{0}`, which is not a GPU architecture of compute capability 8.0 or later: give one or several, such as `sm_90` or `sm_80,sm_90`, or unset it for PTX only")]
    BadArch(String),
    /// No ptxas was found.
    #[error("STENCIL_SASS={0} asks for SASS, but no ptxas was found: put the CUDA toolkit's ptxas on PATH or name it in STENCIL_PTXAS (`pip install nvidia-cuda-nvcc-cu12` brings one), or unset STENCIL_SASS for PTX only")]
    NoPtxas(String),
    /// The ptxas named or found does not run.
    #[error("STENCIL_SASS asks for SASS, but `{path} --version` failed: {cause}; name a working ptxas in STENCIL_PTXAS, or unset STENCIL_SASS for PTX only")]
    PtxasDoesNotRun {
        /// The ptxas tried.
        path: String,
        /// Why it did not run.
        cause: String,
    },
    /// ptxas ran and failed, or could not run.
    #[error("ptxas could not assemble the kernel's PTX for sm_{arch}: {log}")]
    Ptxas {
        /// The architecture.
        arch: u32,
        /// What ptxas said.
        log: String,
    },
}

/// The architectures a list such as `sm_80, sm_90` (or `80,90`) names, in order, each
/// once; an empty list names none.
pub fn parse_archs(list: &str) -> Result<Vec<u32>, SassError> {
    let mut archs = Vec::new();
    for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let digits = word.strip_prefix("sm_").unwrap_or(word);
        let arch: u32 = digits
            .parse()
            .ok()
            .filter(|&a| (OLDEST..1000).contains(&a))
            .ok_or_else(|| SassError::BadArch(word.to_string()))?;
        if !archs.contains(&arch) {
            archs.push(arch);
        }
    }
    Ok(archs)
}

/// The architectures this build asked SASS for (`STENCIL_SASS`); empty by default.
pub fn requested() -> Result<Vec<u32>, SassError> {
    parse_archs(REQUESTED)
}

/// Where ptxas is: `STENCIL_PTXAS` (as this compiler was built, then now), `PTXAS`, `ptxas`
/// on `PATH`, or the `nvidia-cuda-nvcc-cu12` package's.
pub fn find_ptxas() -> Option<PathBuf> {
    let named = [
        Some(PTXAS_AT_BUILD.to_string()),
        std::env::var("STENCIL_PTXAS").ok(),
        std::env::var("PTXAS").ok(),
    ];
    if let Some(p) = named.into_iter().flatten().find(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if Command::new("ptxas")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some(PathBuf::from("ptxas"));
    }
    let out = Command::new("python3")
        .args(["-c", "import nvidia.cuda_nvcc as m, os; print(os.path.join(list(m.__path__)[0], 'bin', 'ptxas'))"])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    p.is_file().then_some(p)
}

/// ptxas and its version line, found once per process.
fn ptxas() -> Result<&'static (PathBuf, String), SassError> {
    static FOUND: OnceLock<Result<(PathBuf, String), (String, String)>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let path = find_ptxas().ok_or_else(|| (String::new(), String::new()))?;
        let shown = path.display().to_string();
        let out = Command::new(&path)
            .arg("--version")
            .output()
            .map_err(|e| (shown.clone(), e.to_string()))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err((shown, format!("{} ({said})", out.status)));
        }
        let version = String::from_utf8_lossy(&out.stdout);
        let last = version.lines().last().unwrap_or_default().to_string();
        Ok((path, last))
    });
    found.as_ref().map_err(|(path, cause)| {
        if path.is_empty() {
            SassError::NoPtxas(REQUESTED.to_string())
        } else {
            SassError::PtxasDoesNotRun {
                path: path.clone(),
                cause: cause.clone(),
            }
        }
    })
}

/// The PTX module `ptx` assembled for every architecture this build asked for (none by
/// default), from the disk cache where it holds them.
pub fn for_requested(ptx: &str) -> Result<Vec<Sass>, SassError> {
    let archs = requested()?;
    if archs.is_empty() {
        return Ok(Vec::new());
    }
    let (path, version) = ptxas()?;
    archs
        .into_iter()
        .map(|arch| assembled(path, version, ptx, arch))
        .collect()
}

/// `ptx` assembled for `arch` by the ptxas at `path` (whose version line is `version`).
fn assembled(path: &Path, version: &str, ptx: &str, arch: u32) -> Result<Sass, SassError> {
    let waiting = (arch >= 90)
        .then(|| stencil_ptx::for_dependent_launch(ptx))
        .flatten();
    let text = waiting.as_deref().unwrap_or(ptx);
    // Keyed by what decides the cubin: ptxas's version, its arguments and the text.
    let key = format!("sass\n{version}\n{:?}\n{text}", ptxas_args(arch));
    let image = crate::cache::cached(&key, "cubin", stencil_ptx::is_cubin, || {
        run_ptxas(path, text, arch)
    })?;
    Ok(Sass {
        arch,
        dependent: waiting.is_some(),
        image,
    })
}

/// The arguments of a ptxas run for `arch`, beside its input and output.
fn ptxas_args(arch: u32) -> [String; 2] {
    ["-arch".into(), format!("sm_{arch}")]
}

/// One run of ptxas on `text` for `arch`, in a scratch folder of its own.
fn run_ptxas(path: &Path, text: &str, arch: u32) -> Result<Vec<u8>, SassError> {
    let failed = |log: String| SassError::Ptxas { arch, log };
    let dir = scratch_dir().map_err(|e| failed(format!("no scratch folder: {e}")))?;
    let (input, output) = (dir.join("kernel.ptx"), dir.join("kernel.cubin"));
    let result = std::fs::write(&input, text)
        .map_err(|e| failed(format!("cannot write the PTX: {e}")))
        .and_then(|()| {
            Command::new(path)
                .args(ptxas_args(arch))
                .arg("-o")
                .arg(&output)
                .arg(&input)
                .output()
                .map_err(|e| failed(format!("cannot run {}: {e}", path.display())))
        })
        .and_then(|out| {
            if out.status.success() {
                std::fs::read(&output).map_err(|e| failed(format!("no cubin written: {e}")))
            } else {
                Err(failed(
                    String::from_utf8_lossy(&out.stderr).trim().to_string(),
                ))
            }
        });
    let _ = std::fs::remove_dir_all(&dir);
    let image = result?;
    if stencil_ptx::is_cubin(&image) {
        Ok(image)
    } else {
        Err(failed(format!(
            "{} wrote something that is not a whole cubin",
            path.display()
        )))
    }
}

/// A new folder of this run's own in the temporary folder (several rustc processes, in
/// containers of their own perhaps, may assemble at once).
fn scratch_dir() -> std::io::Result<PathBuf> {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    loop {
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("stencil-sass-{}-{run}-{nanos}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            other => return other.map(|()| dir),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_lists_parse_and_bad_ones_are_named() {
        assert_eq!(parse_archs("").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_archs("sm_90").unwrap(), vec![90]);
        assert_eq!(parse_archs(" sm_80 , 90,sm_80").unwrap(), vec![80, 90]);
        for bad in ["sm_75", "compute_90", "sm_9x", "hopper"] {
            let e = parse_archs(&format!("sm_90,{bad}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("`{bad}`")), "{e}");
        }
    }

    #[test]
    fn ptxas_assembles_a_module_into_a_cubin_and_dependency_points_into_waits() {
        let Ok((path, version)) = ptxas() else {
            println!("SKIPPED: no ptxas on PATH, in STENCIL_PTXAS/PTXAS or in the nvidia-cuda-nvcc-cu12 package");
            return;
        };
        let ptx = format!(
            ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n\t{}\n\tret;\n}}\n",
            stencil_ptx::GRID_DEPENDENCY_POINT
        );
        for arch in [80, 90] {
            let sass = assembled(path, version, &ptx, arch).unwrap();
            assert!(stencil_ptx::is_cubin(&sass.image), "a whole cubin");
            assert_eq!(sass.dependent, arch == 90);
        }
        let bad = run_ptxas(path, ".version 7.0\n.target sm_80\nnot ptx\n", 90).unwrap_err();
        assert!(bad.to_string().contains("sm_90"), "{bad}");
    }
}
