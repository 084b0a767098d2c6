// A labelled `break`: loops have no labels in the language.
use stencil_runtime::prelude::*;

#[stencil(dims = 1)]
fn k<T: Real>(u: In<T>, out: Out<T>) {
    let mut s = 0.0;
    'outer: for i in 0..3 {
        for j in 0..3 {
            if u[i] + u[j] > 2.0 {
                break 'outer;
            }
            s += u[j];
        }
    }
    out = s;
}

fn main() {}
