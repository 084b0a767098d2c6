// An output field that the body never assigns.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, total: Sum<T>) {
    total.reduce(u[(1, 0)]);
}

fn main() {}
