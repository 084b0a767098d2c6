// Assigning to an `In<T>` field.
use stencil_runtime::prelude::*;

#[stencil(dims = 2)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    u = 1.0;
    out = u;
}

fn main() {}
