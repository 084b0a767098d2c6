// A helper that calls itself: helpers are inlined.
use stencil_runtime::prelude::*;

#[stencils]
mod m {
    use super::*;

    #[stencil_fn]
    fn half<T: Real>(x: T) -> T {
        half(x * 0.5)
    }

    #[stencil]
    fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = half(u[(1, 0)]);
    }
}

fn main() {}
