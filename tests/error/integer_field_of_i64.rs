use stencil_runtime::prelude::*;

/// A field of `i64`: fields hold reals, `i32`, `u8` or `bool`.
#[stencil(dims = 2)]
fn k(u: In<i64>, out: Out<i32>) {
    out = u;
}

fn main() {}
