use stencil_runtime::prelude::*;

/// A local may not take the name a group member is read by.
#[stencils]
mod m {
    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>, s: Physics<T>) {
        let s_g = s.g * 2.0;
        out = u * s_g + s.g;
    }

    #[stencil_group]
    pub struct Physics<T> {
        pub g: T,
    }
}

fn main() {}
