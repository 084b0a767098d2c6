// `#[stencils]` takes only `helpers = [..]`.
use stencil_runtime::prelude::*;

#[stencil_helpers]
mod library {
    #[stencil_fn]
    fn twice<T: Real>(x: T) -> T {
        2.0 * x
    }
}

#[stencils(helper = library)]
mod m {
    use super::*;

    #[stencil]
    fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = twice(u[(1, 0)]);
    }
}

fn main() {}
