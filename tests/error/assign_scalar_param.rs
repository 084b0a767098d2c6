// Assigning to a scalar parameter.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, c: T) {
    c = 2.0 * c;
    out = c * u[(1, 0)];
}

fn main() {}
