// A closure.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let twice = |x: T| x * 2.0;
    out = twice(u[(1, 0)]);
}

fn main() {}
