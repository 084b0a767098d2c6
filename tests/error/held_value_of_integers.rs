// A value held on the backend is a real: an integer is passed by value.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, n: Value<i64>) {
    out = u[(1, 0)];
}

fn main() {}
