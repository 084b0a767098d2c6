use stencil_runtime::prelude::*;

/// A member the group does not have.
#[stencils]
mod m {
    #[stencil_group]
    pub struct Physics<T> {
        pub g: T,
        pub theta: T,
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>, s: Physics<T>) {
        out = s.gravity * u[(1, 0)];
    }
}

fn main() {}
