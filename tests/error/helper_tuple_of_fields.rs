use stencil_runtime::prelude::*;

/// A helper takes fields one by one, not as a tuple.
#[stencils]
mod m {
    #[stencil_fn]
    fn both<T: Real>(pair: (In<T>, In<T>)) -> T {
        let (a, b) = pair;
        a + b
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, v: In<T>, out: Out<T>) {
        out = both((u, v));
    }
}

fn main() {}
