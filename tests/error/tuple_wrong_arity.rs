// Destructuring a tuple into the wrong number of names.
use stencil_runtime::prelude::*;

#[stencil(dims = 1)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let (a, b, c) = (u[-1], u[1]);
    out = a + b + c;
}

fn main() {}
