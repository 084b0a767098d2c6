use stencil_runtime::prelude::*;

/// A group is built only as a helper's argument.
#[stencils]
mod m {
    #[stencil_group]
    pub struct Pair<T> {
        pub a: T,
        pub b: T,
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, v: In<T>, out: Out<T>) {
        let p = Pair { a: u, b: v };
        out = u;
    }
}

fn main() {}
