use stencil_runtime::prelude::*;

/// A helper cannot stage: staging is the kernel's.
#[stencils]
mod m {
    #[stencil_fn]
    fn flux<T: Real>(u: In<T>) -> T {
        let f = stage(u[(1, 0)] - u);
        f
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = flux(u);
    }
}

fn main() {}
