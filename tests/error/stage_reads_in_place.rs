use stencil_runtime::prelude::*;

/// A stage reads no in-place field: other points of the tile write it.
#[stencil(red_black = colour)]
fn k<T: Real>(u: InOut<T>, r: In<T>, colour: i64) {
    let f = stage(u + r);
    u = f[(1, 0)] + f[(-1, 0)];
}

fn main() {}
