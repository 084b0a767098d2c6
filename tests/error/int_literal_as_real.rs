// An integer literal where a real is needed (`2 * x` instead of `2.0 * x`).
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = 2 * u[(1, 0)];
}

fn main() {}
