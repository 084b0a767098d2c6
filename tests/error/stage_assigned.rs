use stencil_runtime::prelude::*;

/// A staged value cannot be assigned.
#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let f = stage(u[(1, 0)] - u);
    f = u;
    out = f - f[(-1, 0)];
}

fn main() {}
