// Reading a reduction as a value.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, total: Sum<T>) {
    total.reduce(u[(1, 0)]);
    total.reduce(total * 0.5);
}

fn main() {}
