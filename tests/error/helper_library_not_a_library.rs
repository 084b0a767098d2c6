// Importing a module that is not a `#[stencil_helpers]` library.
use stencil_runtime::prelude::*;

mod plain {}

#[stencils(helpers = plain)]
mod m {
    use super::*;

    #[stencil]
    fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = u[(1, 0)];
    }
}

fn main() {}
