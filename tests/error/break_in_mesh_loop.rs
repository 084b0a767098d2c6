// `break` in a loop over the mesh (a real loop): not supported yet.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(mesh: Mesh, u: In<T>, out: Out<T>) {
    let mut s = 0.0;
    for j in mesh.neighbours() {
        if u[j] > 1.0 {
            break;
        }
        s += u[j];
    }
    out = s;
}

fn main() {}
