// Reading a name that is neither a parameter nor a local.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[(1, 0)] + v;
}

fn main() {}
