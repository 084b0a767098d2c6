use stencil_runtime::prelude::*;

#[stencils]
mod m {
    #[stencil_fn]
    fn weigh<T: Real>(c: Axes<T>, x: T) -> T {
        c[0] * x
    }

    /// One value passed where the helper wants one per axis.
    #[stencil(dims = 2)]
    fn k<T: Real>(u: In<T>, out: Out<T>, c: T) {
        out = weigh(c, u);
    }
}

fn main() {}
