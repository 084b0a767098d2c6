// A line axis the kernel does not have.
use stencil_runtime::prelude::*;

#[stencil(dims = 2, line = 2)]
fn k<T: Real>(u: InOut<T>, f: In<T>) {
    u = tridiagonal(-1.0, 2.0, -1.0, f);
}

fn main() {}
