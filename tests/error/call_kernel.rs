// Calling a kernel from another kernel.
use stencil_runtime::prelude::*;

#[stencils]
mod m {
    use super::*;

    #[stencil]
    fn first<T: Real>(u: In<T>, out: Out<T>) {
        out = u[(1, 0)];
    }

    #[stencil]
    fn second<T: Real>(u: In<T>, out: Out<T>) {
        out = first(u[(1, 0)], u);
    }
}

fn main() {}
