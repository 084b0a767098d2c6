// A triangle's corner asked for outside the loop over the triangles.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(mesh: Mesh, u: In<T>, out: Out<T>) {
    let a = mesh.corner(0, 1);
    out = u[a];
}

fn main() {}
