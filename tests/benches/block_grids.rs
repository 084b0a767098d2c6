//! Kernels over block grids against the same kernels on dense fields, in one run on one
//! backend: the machine's copy bandwidth first, then a 5-point Laplacian (`lap5`) dense,
//! over all blocks of a block grid, and over a random half of them, and one halo exchange,
//! each as time and effective bandwidth (each input point read once, each output point
//! written once; for the exchange, each halo point read and written once) over that copy
//! bandwidth.
//!
//! `cargo bench -p stencil-tests --bench block_grids -- [--cpu] [--n N] [--block B]`
//! (defaults: the default backend, N = 4096 on the CPU and 8192 on a GPU, B = 32).

use std::time::Instant;
use stencil_runtime::blocks::{Absent, BlockGrid, BlockKey, HaloExchange, HaloRule, Side};
use stencil_runtime::{Backend, BlockField, BlockList, Field, Real};
use stencil_tests::bench::R;
use stencil_tests::kernels::suite;

/// Timed repetitions per figure (after two untimed); the median is reported.
const REPS: usize = 9;

/// The median seconds of `f` on `backend`.
fn median(backend: &Backend, mut f: impl FnMut() -> R<()>) -> R<f64> {
    f()?;
    f()?;
    backend.synchronize()?;
    let mut ts = Vec::new();
    for _ in 0..REPS {
        let t = match backend {
            Backend::Cuda(c) => {
                let mut timer = c.timer()?;
                timer.start()?;
                f()?;
                timer.stop()?
            }
            Backend::Cpu => {
                let start = Instant::now();
                f()?;
                start.elapsed().as_secs_f64()
            }
        };
        ts.push(t);
    }
    ts.sort_by(f64::total_cmp);
    Ok(ts[REPS / 2])
}

/// One table row: what, milliseconds, GB/s and the ratio to the copy bandwidth.
fn row(what: &str, seconds: f64, bytes: f64, copy: f64) -> String {
    let gbs = bytes / seconds / 1e9;
    format!(
        "| {what} | {:.3} | {gbs:.0} | {:.2} |",
        seconds * 1e3,
        gbs / copy
    )
}

fn run<T: Real>(backend: &Backend, n: usize, b: usize, copy: f64) -> R<Vec<String>> {
    let size = std::mem::size_of::<T>() as f64;
    let mut rows = Vec::new();
    let p = format!("{:?}", T::PRECISION).to_lowercase();
    let u = Field::<T>::from_fn(&[n, n], 1, |[i, j, _]| {
        T::from_f64(((i * 7 + j * 13) % 101) as f64)
    })
    .to(backend)?;
    let mut out = Field::<T>::zeros_on(backend, &[n, n], 0)?;
    let t = median(backend, || {
        suite::lap5::launch(backend, &u, &mut out, T::one())?;
        Ok(())
    })?;
    rows.push(row(
        &format!("{p} dense"),
        t,
        2.0 * (n * n) as f64 * size,
        copy,
    ));

    for share in [1.0, 0.5] {
        let mut grid = BlockGrid::new(backend, &[n, n], &[b, b], 1)?;
        let all: Vec<BlockKey> = grid.geometry().all_keys().collect();
        // Every other block in a fixed pseudo-random pattern for the half.
        let keys: Vec<BlockKey> = all
            .iter()
            .copied()
            .enumerate()
            .filter(|&(k, _)| share >= 1.0 || (k * 2654435761) % 1000 < 500)
            .map(|(_, key)| key)
            .collect();
        grid.update(&keys, &[])?;
        let list = BlockList::present(&grid)?;
        let ub = BlockField::from_dense(&grid, &u.to_host()?, T::zero())?;
        let mut outb = BlockField::<T>::new(&grid, T::zero())?;
        let points = (keys.len() * b * b) as f64;
        let t = median(backend, || {
            suite::lap5::launch_blocks(backend, &list, &ub, &mut outb, T::one())?;
            Ok(())
        })?;
        let label = format!("{p} blocks {b}x{b}, {:.0}% present", share * 100.0);
        rows.push(row(&label, t, 2.0 * points * size, copy));
        if share >= 1.0 {
            let rule = HaloRule::uniform(Side::Clamp, Absent::Value(0.0));
            let exchange = HaloExchange::new(&grid, &rule)?;
            let mut field = BlockField::from_dense(&grid, &u.to_host()?, T::zero())?;
            let t = median(backend, || {
                exchange.run(&mut field)?;
                Ok(())
            })?;
            let bytes = 2.0 * exchange.len() as f64 * size;
            rows.push(row(
                &format!("{p} halo exchange ({} points)", exchange.len()),
                t,
                bytes,
                copy,
            ));
        }
    }
    Ok(rows)
}

fn main() -> R<()> {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<usize>().ok())
    };
    let backend = if args.iter().any(|a| a == "--cpu") {
        Backend::Cpu
    } else {
        Backend::auto()?
    };
    let gpu = matches!(backend, Backend::Cuda(_));
    let n = value("--n").unwrap_or(if gpu { 8192 } else { 4096 });
    let b = value("--block").unwrap_or(32);
    let copy = match &backend {
        Backend::Cuda(c) => c.copy_bandwidth(1 << 30)? / 1e9,
        Backend::Cpu => stencil_runtime::cpu::copy_bandwidth(256 << 20) / 1e9,
    };
    println!(
        "device: {}, copy bandwidth {copy:.0} GB/s (read + write), lap5 on {n}^2",
        backend.name()
    );
    println!();
    println!("| launch | ms | T_eff GB/s | T_eff / copy |");
    println!("| --- | --- | --- | --- |");
    for line in run::<f32>(&backend, n, b, copy)?
        .into_iter()
        .chain(run::<f64>(&backend, n, b, copy)?)
    {
        println!("{line}");
    }
    Ok(())
}
