// The unknown of a line solve used in arithmetic.
use stencil_runtime::prelude::*;

#[stencil(dims = 2, line = 0)]
fn k<T: Real>(u: InOut<T>, f: In<T>) {
    u = 2.0 * tridiagonal(-1.0, 2.0, -1.0, f);
}

fn main() {}
