// An offset beyond the halo declared in the attribute.
use stencil_runtime::prelude::*;

#[stencil(halo = 1)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[(1, 0)] + u[(-2, 0)];
}

fn main() {}
