// A `while` loop: only constant-bound `for` loops exist.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let mut s: T = u[(1, 0)];
    while s < 1.0 {
        s += 1.0;
    }
    out = s;
}

fn main() {}
