use stencil_runtime::prelude::*;

/// A 2D offset plus a 3D one.
#[stencil(dims = 2)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[unit(0) + (1, 0, 0)];
}

fn main() {}
