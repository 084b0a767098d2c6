// `Value<T>` is a kernel parameter: a helper takes the value it reads.
use stencil_runtime::prelude::*;

#[stencils]
mod m {
    #[stencil_fn]
    fn scaled<T: Real>(x: T, dt: Value<T>) -> T {
        x * dt
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>, dt: Value<T>) {
        out = scaled(u[(1, 0)], dt);
    }
}

fn main() {}
