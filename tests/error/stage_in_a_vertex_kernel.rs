use stencil_runtime::prelude::*;

/// Vertex kernels have no grid offsets to stage over.
#[stencil]
fn k<T: Real>(mesh: Mesh, x: In<T>, out: Out<T>) {
    let f = stage(x * 2.0);
    out = f;
}

fn main() {}
