// `sample` takes both coordinates of the position.
use stencil_runtime::prelude::*;

#[stencil(dims = 2)]
fn k<T: Real>(g: Sampled<T>, out: Out<T>, x: T) {
    out = g.sample(x);
}

fn main() {}
