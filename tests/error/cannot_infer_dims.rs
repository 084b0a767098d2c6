// A kernel that reads no offsets and has no `dims` option.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = u * 2.0;
}

fn main() {}
