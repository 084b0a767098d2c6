// A `match` expression.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, n: i64) {
    let w = match n { 0 => 1.0, _ => 2.0 };
    out = w * u[(1, 0)];
}

fn main() {}
