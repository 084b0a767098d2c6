use stencil_runtime::prelude::*;

/// An offset in a mutable local: offsets are named, not changed.
#[stencil(dims = 2)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let mut d = unit(0);
    out = u[d];
}

fn main() {}
