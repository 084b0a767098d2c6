use stencil_runtime::prelude::*;

/// The third axis's value, read by a kernel that is also 2D.
#[stencil(dims = [2, 3])]
fn k<T: Real>(u: In<T>, out: Out<T>, c: Axes<T>) {
    out = c[2] * u;
}

fn main() {}
