// A tuple where one value is needed.
use stencil_runtime::prelude::*;

#[stencils]
mod m {
    #[stencil_fn]
    fn order<T: Real>(a: T, b: T) -> (T, T) {
        (a.min(b), a.max(b))
    }

    #[stencil(dims = 1)]
    pub fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = order(u[-1], u[1]) * 2.0;
    }
}

fn main() {}
