// A vertex kernel reads a field at an index that does not come from the mesh.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(mesh: Mesh, u: In<T>, out: Out<T>) {
    let j = mesh.vertex() + 1;
    out = u[j];
}

fn main() {}
