// A helper library holds helpers only.
use stencil_runtime::prelude::*;

#[stencil_helpers]
mod library {
    #[stencil]
    fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = u[(1, 0)];
    }
}

fn main() {}
