use stencil_runtime::prelude::*;

/// A group built at a helper call gives each member once.
#[stencils]
mod m {
    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = u * weight(Physics { g: 9.81, rho: 1.0, g: 1.0 });
    }

    #[stencil_group]
    pub struct Physics<T> {
        pub g: T,
        pub rho: T,
    }

    #[stencil_fn]
    fn weight<T: Real>(s: Physics<T>) -> T {
        s.g * s.rho
    }
}

fn main() {}
