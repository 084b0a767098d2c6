use stencil_runtime::prelude::*;

/// `<<` on a boolean.
#[stencil(dims = 2)]
fn k(u: In<bool>, out: Out<bool>) {
    out = u << 1;
}

fn main() {}
