use stencil_runtime::prelude::*;

/// A helper's group parameter takes a group, passed by name.
#[stencils]
mod m {
    #[stencil_group]
    pub struct Physics<T> {
        pub g: T,
    }

    #[stencil_fn]
    fn weight<T: Real>(s: Physics<T>) -> T {
        s.g
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>, g: T) {
        out = weight(g) * u[(1, 0)];
    }
}

fn main() {}
