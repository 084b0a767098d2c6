use stencil_runtime::prelude::*;

/// `stage(..)` is a `let` at the top of the body, not under a condition.
#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>, s: T) {
    let mut v = u;
    if s > 0.0 {
        let f = stage(u[(1, 0)] - u);
        v = f - f[(-1, 0)];
    }
    out = v;
}

fn main() {}
