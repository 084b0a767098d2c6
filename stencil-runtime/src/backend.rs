//! Where kernels run.

use crate::Error;

/// The environment variable that overrides [`Backend::auto`]: `cpu`, `cuda` or `auto`.
pub const BACKEND_ENV: &str = "STENCIL_BACKEND";

/// A place to run kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The generated Rust code, rows in parallel on all cores (rayon).
    Cpu,
}

impl Backend {
    /// The best backend here, honouring `STENCIL_BACKEND`.
    ///
    /// The CUDA backend (loading the embedded PTX through the driver) is not part of this
    /// build yet, so `auto` is the CPU and an explicit `cuda` is an error.
    pub fn auto() -> Result<Backend, Error> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) => Backend::from_name(&v),
            Err(_) => Ok(Backend::Cpu),
        }
    }

    /// Parses `cpu`, `cuda` or `auto` (as given on a command line).
    pub fn from_name(name: &str) -> Result<Backend, Error> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cpu" | "auto" | "" => Ok(Backend::Cpu),
            "cuda" | "gpu" => Err(Error::Backend(
                "the CUDA backend is not available in this build; use `cpu`".into(),
            )),
            other => Err(Error::Backend(format!(
                "unknown backend `{other}` (from {BACKEND_ENV} or the command line); use `cpu`, `cuda` or `auto`"
            ))),
        }
    }

    /// A short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
        }
    }
}
