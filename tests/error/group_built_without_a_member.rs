use stencil_runtime::prelude::*;

/// A group built at a helper call gives every member a value.
#[stencils]
mod m {
    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = total(Pair { a: u });
    }

    #[stencil_group]
    pub struct Pair<T> {
        pub a: T,
        pub b: T,
    }

    #[stencil_fn]
    fn total<T: Real>(p: In<Pair<T>>) -> T {
        p.a + p.b
    }
}

fn main() {}
