use stencil_runtime::prelude::*;

/// A value listed twice.
#[stencil(dims = 2, consts(a = [0, 1, 0]))]
fn k<T: Real>(u: In<T>, out: Out<T>, a: i64) {
    out = u[unit(a)];
}

fn main() {}
