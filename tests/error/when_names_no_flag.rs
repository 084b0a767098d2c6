use stencil_runtime::prelude::*;

/// `#[when(..)]` on a parameter names a run-time scalar, not a `bool` constant.
#[stencil(dims = 2)]
fn k<T: Real>(u: In<T>, out: Out<T>, #[when(scaled)] s: T, scaled: bool) {
    out = if scaled { s * u } else { u };
}

fn main() {}
