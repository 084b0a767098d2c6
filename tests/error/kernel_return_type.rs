// A kernel with a return type.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) -> T {
    out = u[(1, 0)];
}

fn main() {}
