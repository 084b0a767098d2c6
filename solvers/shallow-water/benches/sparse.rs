//! Malpasset dense against sparse (only wet blocks and their neighbours stored), after a
//! warm-up of 20 steps of each: wall time, the memory of the fields each keeps on the backend (the largest over the run,
//! for sparse), steps, and cell updates per second counted on wet cells (the wet cells
//! the sparse run finds at each regrid, times the steps until the next one).
//!
//! `cargo bench -p shallow-water --bench sparse -- --malpasset ../shared/data/malpasset
//! [--factor 3] [--end SECONDS] [--cpu] [--f64] [--sparse-only] [--host-steps]
//! [--regrid 2:0,4:3]` (factor 1:
//! the data's 15 m cells; 3: 5 m, the terrain resampled bilinearly; end: simulated
//! seconds, default 4000). The steps are decided on the backend (`advance_to`, the
//! clock); `--host-steps` also times both runs with every step decided on the host
//! (`step`, a read-back per step), in the same process; `--regrid EVERY:LAG,..` times the
//! sparse run once per listed cadence of its block updates (every EVERY steps, each chosen
//! LAG steps after its measure; default `sparse::REGRID_EVERY:sparse::REGRID_LAG`).

use shallow_water::*;
use std::time::Instant;
use stencil_runtime::{Backend, Real};
use stencil_tests::bench::{arg, R};

fn run<T: Real>(
    backend: &Backend,
    case: &cases::Case,
    end: f64,
    sparse_only: bool,
    host_steps: bool,
    cadences: &[(u64, u64)],
) -> R<Vec<String>> {
    let mut rows = Vec::new();
    let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
    // Warm-up: the first launches of each kernel load and JIT-compile its PTX and tune
    // its launch shapes (tens of seconds for the KP07 kernels on a cold device).
    let mut warm = ShallowWater::<T>::new(backend, &case.setup)?;
    let mut warm_sparse = SparseShallowWater::<T>::new(backend, &case.setup)?;
    for _ in 0..20 {
        warm.step(f64::INFINITY)?;
        warm_sparse.step(f64::INFINITY)?;
    }
    warm.advance(end, 0.0, 20, &mut |_, _| Ok(()))?;
    warm_sparse.advance(end, 0.0, 20)?;
    drop((warm, warm_sparse));
    if host_steps {
        rows.extend(host_stepped::<T>(backend, case, end, sparse_only)?);
    }
    // Dense, with dry-block skipping where it is on by default (CUDA).
    let mut dense = ShallowWater::<T>::new(backend, &case.setup)?;
    // With --sparse-only (for profiling the sparse run alone) the dense run only starts.
    let dense_end = if sparse_only { 0.0 } else { end };
    let dense_wall = timed(backend, || Ok(dense.advance_to(dense_end)?))?;
    let dense_memory = dense.memory();
    let dense_steps = dense.steps();
    drop(dense);

    // The dense row's rate counts the wet cells the first sparse run finds.
    let dense_row = rows.len();
    let mut first_wet = None;
    for &(every, lag) in cadences {
        let mut sparse = SparseShallowWater::<T>::new(backend, &case.setup)?;
        sparse.set_block_updates(every, lag)?;
        let sparse_wall = timed(backend, || Ok(sparse.advance_to(end)?))?;
        let wet = sparse.wet_cell_steps();
        first_wet.get_or_insert(wet);
        let blocks = sparse.block_count();
        let (changes, changing) = sparse.layout_changes();
        rows.push(format!(
            "| sparse, blocks updated every {every} steps, {lag} late ({} of {blocks} blocks at the end; choosing them {:.2} s, {changes} layout changes {:.2} s) | {} | {sparse_wall:.2} | {:.3} ({:.0}% of dense) | {:.0} |",
            sparse.blocks().len(),
            sparse.choosing_time().as_secs_f64(),
            changing.as_secs_f64(),
            sparse.steps(),
            gib(sparse.peak_memory()),
            100.0 * sparse.peak_memory() as f64 / dense_memory as f64,
            wet / sparse_wall / 1e6
        ));
    }
    if let (false, Some(wet)) = (sparse_only, first_wet) {
        let row = format!(
            "| dense | {dense_steps} | {dense_wall:.2} | {:.3} | {:.0} |",
            gib(dense_memory),
            wet / dense_wall / 1e6
        );
        rows.insert(dense_row, row);
    }
    Ok(rows)
}

/// Both runs with every step decided on the host: wall time and steps.
fn host_stepped<T: Real>(
    backend: &Backend,
    case: &cases::Case,
    end: f64,
    sparse_only: bool,
) -> R<Vec<String>> {
    let mut rows = Vec::new();
    if !sparse_only {
        let mut dense = ShallowWater::<T>::new(backend, &case.setup)?;
        rows.push(host_stepped_row(backend, "dense", end, |limit| {
            dense.step(limit)?;
            Ok((dense.time(), dense.steps()))
        })?);
    }
    let mut sparse = SparseShallowWater::<T>::new(backend, &case.setup)?;
    rows.push(host_stepped_row(backend, "sparse", end, |limit| {
        sparse.step(limit)?;
        Ok((sparse.time(), sparse.steps()))
    })?);
    Ok(rows)
}

/// The row of the run `label`, started at time 0, stepped to `end` with every step
/// decided on the host: `step(limit)` takes a step of at most `limit` seconds and returns
/// the run's time and step count after it.
fn host_stepped_row(
    backend: &Backend,
    label: &str,
    end: f64,
    mut step: impl FnMut(f64) -> Result<(f64, u64), FloodError>,
) -> R<String> {
    let (mut time, mut steps) = (0.0, 0);
    let wall = timed(backend, || {
        while time < end {
            (time, steps) = step(end - time)?;
        }
        Ok(())
    })?;
    Ok(format!("| {label}, host steps | {steps} | {wall:.2} | | |"))
}

fn main() -> R<()> {
    let Some(dir) = arg("--malpasset") else {
        println!("usage: --malpasset DIR [--factor N] [--end SECONDS] [--cpu] [--f64]");
        return Ok(());
    };
    let factor: usize = arg("--factor").map_or(Ok(1), |s| s.parse())?;
    let end: f64 = arg("--end").map_or(Ok(4000.0), |s| s.parse())?;
    let backend = if std::env::args().any(|a| a == "--cpu") {
        Backend::Cpu
    } else {
        Backend::auto()?
    };
    let f64 = std::env::args().any(|a| a == "--f64");
    let sparse_only = std::env::args().any(|a| a == "--sparse-only");
    let host_steps = std::env::args().any(|a| a == "--host-steps");
    let cadences: Vec<(u64, u64)> = match arg("--regrid") {
        Some(list) => list
            .split(',')
            .map(|c| -> R<(u64, u64)> {
                let (every, lag) = c
                    .split_once(':')
                    .ok_or(format!("--regrid takes EVERY:LAG pairs, not {c:?}"))?;
                Ok((every.parse()?, lag.parse()?))
            })
            .collect::<R<_>>()?,
        None => vec![(sparse::REGRID_EVERY, sparse::REGRID_LAG)],
    };
    let case = cases::malpasset_resampled(std::path::Path::new(&dir), factor)?;
    let g = *case.setup.terrain.grid();
    println!(
        "{}: {} x {} cells of {} m, {end} s simulated, on {}, {}\n",
        case.name,
        g.nx,
        g.ny,
        g.dx,
        backend.name(),
        if f64 { "f64" } else { "f32" }
    );
    println!(
        "| run | steps | wall (s) | field memory (GiB) | wet-cell updates per second (millions) |"
    );
    println!("| --- | --- | --- | --- | --- |");
    let rows = if f64 {
        run::<f64>(&backend, &case, end, sparse_only, host_steps, &cadences)?
    } else {
        run::<f32>(&backend, &case, end, sparse_only, host_steps, &cadences)?
    };
    for r in rows {
        println!("{r}");
    }
    Ok(())
}

/// Waits for all work on the backend's device (a simulation queues its work on a stream
/// of its own).
fn wait(backend: &Backend) -> R<()> {
    if let Backend::Cuda(c) = backend {
        c.synchronize_device()?;
    }
    Ok(())
}

/// The wall time (s) of `work`, the backend idle before and after it.
fn timed(backend: &Backend, work: impl FnOnce() -> R<()>) -> R<f64> {
    wait(backend)?;
    let start = Instant::now();
    work()?;
    wait(backend)?;
    Ok(start.elapsed().as_secs_f64())
}
