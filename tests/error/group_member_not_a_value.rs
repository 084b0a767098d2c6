use stencil_runtime::prelude::*;

/// A group holds values, not fields.
#[stencils]
mod m {
    #[stencil_group]
    pub struct Physics<T> {
        pub g: T,
        pub depth: In<T>,
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>, s: Physics<T>) {
        out = s.g * u[(1, 0)];
    }
}

fn main() {}
