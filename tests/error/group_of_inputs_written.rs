use stencil_runtime::prelude::*;

/// The members of a group of inputs are read, not written.
#[stencils]
mod m {
    #[stencil]
    pub fn k<T: Real>(from: In<Wind<T>>, out: Out<T>) {
        from.v = 1.0;
        out = from.u[(1, 0)];
    }

    #[stencil_group]
    pub struct Wind<T> {
        pub u: T,
        pub v: T,
    }
}

fn main() {}
