//! Scaling of shallow water over ranks (the multi-GPU issue's weak and strong scaling),
//! run as `mpirun -np N sw-scaling NX NY [STEPS] [--f64] [--cpu]` (or without mpirun for
//! one rank): a radial dam break on `NX x NY` cells in all, every rank on the device of
//! its local rank (the CPU with `--cpu`), split over the ranks along the Morton curve.
//! Without mpirun it also times the dense solver on the whole domain, the one-device
//! baseline.
//!
//! Rank 0 prints one line per run: cells, ranks, milliseconds per step (the slowest
//! rank's, after warm-up steps), million cell updates per second, and the ghost fills'
//! milliseconds per step timed alone (their traffic if nothing overlapped it).
//!
//! `--blocks 256x64,1024x512` times the run over ranks on blocks of each size in turn
//! (every block present; the default rule without it). `--clocked` lets the devices decide
//! the steps (the clock; over ranks the speeds all-reduced by NCCL), for the dense run and
//! the runs over ranks; without it every step's speed is read back and the host decides.
//!
//! `sw-scaling malpasset FACTOR END [--f64] [--cpu]` runs Malpasset with `FACTOR` cells
//! per data cell along each axis (3: 5 m cells) to `END` seconds on blocks that follow
//! the water, dealt anew over the ranks as it spreads; without mpirun the same run on one
//! rank (`SparseShallowWater::new`) is timed first. Rank 0 prints the wall time, the
//! steps, the layouts and the blocks that changed rank.

use crate::SparseShallowWater;
use crate::{Boundaries, Boundary, Grid, Physics, RankBlocks, Setup, ShallowWater};
use crate::{FloodError, Terrain, Water};
use std::sync::Arc;
use std::time::Instant;
use stencil_ranks::{Op, Ranks};
use stencil_runtime::{Backend, Real};

type Failure = Box<dyn std::error::Error>;

/// How the program is called, for the errors of a bad command line.
const USAGE: &str = "usage: sw-scaling NX NY [STEPS] [--f64] [--cpu] [--clocked] [--blocks 256x64,...], or sw-scaling malpasset FACTOR END [--f64] [--cpu]";

/// Steps before timing (launch shapes tuned, caches warm).
const WARMUP: usize = 20;

/// A radial dam break on `nx x ny` cells of 1 m over a gently waved bed, walls around.
fn setup(nx: usize, ny: usize) -> Result<Setup, Failure> {
    let grid = Grid::new(nx, ny, 1.0, 1.0, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |x, y| 0.2 * (0.01 * x).sin() * (0.013 * y).cos())?;
    let (cx, cy, r2) = (
        nx as f64 / 2.0,
        ny as f64 / 2.0,
        (nx.min(ny) as f64 / 8.0).powi(2),
    );
    let water = Water::from_surface(&terrain, |x, y| {
        if (x - cx).powi(2) + (y - cy).powi(2) < r2 {
            2.5
        } else {
            1.0
        }
    });
    Ok(Setup::new(
        terrain,
        water,
        Boundaries::all(Boundary::Wall),
        Physics::default(),
    ))
}

/// Seconds per step of `steps` steps after the warm-up, the slowest rank's; `run(k)` takes
/// `k` steps.
fn seconds_per_step(
    ranks: &Ranks,
    backend: &Backend,
    steps: usize,
    mut run: impl FnMut(usize) -> Result<(), Failure>,
) -> Result<f64, Failure> {
    run(WARMUP)?;
    backend.synchronize()?;
    ranks.all_reduce(&mut [0.0], Op::Max);
    let start = Instant::now();
    run(steps)?;
    backend.synchronize()?;
    let mut t = [start.elapsed().as_secs_f64() / steps as f64];
    ranks.all_reduce(&mut t, Op::Max);
    Ok(t[0])
}

/// A solver whose steps are timed: the dense one on the whole domain, or the one on blocks
/// over the ranks.
trait Stepping {
    /// Takes `steps` steps decided on the devices (the solver's own `advance_steps`).
    fn advance_steps(&mut self, steps: u64) -> Result<(), FloodError>;

    /// Takes one step of at most `limit` seconds decided on the host (the solver's own
    /// `step`); returns the step taken.
    fn step(&mut self, limit: f64) -> Result<f64, FloodError>;

    /// Takes `k` steps: with `clocked` decided on the devices, else one at a time, each
    /// step's speed read back and decided on the host.
    fn take_steps(&mut self, k: usize, clocked: bool) -> Result<(), Failure> {
        if clocked {
            self.advance_steps(k as u64)?;
        } else {
            for _ in 0..k {
                self.step(f64::INFINITY)?;
            }
        }
        Ok(())
    }
}

// The paths name the solvers' inherent methods, which the trait's share the names of.
impl<T: Real> Stepping for ShallowWater<T> {
    fn advance_steps(&mut self, steps: u64) -> Result<(), FloodError> {
        ShallowWater::advance_steps(self, steps)
    }

    fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        ShallowWater::step(self, limit)
    }
}

impl<T: Real> Stepping for SparseShallowWater<T> {
    fn advance_steps(&mut self, steps: u64) -> Result<(), FloodError> {
        SparseShallowWater::advance_steps(self, steps)
    }

    fn step(&mut self, limit: f64) -> Result<f64, FloodError> {
        SparseShallowWater::step(self, limit)
    }
}

fn run<T: Real>(ranks: &Arc<Ranks>, args: &[String]) -> Result<Vec<String>, Failure> {
    let number = |k: usize, default: usize| -> Result<usize, Failure> {
        match args.get(k) {
            Some(a) => a
                .parse()
                .map_err(|_| format!("{a:?} is not a whole number; {USAGE}").into()),
            None => Ok(default),
        }
    };
    let (nx, ny, steps) = (number(0, 8192)?, number(1, 8192)?, number(2, 100)?);
    let backend = if args.iter().any(|a| a == "--cpu") {
        Backend::Cpu
    } else {
        Backend::cuda(ranks.local_rank())?
    };
    let setup = setup(nx, ny)?;
    let cells = (nx * ny) as f64;
    let precision = std::any::type_name::<T>();
    let line = |what: &str, n: usize, s: f64, ghosts: Option<f64>| {
        let ghosts = ghosts.map_or("-".into(), |g| format!("{:.3}", g * 1e3));
        format!(
            "{what:6} {precision} {nx} x {ny}: {n} rank(s), {:.3} ms/step, {:.0} Mcells/s, ghost fills alone {ghosts} ms/step",
            s * 1e3,
            cells / s / 1e6
        )
    };
    // `--clocked`: steps decided on the devices (the clock; over ranks the speeds
    // all-reduced by NCCL), else each step's speed read back and decided on the host.
    let clocked = args.iter().any(|a| a == "--clocked");
    let how = if clocked { " clocked" } else { "" };
    // Ranks on the CPU decide their steps on the hosts, clocked or not.
    let ranks_how = if clocked && backend != Backend::Cpu {
        " clocked"
    } else {
        ""
    };
    let mut lines = Vec::new();
    if ranks.size() == 1 {
        let mut dense = ShallowWater::<T>::new(&backend, &setup)?;
        let s = seconds_per_step(ranks, &backend, steps, |k| dense.take_steps(k, clocked))?;
        lines.push(line(&format!("dense{how}"), 1, s, None));
    }
    // `--blocks 256x64,1024x512`: the block sizes to time (the default rule without).
    let sizes: Vec<RankBlocks> = match args.iter().position(|a| a == "--blocks") {
        Some(k) => {
            let list = args
                .get(k + 1)
                .ok_or("--blocks takes a list: 256x64,1024x512")?;
            list.split(',')
                .map(|b| -> Result<RankBlocks, Failure> {
                    let (w, h) = b.split_once('x').ok_or(format!("{b:?} is not WxH"))?;
                    Ok(RankBlocks::EveryOf([w.parse()?, h.parse()?]))
                })
                .collect::<Result<_, _>>()?
        }
        None => vec![RankBlocks::Every],
    };
    for blocks in sizes {
        let mut split =
            SparseShallowWater::<T>::over_ranks(&backend, &setup, ranks.clone(), blocks)?;
        let s = seconds_per_step(ranks, &backend, steps, |k| split.take_steps(k, clocked))?;
        let ghosts = split.ghost_fill_seconds(steps)?;
        let ghosts = ghosts.map(|g| {
            let mut v = [g];
            ranks.all_reduce(&mut v, Op::Max);
            v[0]
        });
        let b = split.block_size();
        lines.push(line(
            &format!("ranks{ranks_how}, blocks {} x {}", b[0], b[1]),
            ranks.size(),
            s,
            ghosts,
        ));
    }
    Ok(lines)
}

/// Malpasset on blocks that follow the water: `[FACTOR, END]` after the word `malpasset`.
fn malpasset<T: Real>(ranks: &Arc<Ranks>, args: &[String]) -> Result<Vec<String>, Failure> {
    let factor: usize = args.get(1).map_or(Ok(3), |a| {
        a.parse()
            .map_err(|_| format!("FACTOR {a:?} is not a whole number; {USAGE}"))
    })?;
    let end: f64 = args.get(2).map_or(Ok(4000.0), |a| {
        a.parse()
            .map_err(|_| format!("END {a:?} is not a number of seconds; {USAGE}"))
    })?;
    let backend = if args.iter().any(|a| a == "--cpu") {
        Backend::Cpu
    } else {
        Backend::cuda(ranks.local_rank())?
    };
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset");
    let setup = crate::cases::malpasset_resampled(&data, factor)?.setup;
    let g = *setup.terrain.grid();
    let precision = std::any::type_name::<T>();
    let mut lines = Vec::new();
    let timed = |flow: &mut SparseShallowWater<T>| -> Result<f64, Failure> {
        backend.synchronize()?;
        ranks.all_reduce(&mut [0.0], Op::Max);
        let start = Instant::now();
        flow.advance_to(end)?;
        backend.synchronize()?;
        let mut t = [start.elapsed().as_secs_f64()];
        ranks.all_reduce(&mut t, Op::Max);
        Ok(t[0])
    };
    let what = format!("malpasset {precision} {} x {} cells to {end} s", g.nx, g.ny);
    if ranks.size() == 1 {
        let mut alone = SparseShallowWater::<T>::new(&backend, &setup)?;
        let s = timed(&mut alone)?;
        let steps = alone.steps();
        lines.push(format!(
            "{what}, one rank (sparse): {s:.2} s, {steps} steps"
        ));
    }
    let blocks = RankBlocks::FollowWater;
    let mut split = SparseShallowWater::<T>::over_ranks(&backend, &setup, ranks.clone(), blocks)?;
    let s = timed(&mut split)?;
    let mut moved = [split.blocks_taken_over() as f64];
    ranks.all_reduce(&mut moved, Op::Sum);
    lines.push(format!(
        "{what}, {} rank(s) following the water: {s:.2} s, {} steps, {} layouts, {} blocks changed rank",
        ranks.size(),
        split.steps(),
        split.layout_changes().0 + 1,
        moved[0]
    ));
    Ok(lines)
}

/// The program: its command line from the process's arguments.
pub fn main() {
    let ranks = crate::run::shared_ranks().unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let args: Vec<String> = std::env::args().skip(1).collect();
    let f64 = args.iter().any(|a| a == "--f64");
    let result = match (args.first().is_some_and(|a| a == "malpasset"), f64) {
        (true, true) => malpasset::<f64>(&ranks, &args),
        (true, false) => malpasset::<f32>(&ranks, &args),
        (false, true) => run::<f64>(&ranks, &args),
        (false, false) => run::<f32>(&ranks, &args),
    };
    match result {
        Ok(lines) if ranks.rank() == 0 => println!("{}", lines.join("\n")),
        Ok(_) => {}
        Err(e) => ranks.abort(&e),
    }
}
