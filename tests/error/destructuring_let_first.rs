// A destructuring `let` of a form the language lacks (a slice pattern) in a kernel that
// reads no offsets: the `let` is the error, not the dimension.
use stencil_runtime::prelude::*;

#[stencil]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let [a, b] = [u, u];
    out = a + b;
}

fn main() {}
