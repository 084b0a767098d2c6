// An early `return`.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[(1, 0)];
    return;
}

fn main() {}
