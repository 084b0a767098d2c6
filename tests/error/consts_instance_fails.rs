use stencil_runtime::prelude::*;

/// One value makes a kernel that reads along an axis a 2D kernel lacks.
#[stencil(dims = 2, consts(a = [0, 2]))]
fn k<T: Real>(u: In<T>, out: Out<T>, a: i64) {
    out = u[unit(a)];
}

fn main() {}
