// An intrinsic called with the wrong number of arguments.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = sqrt(u[(1, 0)], u);
}

fn main() {}
