// A four-dimensional kernel.
use stencil_runtime::prelude::*;

#[stencil(dims = 4)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u;
}

fn main() {}
