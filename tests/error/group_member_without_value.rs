use stencil_runtime::prelude::*;

/// A group built at a helper call names each member's value.
#[stencils]
mod m {
    #[stencil(dims = 2)]
    pub fn k<T: Real>(a: In<T>, b: In<T>, out: Out<T>) {
        out = sum(Two { a, b: b });
    }

    #[stencil_group]
    pub struct Two<T> {
        pub a: T,
        pub b: T,
    }

    #[stencil_fn]
    fn sum<T: Real>(t: In<Two<T>>) -> T {
        t.a + t.b
    }
}

fn main() {}
