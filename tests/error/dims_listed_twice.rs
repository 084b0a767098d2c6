use stencil_runtime::prelude::*;

/// A kernel defined twice for the same dimension.
#[stencil(dims = [2, 2])]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u;
}

fn main() {}
