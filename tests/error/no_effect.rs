// A kernel with neither outputs nor reductions.
use stencil_runtime::prelude::*;

#[stencil(dims = 2)]
fn k<T: Real>(u: In<T>) {
    let x = u * 2.0;
}

fn main() {}
