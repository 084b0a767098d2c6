// A `while` loop in a helper of a kernel that reads no offsets: the loop is the error.
use stencil_runtime::prelude::*;

#[stencils]
mod m {
    use super::*;

    #[stencil_fn]
    fn halve<T: Real>(x: T) -> T {
        let mut y = x;
        while y > 1.0 {
            y = y * 0.5;
        }
        y
    }

    #[stencil]
    fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = halve(u);
    }
}

fn main() {}
