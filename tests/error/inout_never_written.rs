// An in-place field that is only read.
use stencil_runtime::prelude::*;

#[stencil(dims = 2)]
fn k<T: Real>(u: InOut<T>, out: Out<T>) {
    out = u;
}

fn main() {}
