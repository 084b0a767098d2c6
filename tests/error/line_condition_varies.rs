// A line solved under a condition that changes along the line.
use stencil_runtime::prelude::*;

#[stencil(dims = 2, line = 0)]
fn k<T: Real>(u: InOut<T>, f: In<T>) {
    if index(0) % 2 == 0 {
        u = tridiagonal(-1.0, 2.0, -1.0, f);
    }
}

fn main() {}
