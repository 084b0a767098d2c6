use stencil_runtime::prelude::*;

/// A staged value takes the type of its expression.
#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let f: T = stage(u[(1, 0)] - u);
    out = f - f[(-1, 0)];
}

fn main() {}
