// Calling a function that is neither an intrinsic nor a helper.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = erf(u[(1, 0)]);
}

fn main() {}
