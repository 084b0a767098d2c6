// `powi` with an exponent that is not an integer constant: the exponent is the error.
use stencil_runtime::prelude::*;

#[stencil(dims = 1)]
fn k<T: Real>(u: In<T>, n: T, out: Out<T>) {
    out = u.powi(n);
}

fn main() {}
