use stencil_runtime::prelude::*;

/// A helper taking a group as fields is not given a group of values.
#[stencils]
mod m {
    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>, s: Depth<T>) {
        out = u * twice(s);
    }

    #[stencil_group]
    pub struct Depth<T> {
        pub h: T,
    }

    #[stencil_fn]
    fn twice<T: Real>(d: In<Depth<T>>) -> T {
        2.0 * d.h
    }
}

fn main() {}
