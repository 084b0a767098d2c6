// Reducing an f64 value into a `Max<f32>`.
use stencil_runtime::prelude::*;

#[stencil]
fn k(u: In<f64>, m: Max<f32>) {
    m.reduce(u[(1, 0)]);
}

fn main() {}
