use stencil_runtime::prelude::*;

/// `stage` stages one expression.
#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let f = stage(u[(1, 0)], u);
    out = f - f[(-1, 0)];
}

fn main() {}
