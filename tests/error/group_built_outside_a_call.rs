use stencil_runtime::prelude::*;

/// A group is built only as a helper's argument.
#[stencils]
mod m {
    #[stencil]
    pub fn k<T: Real>(u: In<T>, v: In<T>, out: Out<T>) {
        let wind = Wind { u: u, v: v };
        out = u;
    }

    #[stencil_group]
    pub struct Wind<T> {
        pub u: T,
        pub v: T,
    }
}

fn main() {}
