// An output written in an `if` without `else`.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    if u > 0.0 { out = u[(1, 0)]; }
}

fn main() {}
