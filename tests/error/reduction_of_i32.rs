use stencil_runtime::prelude::*;

/// A reduction of `i32`: integers are reduced as `i64`.
#[stencil(dims = 2)]
fn k(u: In<i32>, total: Sum<i32>) {
    total.reduce(u);
}

fn main() {}
