// A parameter named `backend`, which the launcher uses.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, backend: T) {
    out = backend * u[(1, 0)];
}

fn main() {}
