// Line kernels have no reductions.
use stencil_runtime::prelude::*;

#[stencil(dims = 2, line = 1)]
fn k<T: Real>(u: InOut<T>, f: In<T>, total: Sum<T>) {
    u = tridiagonal(-1.0, 2.0, -1.0, f);
    total.reduce(f);
}

fn main() {}
