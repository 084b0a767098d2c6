// An offset of three components passed to a helper's two-component offset parameter.
use stencil_runtime::prelude::*;

#[stencils]
mod m {
    #[stencil_fn]
    fn central<T: Real>(u: In<T>, d: (i64, i64)) -> T {
        u[d] - u[-d]
    }

    #[stencil(dims = 2)]
    pub fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = central(u, (1, 0, 0));
    }
}

fn main() {}
