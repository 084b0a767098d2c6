use stencil_runtime::prelude::*;

/// The members of a group of inputs are read, not written.
#[stencils]
mod m {
    #[stencil_group]
    pub struct Pair<T> {
        pub a: T,
        pub b: T,
    }

    #[stencil]
    pub fn k<T: Real>(from: In<Pair<T>>, out: Out<T>) {
        from.b = 1.0;
        out = from.a[(1, 0)];
    }
}

fn main() {}
