// A type parameter bounded by something other than `Real`.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Copy>(u: In<T>, out: Out<T>) {
    out = u[(1, 0)];
}

fn main() {}
