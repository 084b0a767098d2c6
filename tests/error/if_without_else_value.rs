// An `if` without `else` used as a value.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let x = if u > 0.0 { u[(1, 0)] };
    out = x;
}

fn main() {}
