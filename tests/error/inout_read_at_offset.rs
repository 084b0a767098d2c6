// An in-place field read at a neighbour without a red-black colouring: a race.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: InOut<T>, f: In<T>) {
    u = 0.5 * (u[(1, 0)] + f);
}

fn main() {}
