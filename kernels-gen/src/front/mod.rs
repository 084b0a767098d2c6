//! Front ends: Rust items through `syn`, and `.stencil` text through `pest`.

pub mod rust;
pub mod text;
