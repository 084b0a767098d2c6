use stencil_runtime::prelude::*;

/// `&` on reals.
#[stencil(dims = 2)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u & u;
}

fn main() {}
