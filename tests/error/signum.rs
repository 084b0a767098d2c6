// `signum`, which differs from `sign` at zero.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u[(1, 0)].signum();
}

fn main() {}
