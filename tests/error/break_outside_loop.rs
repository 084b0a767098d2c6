// `break` outside a loop.
use stencil_runtime::prelude::*;

#[stencil(dims = 1)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    if u > 1.0 {
        break;
    }
    out = u;
}

fn main() {}
