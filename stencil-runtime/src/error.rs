//! Run-time errors.

/// Everything that can go wrong when running a kernel.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A field's extent or halo is invalid.
    #[error("invalid field: {0}")]
    InvalidField(String),
    /// A field passed to a kernel has the wrong number of dimensions.
    #[error("kernel `{kernel}`: field `{field}` is {have}-dimensional but the kernel is {want}-dimensional")]
    Dimensions {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        field: &'static str,
        /// The field's dimension.
        have: usize,
        /// The kernel's dimension.
        want: usize,
    },
    /// A field's extent differs from the kernel's domain.
    #[error("kernel `{kernel}`: field `{field}` has extent {have:?} but the domain (the first output) is {want:?}; pass fields of the same interior size")]
    Extent {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        field: &'static str,
        /// The field's extent.
        have: Vec<usize>,
        /// The domain.
        want: Vec<usize>,
    },
    /// A field's halo is narrower than the kernel reads.
    #[error("kernel `{kernel}`: field `{field}` has halo {have} but the kernel reads {needed} cells beyond the domain; allocate it with halo >= {needed}")]
    Halo {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        field: &'static str,
        /// The field's halo.
        have: usize,
        /// What the kernel reads.
        needed: usize,
    },
    /// The requested backend cannot be used.
    #[error("backend unavailable: {0}")]
    Backend(String),
    /// No CUDA driver library could be loaded or initialised.
    #[error(
        "no CUDA driver: {0}; install the NVIDIA driver, or run on the CPU (STENCIL_BACKEND=cpu)"
    )]
    NoDriver(String),
    /// The driver is present but the requested device is not.
    #[error("no CUDA device {ordinal}: the driver reports {count} device(s); choose an ordinal below {count}, or run on the CPU (STENCIL_BACKEND=cpu)")]
    NoDevice {
        /// The device asked for.
        ordinal: usize,
        /// How many the driver sees.
        count: usize,
    },
    /// The driver refused the PTX of a kernel.
    #[error("kernel `{kernel}`: the CUDA driver could not load its PTX: {cause}{log}")]
    PtxLoad {
        /// The kernel.
        kernel: String,
        /// The driver's error.
        cause: String,
        /// The JIT compiler's log (empty when it said nothing), starting with a newline.
        log: String,
    },
    /// A kernel launch failed, or the kernel failed while running.
    #[error("kernel `{kernel}`: {cause}")]
    Launch {
        /// The kernel.
        kernel: String,
        /// What the driver said.
        cause: String,
    },
    /// A mesh or vertex set is malformed.
    #[error("invalid mesh: {0}")]
    Mesh(String),
    /// Device memory ran out.
    #[error("out of GPU memory allocating {bytes} bytes for {what}; use smaller fields, free others, or run on the CPU")]
    OutOfMemory {
        /// The size asked for.
        bytes: usize,
        /// What it was for.
        what: String,
    },
    /// Host memory ran out (or the request exceeds what the machine can address).
    #[error("out of host memory allocating {bytes} bytes for {what}; use smaller fields (a smaller grid) or a machine with more memory")]
    HostOutOfMemory {
        /// The size asked for.
        bytes: usize,
        /// What it was for.
        what: String,
    },
    /// Another CUDA driver call failed.
    #[error("CUDA error in {op}: {cause}")]
    Cuda {
        /// What was being done.
        op: String,
        /// What the driver said.
        cause: String,
    },
    /// A field lives in the wrong memory for the backend running the kernel.
    #[error("kernel `{kernel}`: field `{field}` lives in {have} but the kernel runs on {want}; copy it there first with `Field::to(&backend)`")]
    Residency {
        /// The kernel.
        kernel: String,
        /// The parameter.
        field: String,
        /// Where the field is.
        have: String,
        /// Where the kernel runs.
        want: String,
    },
    /// A field read on another grid (`Fine<T>`, `Coarse<T>`) whose size does not cover
    /// what the kernel reads over the domain.
    #[error("kernel `{kernel}`: field `{field}` {detail}")]
    Coverage {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        field: &'static str,
        /// What is read, what is held, and what sizes work.
        detail: String,
    },
    /// An `Axes` parameter given another number of values than the kernel has axes.
    #[error("kernel `{kernel}`: parameter `{param}` takes one value per axis, {dims}, but {given} were given")]
    Axes {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        param: &'static str,
        /// How many values were given.
        given: usize,
        /// The kernel's number of dimensions.
        dims: usize,
    },
    /// A kernel defined for some numbers of dimensions launched on a domain of another.
    #[error("kernel `{kernel}` is defined for {defined:?} dimensions, but its domain is {have}-dimensional")]
    DefinedDimensions {
        /// The kernel.
        kernel: &'static str,
        /// The domain's number of dimensions.
        have: usize,
        /// Those the kernel is defined for.
        defined: &'static [usize],
    },
    /// A scalar parameter outside the values the kernel accepts.
    #[error("kernel `{kernel}`: parameter `{param}` is {value}, but {expected}")]
    Parameter {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        param: &'static str,
        /// The value given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// Host-memory access to a field that lives on a device.
    #[error("{what} needs the field in host memory but it lives in {location}; use `Field::to_host()` first")]
    NotOnHost {
        /// The operation.
        what: &'static str,
        /// Where the field is.
        location: String,
    },
}
