// `u8` names a field's element or a cast's target, not a local's type.
use stencil_runtime::prelude::*;

#[stencil(dims = 2)]
fn k(a: In<u8>, out: Out<u8>) {
    let x: u8 = a as u8;
    out = x;
}

fn main() {}
