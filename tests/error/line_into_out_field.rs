// A line solve written to an Out field, whose halo cannot hold boundary values.
use stencil_runtime::prelude::*;

#[stencil(dims = 2, line = 0)]
fn k<T: Real>(f: In<T>, u: Out<T>) {
    u = tridiagonal(-1.0, 2.0, -1.0, f);
}

fn main() {}
