use stencil_runtime::prelude::*;

/// Integer values for a real parameter.
#[stencil(dims = 2, consts(s = [1, 2]))]
fn k<T: Real>(u: In<T>, out: Out<T>, s: T) {
    out = s * u;
}

fn main() {}
