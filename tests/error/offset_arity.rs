// Offsets with different numbers of components.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[(1, 0)] + u[(0, 1, 0)];
}

fn main() {}
