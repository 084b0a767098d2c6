// A loop over something that is not a list of the mesh.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(mesh: Mesh, u: In<T>, out: Out<T>) {
    let mut s = 0.0;
    for j in u {
        s += 1.0;
    }
    out = s;
}

fn main() {}
