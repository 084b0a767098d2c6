// A reduction declared over `bool`.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, any: Sum<bool>) {
    any.reduce(u[(1, 0)] > 0.0);
}

fn main() {}
