// A module's helper may not take the name of an imported one.
use stencil_runtime::prelude::*;

#[stencil_helpers]
mod library {
    #[stencil_fn]
    fn twice<T: Real>(x: T) -> T {
        2.0 * x
    }
}

#[stencils(helpers = library)]
mod m {
    use super::*;

    #[stencil_fn]
    fn twice<T: Real>(x: T) -> T {
        x + x
    }

    #[stencil]
    fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = twice(u[(1, 0)]);
    }
}

fn main() {}
