// A helper's field parameter takes a field by name, not a value.
use stencil_runtime::prelude::*;

#[stencils]
mod m {
    #[stencil_fn]
    fn left<T: Real>(u: In<T>) -> T {
        u[-1]
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = left(2.0 * u);
    }
}

fn main() {}
