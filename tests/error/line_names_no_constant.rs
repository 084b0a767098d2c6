use stencil_runtime::prelude::*;

/// `line = a` where `a` is a run-time parameter.
#[stencil(dims = 2, line = a)]
fn k<T: Real>(e: InOut<T>, r: In<T>, a: i64) {
    e = tridiagonal(-1.0, 4.0, -1.0, r);
}

fn main() {}
