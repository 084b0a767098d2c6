use stencil_runtime::prelude::*;

/// A group outside a `#[stencils]` module has no kernels to serve.
#[stencil_group]
pub struct Physics<T> {
    pub g: T,
}

fn main() {}
