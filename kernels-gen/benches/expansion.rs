//! What one `#[stencil]` expansion costs: parse, check, lower, generate the Rust and the PTX
//! for f32 and f64 (the work the macro does per kernel).
//! `cargo bench -p kernels-gen --bench expansion`.

use criterion::{criterion_group, criterion_main, Criterion};
use kernels_gen::back::rust::cpu_function;
use kernels_gen::front::rust::parse_rust_source;
use kernels_gen::ir::Precision;
use kernels_gen::{llvm, lower};

const JACOBI: &str =
    "#[stencil] fn jacobi<T: Real>(u: In<T>, f: In<T>, out: Out<T>, h2: T, omega: T) {
    let r = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] + h2 * f) * 0.25;
    out = u + omega * (r - u);
}";

const CFL: &str = "#[stencil(dims = 2)] fn cfl<T: Real>(h: In<T>, hu: In<T>, hv: In<T>, speed: Max<T>, g: T, dry: T) {
    if h > dry {
        let c = (g * h).sqrt();
        speed.reduce(((hu / h).abs() + c).max((hv / h).abs() + c));
    }
}";

fn expand(src: &str) -> usize {
    let (module, _) = parse_rust_source(src).expect("parses");
    let k = lower::lower_module(&module).expect("checks").remove(0);
    let rust = cpu_function(&k, &quote::quote!(::stencil_runtime)).to_string();
    let p32 = llvm::ptx(&k, Precision::F32).expect("ptx");
    let p64 = llvm::ptx(&k, Precision::F64).expect("ptx");
    rust.len() + p32.len() + p64.len()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("macro_expansion");
    g.sample_size(20);
    g.bench_function("jacobi", |b| b.iter(|| expand(JACOBI)));
    g.bench_function("cfl_with_reduction", |b| b.iter(|| expand(CFL)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
