use stencil_runtime::prelude::*;

/// A staged tuple is named part by part.
#[stencils]
mod m {
    #[stencil_fn]
    fn pair<T: Real>(u: In<T>) -> (T, T) {
        (u[(1, 0)] - u, u[(0, 1)] - u)
    }

    #[stencil]
    pub fn k<T: Real>(u: In<T>, out: Out<T>) {
        let f = stage(pair(u));
        out = f;
    }
}

fn main() {}
