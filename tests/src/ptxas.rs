//! `ptxas`, to prove that generated PTX assembles without a GPU: where it is, and one
//! assembly.
//!
//! It comes from the PyPI package `nvidia-cuda-nvcc-cu12`; it is found through
//! `STENCIL_PTXAS` or `PTXAS`, on `PATH`, or in that package's folder. Callers skip with a printed reason when it is
//! missing, unless `STENCIL_REQUIRE_PTXAS=1` (CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where ptxas is, if anywhere: `STENCIL_PTXAS`, `PTXAS`, `PATH` or the
/// `nvidia-cuda-nvcc-cu12` package ([`kernels_gen::sass::find_ptxas`], where the macro
/// looks for it when a build asks for SASS).
pub fn find() -> Option<PathBuf> {
    kernels_gen::sass::find_ptxas()
}

/// ptxas, or `None` after printing why a test skips; panics if `STENCIL_REQUIRE_PTXAS=1`
/// and there is none.
pub fn required() -> Option<PathBuf> {
    let found = find();
    if found.is_none() {
        assert!(
            std::env::var("STENCIL_REQUIRE_PTXAS").map_or(true, |v| v != "1"),
            "STENCIL_REQUIRE_PTXAS=1 but no ptxas was found (pip install nvidia-cuda-nvcc-cu12)"
        );
        println!("SKIPPED: no ptxas on PATH, in PTXAS or in the nvidia-cuda-nvcc-cu12 package");
    }
    found
}

/// A folder of its own for a test's PTX and cubin files: `stencil-{name}-{pid}` in the
/// temporary folder, created.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stencil-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Assembles the PTX file `file` for `arch` with `ptxas` into `cubin`; the log on
/// success, an error naming the failure otherwise.
pub fn assemble(ptxas: &Path, file: &Path, arch: &str, cubin: &Path) -> Result<String, String> {
    let out = Command::new(ptxas)
        .args(["-v", "-arch", arch, "-o"])
        .arg(cubin)
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(log)
    } else {
        Err(log)
    }
}

/// ptxas with a folder of one test's PTX and cubin files ([`scratch_dir`]), which goes when
/// the test passes (a failing test leaves it to look at).
pub struct Assembler {
    ptxas: PathBuf,
    dir: PathBuf,
}

impl Assembler {
    /// ptxas ([`required`]) with the folder `stencil-{name}-{pid}`, or `None` after
    /// printing why the test skips.
    pub fn required(name: &str) -> Option<Assembler> {
        let ptxas = required()?;
        Some(Assembler {
            ptxas,
            dir: scratch_dir(name),
        })
    }

    /// Writes `ptx` to `{stem}.ptx` in the folder and assembles it for `arch` into
    /// `{stem}_{arch}.cubin`: ptxas's log (its `-v` report of each entry's registers and
    /// spills). Panics with the log where ptxas fails.
    pub fn assemble(&self, stem: &str, ptx: &str, arch: &str) -> String {
        let file = self.dir.join(format!("{stem}.ptx"));
        std::fs::write(&file, ptx).expect("write ptx");
        let cubin = self.dir.join(format!("{stem}_{arch}.cubin"));
        assemble(&self.ptxas, &file, arch, &cubin)
            .unwrap_or_else(|log| panic!("{stem} for {arch}: ptxas failed:\n{log}"))
    }
}

impl Drop for Assembler {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
