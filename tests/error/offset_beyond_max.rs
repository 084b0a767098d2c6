// An offset larger than the largest supported offset (8).
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[(9, 0)];
}

fn main() {}
