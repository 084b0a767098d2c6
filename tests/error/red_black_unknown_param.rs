// red_black names a parameter that does not exist.
use stencil_runtime::prelude::*;

#[stencil(red_black = color)]
fn k<T: Real>(u: InOut<T>, f: In<T>, colour: i64) {
    u = 0.25 * (u[(1, 0)] + u[(-1, 0)] + f);
}

fn main() {}
