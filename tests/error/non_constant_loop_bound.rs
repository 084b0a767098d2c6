// A `for` loop whose bound is a runtime parameter.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, n: i64) {
    let mut s: T = 0.0;
    for i in 0..n {
        s += u[(i, 0)];
    }
    out = s;
}

fn main() {}
