// Adding an f32 field value to an f64 one without a cast.
use stencil_runtime::prelude::*;

#[stencil]
fn k(a: In<f32>, b: In<f64>, out: Out<f64>) {
    out = a[(1, 0)] + b;
}

fn main() {}
