// `index(2)` in a two-dimensional kernel.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[(1, 0)] * index(2) as T;
}

fn main() {}
