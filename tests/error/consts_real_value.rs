use stencil_runtime::prelude::*;

/// A constant's value that is no integer or boolean.
#[stencil(dims = 2, consts(a = [0, 1.5]))]
fn k<T: Real>(u: In<T>, out: Out<T>, a: i64) {
    out = u[unit(a)];
}

fn main() {}
