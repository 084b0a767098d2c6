//! Triangle meshes shared by the tests of vertex kernels.

use std::sync::Arc;
use stencil_runtime::prelude::MeshTopology;

/// The mesh of an `n` x `n` grid of vertices (vertex `i + n j` at grid point `(i, j)`),
/// each square split into two counter-clockwise triangles along its diagonal from `(i, j)`
/// to `(i + 1, j + 1)`.
pub fn split_squares(n: usize) -> Arc<MeshTopology> {
    let id = |i: usize, j: usize| i + n * j;
    let mut tris = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            tris.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            tris.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    MeshTopology::new(n * n, &tris).unwrap()
}
