//! CPU path against hand-written Rust loops: 5-point Laplacian and Jacobi at 4096^2, on one
//! thread and on all cores. `cargo bench -p stencil-tests --bench cpu_stencils`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use stencil_runtime::{Backend, Field};
use stencil_tests::kernels::suite;

const N: usize = 4096;

/// The obvious hand-written 5-point Laplacian on the same storage layout.
fn lap5_by_hand(u: &Field<f64>, out: &mut Field<f64>, inv_h2: f64) {
    let (su, so) = (u.strides()[0], out.strides()[0]);
    let (ou, oo) = (u.origin(), out.origin());
    let (src, dst) = (u.as_slice().unwrap(), out.as_mut_slice().unwrap());
    for j in 0..N {
        let c = ou + j * su;
        let row = &mut dst[oo + j * so..oo + j * so + N];
        for (i, o) in row.iter_mut().enumerate() {
            let p = c + i;
            *o = (src[p - 1] + src[p + 1] + src[p - su] + src[p + su] - 4.0 * src[p]) * inv_h2;
        }
    }
}

/// The obvious hand-written weighted-Jacobi sweep.
fn jacobi_by_hand(u: &Field<f64>, f: &Field<f64>, out: &mut Field<f64>, h2: f64, w: f64) {
    let (su, sf, so) = (u.strides()[0], f.strides()[0], out.strides()[0]);
    let (ou, of, oo) = (u.origin(), f.origin(), out.origin());
    let (src, rhs, dst) = (
        u.as_slice().unwrap(),
        f.as_slice().unwrap(),
        out.as_mut_slice().unwrap(),
    );
    for j in 0..N {
        let row = &mut dst[oo + j * so..oo + j * so + N];
        for (i, o) in row.iter_mut().enumerate() {
            let p = ou + j * su + i;
            let r =
                (src[p - 1] + src[p + 1] + src[p - su] + src[p + su] + h2 * rhs[of + j * sf + i])
                    * 0.25;
            *o = src[p] + w * (r - src[p]);
        }
    }
}

fn bench(c: &mut Criterion) {
    let u = Field::<f64>::from_fn(&[N, N], 1, |[i, j, _]| {
        ((i * 7 + j * 13) % 101) as f64 * 0.01
    });
    let f = Field::<f64>::from_fn(&[N, N], 0, |[i, j, _]| ((i + 3 * j) % 17) as f64 * 0.1);
    let mut out = Field::<f64>::zeros(&[N, N], 0).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let all = rayon::ThreadPoolBuilder::new().build().unwrap();
    let threads_all = all.current_num_threads();

    let mut g = c.benchmark_group("lap5_4096");
    g.throughput(Throughput::Bytes((2 * N * N * 8) as u64));
    g.sample_size(10);
    g.bench_function("hand_written_1_thread", |b| {
        b.iter(|| lap5_by_hand(&u, &mut out, 1.0))
    });
    g.bench_function(BenchmarkId::new("generated", "1_thread"), |b| {
        one.install(|| b.iter(|| suite::lap5::launch(&Backend::Cpu, &u, &mut out, 1.0).unwrap()))
    });
    g.bench_function(
        BenchmarkId::new("generated", format!("{threads_all}_threads")),
        |b| {
            all.install(|| {
                b.iter(|| suite::lap5::launch(&Backend::Cpu, &u, &mut out, 1.0).unwrap())
            })
        },
    );
    g.finish();

    let mut g = c.benchmark_group("jacobi_4096");
    g.throughput(Throughput::Bytes((3 * N * N * 8) as u64));
    g.sample_size(10);
    g.bench_function("hand_written_1_thread", |b| {
        b.iter(|| jacobi_by_hand(&u, &f, &mut out, 0.01, 0.8))
    });
    g.bench_function(BenchmarkId::new("generated", "1_thread"), |b| {
        one.install(|| {
            b.iter(|| suite::jacobi::launch(&Backend::Cpu, &u, &f, &mut out, 0.01, 0.8).unwrap())
        })
    });
    g.bench_function(
        BenchmarkId::new("generated", format!("{threads_all}_threads")),
        |b| {
            all.install(|| {
                b.iter(|| {
                    suite::jacobi::launch(&Backend::Cpu, &u, &f, &mut out, 0.01, 0.8).unwrap()
                })
            })
        },
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
