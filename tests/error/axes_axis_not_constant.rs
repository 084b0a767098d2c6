use stencil_runtime::prelude::*;

/// A value per axis read at an axis known only at run time.
#[stencil(dims = [2, 3])]
fn k<T: Real>(u: In<T>, out: Out<T>, c: Axes<T>) {
    let i = index(0);
    out = c[i] * u;
}

fn main() {}
