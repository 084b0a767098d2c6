use stencil_runtime::prelude::*;

/// `(a, b) = e` names every part of the tuple.
#[stencils]
mod m {
    #[stencil_fn]
    fn three<T: Real>(u: In<T>) -> (T, T, T) {
        (u, u[(1, 0)], u[(-1, 0)])
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, a: Out<T>, b: Out<T>) {
        (a, b) = three(u);
    }
}

fn main() {}
