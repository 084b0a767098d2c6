use stencil_runtime::prelude::*;

/// Only a parameter group has members.
#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u.x * u[(1, 0)];
}

fn main() {}
