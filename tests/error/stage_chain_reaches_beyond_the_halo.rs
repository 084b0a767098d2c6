use stencil_runtime::prelude::*;

/// A stage that reads another moves that one's field reads by its own offsets, and a read
/// of it moves them further: here past the declared halo.
#[stencil(halo = 1)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let f = stage(u[(1, 0)] - u);
    let g = stage(f - f[(-1, 0)]);
    out = g[(1, 0)] - g;
}

fn main() {}
