use stencil_runtime::prelude::*;

/// A group taken as fields has members of its type parameter only.
#[stencils]
mod m {
    #[stencil_group]
    pub struct Scheme<T> {
        pub g: T,
        pub west: i64,
    }

    #[stencil]
    pub fn k<T: Real>(s: In<Scheme<T>>, out: Out<T>) {
        out = s.g;
    }
}

fn main() {}
