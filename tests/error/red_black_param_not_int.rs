// The colour parameter must be an i64.
use stencil_runtime::prelude::*;

#[stencil(red_black = colour)]
fn k<T: Real>(u: InOut<T>, f: In<T>, colour: T) {
    u = 0.25 * (u[(1, 0)] + u[(-1, 0)] + f);
}

fn main() {}
