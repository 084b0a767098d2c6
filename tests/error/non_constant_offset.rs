// An offset that depends on a runtime parameter.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, shift: i64) {
    out = u[(shift, 0)];
}

fn main() {}
