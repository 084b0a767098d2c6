// A line kernel reading its own unknowns at an offset along the line.
use stencil_runtime::prelude::*;

#[stencil(line = 0, red_black = colour)]
fn k<T: Real>(u: InOut<T>, f: In<T>, colour: i64) {
    u = tridiagonal(-1.0, 2.0, -1.0, f + u[(1, 0)]);
}

fn main() {}
