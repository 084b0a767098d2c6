use stencil_runtime::prelude::*;

#[stencils]
mod m {
    /// Constants belong to kernels.
    #[stencil_fn(consts(a = [0, 1]))]
    fn shift<T: Real>(u: In<T>, a: i64) -> T {
        u[unit(a)]
    }

    #[stencil(dims = 2)]
    pub fn k<T: Real>(u: In<T>, out: Out<T>) {
        out = shift(u, 0);
    }
}

fn main() {}
