//! Where kernels run.

use crate::cuda::Cuda;
use crate::Error;

/// The environment variable that overrides [`Backend::auto`]: `cpu`, `cuda` (device 0),
/// `cuda:N` (device N) or `auto`.
pub const BACKEND_ENV: &str = "STENCIL_BACKEND";

/// A place to run kernels.
#[derive(Clone, Debug, PartialEq)]
pub enum Backend {
    /// The generated Rust code, rows in parallel on all cores (rayon).
    Cpu,
    /// The embedded PTX on a CUDA device, through the driver.
    Cuda(Cuda),
}

impl Backend {
    /// The best backend here, honouring `STENCIL_BACKEND`: CUDA device 0 when a driver
    /// and a device are present, else the CPU.
    pub fn auto() -> Result<Backend, Error> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) => Backend::from_name(&v),
            Err(_) => Ok(Backend::detect()),
        }
    }

    /// CUDA device 0 if there is one, else the CPU (ignores the environment).
    pub fn detect() -> Backend {
        Cuda::new(0).map(Backend::Cuda).unwrap_or(Backend::Cpu)
    }

    /// CUDA device `ordinal`; a typed error says why when there is none.
    pub fn cuda(ordinal: usize) -> Result<Backend, Error> {
        Cuda::new(ordinal).map(Backend::Cuda)
    }

    /// Parses `cpu`, `cuda`, `cuda:N` or `auto` (as given on a command line or in
    /// `STENCIL_BACKEND`).
    pub fn from_name(name: &str) -> Result<Backend, Error> {
        let lower = name.trim().to_ascii_lowercase();
        match lower.as_str() {
            "cpu" => Ok(Backend::Cpu),
            "auto" | "" => Ok(Backend::detect()),
            "cuda" | "gpu" => Backend::cuda(0),
            other => match other.strip_prefix("cuda:").map(str::parse::<usize>) {
                Some(Ok(n)) => Backend::cuda(n),
                _ => Err(Error::Backend(format!(
                    "unknown backend `{name}` (from {BACKEND_ENV} or the command line); use `cpu`, `cuda`, `cuda:N` or `auto`"
                ))),
            },
        }
    }

    /// This backend on `other`'s stream ([`Cuda::on_stream_of`]); the CPU stays the CPU.
    pub fn on_stream_of(&self, other: &Cuda) -> Backend {
        match self {
            Backend::Cpu => Backend::Cpu,
            Backend::Cuda(c) => Backend::Cuda(c.on_stream_of(other)),
        }
    }

    /// A short name for reports: `cpu`, or `cuda:N (device name)`.
    pub fn name(&self) -> String {
        match self {
            Backend::Cpu => "cpu".into(),
            Backend::Cuda(c) => format!("cuda:{} ({})", c.ordinal(), c.device_name()),
        }
    }

    /// Waits until all work queued on this backend is done (a no-op on the CPU, whose
    /// launches return when done).
    pub fn synchronize(&self) -> Result<(), Error> {
        match self {
            Backend::Cpu => Ok(()),
            Backend::Cuda(c) => c.synchronize(),
        }
    }
}
