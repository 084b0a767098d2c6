// A red-black kernel reading its in-place field at a point of its own colour.
use stencil_runtime::prelude::*;

#[stencil(red_black = colour)]
fn k<T: Real>(u: InOut<T>, colour: i64) {
    u = 0.25 * (u[(1, 1)] + u[(-1, 0)]);
}

fn main() {}
