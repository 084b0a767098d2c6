use stencil_runtime::prelude::*;

/// A stage is computed from fields, not from another stage.
#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let f = stage(u[(1, 0)] - u);
    let g = stage(f - f[(-1, 0)]);
    out = g + g[(0, 1)];
}

fn main() {}
