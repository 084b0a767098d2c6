use stencil_runtime::prelude::*;

/// A staged value read at an offset moves its field reads: here past the declared halo.
#[stencil(halo = 1)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let f = stage(u[(1, 0)] - u);
    out = f[(1, 0)] - f;
}

fn main() {}
