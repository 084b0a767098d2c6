// A mistake in a library's helper is reported in the library, where a kernel calls it.
use stencil_runtime::prelude::*;

#[stencil_helpers]
mod library {
    #[stencil_fn]
    fn wave<T: Real>(x: T) -> T {
        x.sinc()
    }
}

#[stencils(helpers = library)]
mod m {
    use super::*;

    #[stencil]
    fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = wave(u[(1, 0)]);
    }
}

fn main() {}
