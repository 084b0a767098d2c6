use stencil_runtime::prelude::*;

/// Two offsets multiplied: offsets only add, subtract and scale.
#[stencil(dims = 2)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[unit(0) * unit(1)];
}

fn main() {}
