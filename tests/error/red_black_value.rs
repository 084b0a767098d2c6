// red_black names the colour parameter; a number is not a parameter.
use stencil_runtime::prelude::*;

#[stencil(red_black = 1)]
fn k<T: Real>(u: InOut<T>, f: In<T>) {
    u = 0.25 * (u[(1, 0)] + u[(-1, 0)] + f);
}

fn main() {}
