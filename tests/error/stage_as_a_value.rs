use stencil_runtime::prelude::*;

/// `stage(..)` names a value with `let`; it is not an expression.
#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    out = 2.0 * stage(u[(1, 0)] - u);
}

fn main() {}
