// A sampled grid is read at a position with `g.sample(x, y)`, not used as a value.
use stencil_runtime::prelude::*;

#[stencil(dims = 2)]
fn k<T: Real>(g: Sampled<T>, out: Out<T>) {
    out = g + 1.0;
}

fn main() {}
