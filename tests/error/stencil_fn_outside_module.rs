// A `#[stencil_fn]` helper outside a `#[stencils]` module.
use stencil_runtime::prelude::*;

#[stencil_fn]
fn half<T: Real>(x: T) -> T {
    x * 0.5
}

fn main() {}
