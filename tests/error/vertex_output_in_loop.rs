// An output written inside a loop over the mesh.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(mesh: Mesh, u: In<T>, out: Out<T>) {
    for j in mesh.neighbours() {
        out = u[j];
    }
}

fn main() {}
