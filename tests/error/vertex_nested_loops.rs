// Loops over the mesh do not nest.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(mesh: Mesh, u: In<T>, out: Out<T>) {
    let mut s = 0.0;
    for j in mesh.neighbours() {
        for t in mesh.triangles() {
            s += u[j];
        }
    }
    out = s;
}

fn main() {}
