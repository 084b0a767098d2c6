use stencil_runtime::prelude::*;

/// A helper taking a group as fields is not given a group of values.
#[stencils]
mod m {
    #[stencil_group]
    pub struct Pair<T> {
        pub a: T,
        pub b: T,
    }

    #[stencil_fn]
    fn total<T: Real>(p: In<Pair<T>>) -> T {
        p.a + p.b
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>, s: Pair<T>) {
        out = u * total(s);
    }
}

fn main() {}
