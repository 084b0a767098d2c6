// A field on the finer grid is read, never written.
use stencil_runtime::prelude::*;

#[stencil(dims = 2)]
fn restrict<T: Real>(fine: Fine<T>, coarse: Out<T>) {
    coarse = fine;
    fine = 0.0;
}

fn main() {}
