// An attribute option that does not exist.
use stencil_runtime::prelude::*;

#[stencil(foo = 1)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[(1, 0)];
}

fn main() {}
