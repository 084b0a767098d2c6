use stencil_runtime::prelude::*;

/// A staged value is read-only.
#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let mut f = stage(u[(1, 0)] - u);
    out = f - f[(-1, 0)];
}

fn main() {}
