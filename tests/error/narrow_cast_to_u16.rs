// A cast to a narrow type the language does not have (`i32` and `u8` it has).
use stencil_runtime::prelude::*;

#[stencil(dims = 2)]
fn k(a: In<i32>, out: Out<f64>) {
    out = (a as u16) as f64;
}

fn main() {}
