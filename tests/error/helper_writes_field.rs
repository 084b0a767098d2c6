// Helpers read the fields passed to them; they do not write them.
use stencil_runtime::prelude::*;

#[stencils]
mod m {
    #[stencil_fn]
    fn clear<T: Real>(u: In<T>) -> T {
        u = 0.0;
        u
    }

    #[stencil(dims = 1)]
    pub fn k<T: Real>(u: InOut<T>, out: Out<T>) {
        out = clear(u);
    }
}

fn main() {}
