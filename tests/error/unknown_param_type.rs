// A parameter of a type the language does not know.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, w: Vec<T>) {
    out = u[(1, 0)];
}

fn main() {}
