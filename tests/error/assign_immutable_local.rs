// Assigning to a local declared without `mut`.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let x = u[(1, 0)];
    x = x * 2.0;
    out = x;
}

fn main() {}
