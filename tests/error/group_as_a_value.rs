use stencil_runtime::prelude::*;

/// A group is several values, not one.
#[stencils]
mod m {
    #[stencil_group]
    pub struct Sides {
        pub west: i64,
        pub east: i64,
    }

    #[stencil(dims = 1)]
    pub fn k(u: In<f64>, out: Out<f64>, sides: Sides) {
        out = if sides == 1 { 0.0 } else { u };
    }
}

fn main() {}
