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
}
