//! `cavity`: the lid-driven cavity to steady state (or a given time), with a progress bar,
//! checkpoints, and pictures, profiles, a VTK file and a summary at the end.
//!
//! ```text
//! cavity --re 1000 --n 257 --out results/
//! cavity --re 1000 --n 65 --adaptive --levels 4 --eps 1e-3 --out results/
//! mpirun -np 2 cavity --re 1000 --n 257 --out results/   # built with --features mpi
//! ```
//!
//! Over several ranks (`mpirun`) each rank steps a slab of rows; rank 0 shows the
//! progress and writes the files, which are those of one rank.

mod adaptive;

use cavity::{Cavity, CavityError, Check, Checkpoint, Config, Outcome, Reference, Summary, Until};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use live_view::{LiveView, Progress};
use multigrid::Precision;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use stencil_ranks::Ranks;
use stencil_runtime::{Backend, Cuda};

/// Lid-driven cavity (vorticity-stream function, RK4, multigrid) to steady state.
#[derive(Parser, Debug)]
// A negative number is a value (`--re -1` is refused by the option's check, naming it).
#[command(version, about, allow_negative_numbers = true)]
struct Args {
    /// Reynolds number.
    #[arg(long, default_value_t = 100.0)]
    re: f64,
    /// Nodes per side, 2^k + 1 (65, 129, 257, 513, ...).
    #[arg(long, default_value_t = 129)]
    n: usize,
    /// Folder for the results and the checkpoint (created if missing).
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Steady-state tolerance: relative change of the vorticity per unit time.
    #[arg(long, default_value_t = 1e-5)]
    tol: f64,
    /// Run to this simulated time instead of to steady state.
    #[arg(long)]
    t_end: Option<f64>,
    /// Where to run: cpu, cuda, cuda:N or auto (CUDA when present).
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Precision of the Poisson solver: f64, or mixed (multigrid in f32, residual in f64).
    #[arg(long, default_value = "f64", value_parser = ["f64", "mixed"])]
    precision: String,
    /// Time step as a fraction of the RK4 stability estimate.
    #[arg(long, default_value_t = 0.8)]
    cfl: f64,
    /// Multigrid cycles per RK4 stage.
    #[arg(long, default_value_t = 1)]
    poisson_cycles: usize,
    /// Steps between checks (steady state, stability, time step, progress).
    #[arg(long, default_value_t = 50)]
    check_every: usize,
    /// Give up after this many steps.
    #[arg(long, default_value_t = 10_000_000)]
    max_steps: u64,
    /// Seconds of wall time between checkpoints.
    #[arg(long, default_value_t = 60.0)]
    checkpoint_every: f64,
    /// Continue from the checkpoint in the output folder.
    #[arg(long)]
    resume: bool,
    /// Launch kernels one by one instead of replaying a recorded CUDA graph per step.
    #[arg(long)]
    no_graph: bool,
    /// Run on a wavelet-adaptive grid: `--n` nodes per side everywhere, up to `--levels`
    /// levels finer where the details of the flow exceed `--eps` (in blocks of 16 nodes
    /// per side on the CPU, 32 on a GPU, so the grid depends on the backend).
    #[arg(long)]
    adaptive: bool,
    /// With `--adaptive`: levels of refinement above `--n` (the finest grid has
    /// `(n - 1) 2^levels + 1` nodes per side).
    #[arg(long, default_value_t = 2)]
    levels: u8,
    /// With `--adaptive`: the threshold of the wavelet details, relative to the largest
    /// vorticity and stream function.
    #[arg(long, default_value_t = 1e-3)]
    eps: f64,
    #[command(flatten)]
    live: live_view::ServeOption,
}

fn main() {
    let args = Args::parse();
    // One rank, or the ranks mpirun started (built with `--features mpi`).
    #[allow(clippy::arc_with_non_send_sync)]
    let ranks = match Ranks::from_env() {
        Ok(r) => Arc::new(r),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let result = run(args, &ranks);
    if let (Err(e), true) = (&result, ranks.size() > 1) {
        // One rank's failure stops every rank, with the error named.
        ranks.abort(e);
    }
    stencil_runtime::programs::exit_on_error(result);
}

fn config(a: &Args) -> Config {
    Config {
        re: a.re,
        n: a.n,
        precision: if a.precision == "mixed" {
            Precision::Mixed
        } else {
            Precision::F64
        },
        tolerance: a.tol,
        until: a.t_end.map_or(Until::Steady, Until::Time),
        cfl: a.cfl,
        poisson_cycles: a.poisson_cycles,
        check_every: a.check_every,
        max_steps: a.max_steps,
        graph: !a.no_graph,
        poisson_schedule: None,
    }
}

fn run(args: Args, ranks: &Arc<Ranks>) -> Result<(), CavityError> {
    // Everything that can be wrong with the request is found before any work.
    let config = config(&args);
    config.validate()?;
    let split = ranks.size() > 1;
    let speaks = ranks.rank() == 0;
    if split && args.adaptive {
        return Err(CavityError::Ranks(
            "--adaptive runs on one rank; start the program without mpirun".into(),
        ));
    }
    if !(args.checkpoint_every > 0.0 && args.checkpoint_every.is_finite()) {
        return Err(CavityError::Config {
            name: "checkpoint_every",
            value: args.checkpoint_every.to_string(),
            expected: "a positive number of seconds",
        });
    }
    if args.adaptive {
        return adaptive::run(&args, &config);
    }
    let (checkpoint_path, resumed, reference) = start(&args, &config, "checkpoint.bin", |path| {
        let c = Checkpoint::read(path)?;
        c.matches(&config)?;
        if let Until::Time(end) = config.until {
            if c.time > end {
                return Err(CavityError::Checkpoint(format!(
                    "the checkpoint is at t = {}, past --t-end {end}; give a later --t-end or start afresh without --resume",
                    c.time
                )));
            }
        }
        Ok(c)
    })?;
    let serve = args.live.address()?;
    let mut backend = Backend::from_name(&args.backend)?;
    if let (Backend::Cuda(_), true) = (&backend, split) {
        if matches!(args.backend.as_str(), "auto" | "cuda") {
            // One device per rank: the rank's index on its node.
            backend = Backend::Cuda(Cuda::new(ranks.local_rank())?);
        }
    }

    let mut flow = if split {
        Cavity::over_ranks(&backend, &config, ranks.clone())?
    } else {
        Cavity::new(&backend, &config)?
    };
    if let Some(c) = &resumed {
        c.restore(&mut flow)?;
        if speaks {
            say_resumed(&checkpoint_path, c.step, c.time);
        }
    }
    if speaks {
        println!(
            "lid-driven cavity: Re = {}, {n} x {n} nodes, on {}, output in {}",
            config.re,
            backend.name(),
            args.out.display(),
            n = config.n
        );
    }
    if split && speaks {
        println!("{} ranks, each on {}", ranks.size(), backend.name());
    }

    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // Without a handler Ctrl-C still stops the run, losing the time since the last
        // checkpoint.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }

    // Rank 0 serves the view; over several ranks every rank takes part in gathering the
    // whole grid for its frames and the checkpoints it asks for.
    let serving = serve.is_some();
    let mut live = match serve {
        Some(address) if speaks => {
            let view = LiveView::serve(address, &cavity::live::description(config.re, config.n))?
                .interrupted_by(interrupted.clone());
            println!("{}{}/", live_view::SERVING_AT, view.address());
            Some((view, cavity::live::Painter::new(&flow)))
        }
        _ => None,
    };

    let bar = if speaks {
        progress_bar(&config)
    } else {
        ProgressBar::hidden()
    };
    let start = Instant::now();
    let mut last_checkpoint = Instant::now();
    let mut first_change: Option<f64> = None;
    let mut last = None;
    let mut saved: Result<(), CavityError> = Ok(());
    let mut fraction = 0.0;
    let outcome = flow.run(|flow, check| {
        last = Some(*check);
        fraction = show(&bar, &config, check, &mut first_change);
        // Over ranks the view draws the whole grid, gathered from every rank while a page
        // watches (a collective call, decided alike on every rank); one rank draws its
        // own fields.
        let watched = live.as_ref().is_some_and(|(view, _)| view.viewers() > 0);
        let gather = split && serving && flow.on_any_rank(watched);
        let whole = match gather.then(|| flow.gather_whole()).transpose() {
            Ok(whole) => whole.flatten(),
            Err(e) => {
                saved = Err(e);
                None
            }
        };
        let ready = !split || whole.is_some();
        if let (Some((view, painter)), Ok(()), true) = (&mut live, &saved, ready) {
            let (psi, w) = whole.as_ref().map_or((&flow.psi, &flow.w), |(p, w)| (p, w));
            let progress = Progress {
                time: check.time,
                step: check.step,
                fraction,
            };
            let write = || -> Result<String, CavityError> {
                Checkpoint::of_fields(flow, psi, w)?.write(&checkpoint_path)?;
                Ok(format!(
                    "checkpoint written at step {}: {}",
                    flow.step,
                    checkpoint_path.display()
                ))
            };
            saved = view.tick(progress, |r| painter.draw(psi, w, r), write);
        }
        // Decisions every rank takes alike (each is a collective call): an interrupt, a
        // due checkpoint or a failed write on any rank counts for all.
        // A failure is decided first, so that a checkpoint on other ranks' time cannot
        // replace rank 0's error.
        let failed = flow.on_any_rank(saved.is_err());
        let stop = flow.on_any_rank(interrupted.load(Ordering::SeqCst));
        let due = last_checkpoint.elapsed() >= Duration::from_secs_f64(args.checkpoint_every);
        if !failed && flow.on_any_rank(stop || due) {
            // The whole grid the view gathered at this check serves the checkpoint too.
            let checkpoint = match &whole {
                Some((psi, w)) => Checkpoint::of_fields(flow, psi, w),
                None => Checkpoint::of(flow),
            };
            saved = checkpoint.and_then(|c| write_checkpoint(flow, &c, &checkpoint_path));
            last_checkpoint = Instant::now();
        }
        !failed && !stop && !flow.on_any_rank(saved.is_err())
    });
    bar.finish_and_clear();
    saved?;
    let outcome = outcome?;
    // The state at the end, for a later --resume (e.g. with a later --t-end).
    write_checkpoint(&flow, &Checkpoint::of(&flow)?, &checkpoint_path)?;
    let wall = start.elapsed().as_secs_f64();
    if outcome == Outcome::Interrupted && speaks {
        println!(
            "interrupted at step {}; continue with --resume (checkpoint {})",
            flow.step,
            checkpoint_path.display()
        );
    }
    // A stream function consistent with the final vorticity, for the pictures.
    flow.poisson_solve_exactly()?;
    let whole = if serving { flow.gather_whole()? } else { None };
    if let Some((view, painter)) = &mut live {
        let (psi, w) = whole.as_ref().map_or((&flow.psi, &flow.w), |(p, w)| (p, w));
        let progress = Progress {
            time: flow.time,
            step: flow.step,
            fraction,
        };
        view.finish(progress, |r| painter.draw(psi, w, r))?;
    }
    let (precision, steps) = (args.precision.clone(), (flow.step, flow.time));
    let mut summary = summary(
        &config, config.n, &backend, precision, outcome, steps, wall, last,
    );
    let files = cavity::write_results(&mut flow, &args.out, reference.as_ref(), &mut summary)?;
    if !speaks {
        return Ok(());
    }
    print!("{summary}");
    if reference.is_none() {
        println!(
            "(no reference data for Re = {} in ../shared/data/cavity)",
            config.re
        );
    }
    println!("wrote:");
    for f in files {
        println!("  {}", f.display());
    }
    Ok(())
}

/// Writes `checkpoint` of `flow` to `path` from the rank that writes the run's files.
fn write_checkpoint(
    flow: &Cavity,
    checkpoint: &Checkpoint,
    path: &std::path::Path,
) -> Result<(), CavityError> {
    if flow.writes_output() {
        checkpoint.write(path)?;
    }
    Ok(())
}

/// What every run does first: the output folder made and proved writable, the
/// checkpoint `name` in it read with `read` if `--resume` asks, and the reference data of
/// the Reynolds number, if any.
pub(crate) fn start<C>(
    args: &Args,
    config: &Config,
    name: &str,
    read: impl FnOnce(&std::path::Path) -> Result<C, CavityError>,
) -> Result<(PathBuf, Option<C>, Option<Reference>), CavityError> {
    cavity::prepare_output(&args.out)?;
    let checkpoint_path = args.out.join(name);
    let resumed = if args.resume {
        Some(read(&checkpoint_path)?)
    } else {
        None
    };
    let reference = Reference::find(config.re)
        .map(|p| Reference::load(&p))
        .transpose()?;
    Ok((checkpoint_path, resumed, reference))
}

/// What a run of `config` on `n` nodes per side did, before its results are written (which
/// fill in the stream function's minimum and the comparison): where it ran, the Poisson
/// precision, how it ended, `(steps, time)` at the end, its wall time and its last check.
#[allow(clippy::too_many_arguments)]
pub(crate) fn summary(
    config: &Config,
    n: usize,
    backend: &Backend,
    precision: String,
    outcome: Outcome,
    (steps, time): (u64, f64),
    wall_seconds: f64,
    last: Option<Check>,
) -> Summary {
    Summary {
        re: config.re,
        n,
        backend: backend.name(),
        precision,
        outcome: match outcome {
            Outcome::Steady => "steady".into(),
            Outcome::ReachedTime => "reached the end time".into(),
            Outcome::Interrupted => "interrupted".into(),
        },
        steps,
        time,
        wall_seconds,
        change: last.map_or(f64::NAN, |c| c.change),
        psi_min: (0.0, 0.0, 0.0),
        comparison: None,
    }
}

/// Tells that the run continues from the checkpoint at `path`.
pub(crate) fn say_resumed(path: &std::path::Path, step: u64, time: f64) {
    println!(
        "resumed from {} at step {step}, t = {time:.4}",
        path.display()
    );
}

/// The progress bar of a run to `config.until`.
pub(crate) fn progress_bar(config: &Config) -> ProgressBar {
    let bar = ProgressBar::new(1000);
    let style =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] [{bar:30}] {msg} (ETA {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    bar.set_style(style);
    if let Until::Time(_) = config.until {
        bar.set_message("starting");
    } else {
        bar.set_message("to steady state");
    }
    bar
}

/// Progress: toward the end time, or toward steady state measured on a log scale of the
/// change per unit time (from the first check's to the tolerance). Returns the fraction
/// done.
pub(crate) fn show(
    bar: &ProgressBar,
    config: &Config,
    check: &Check,
    first: &mut Option<f64>,
) -> f64 {
    let fraction = match config.until {
        Until::Time(end) => check.time / end,
        Until::Steady => {
            let c0 = *first.get_or_insert(check.change.max(config.tolerance * 10.0));
            let done = (c0 / check.change.max(1e-300)).ln() / (c0 / config.tolerance).ln();
            done.clamp(0.0, 1.0)
        }
    };
    bar.set_position((fraction * 1000.0) as u64);
    bar.set_message(format!(
        "step {} t {:.3} dt {:.2e} dw/dt {:.2e} poisson {:.1e}",
        check.step, check.time, check.dt, check.change, check.poisson_residual
    ));
    fraction
}
