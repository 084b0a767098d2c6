use stencil_runtime::prelude::*;

/// A constant that names no parameter.
#[stencil(dims = 2, consts(b = [0, 1]))]
fn k<T: Real>(u: In<T>, out: Out<T>, a: i64) {
    out = u[unit(a)];
}

fn main() {}
