use stencil_runtime::prelude::*;

/// A local may not take a group parameter's name.
#[stencils]
mod m {
    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>, s: Physics<T>) {
        for s in 0..2 {
            out = u[(s, 0)];
        }
    }

    #[stencil_group]
    pub struct Physics<T> {
        pub g: T,
    }
}

fn main() {}
