// Reading an `Out<T>` field.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = out + u[(1, 0)];
}

fn main() {}
