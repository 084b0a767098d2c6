//! `cavity --adaptive`: the run on a wavelet-adaptive grid, with the uniform run's
//! progress, checkpoints and results, plus the picture of the levels and the adaptive
//! grid for ParaView.

use super::{progress_bar, say_resumed, show, start, summary, Args};
use cavity::adaptive::{AdaptiveCavity, AdaptiveCheckpoint, AdaptiveConfig};
use cavity::{CavityError, Check, Config, Until};
use std::time::{Duration, Instant};
use stencil_runtime::Backend;

/// Level 0's nodes per side: the Poisson solve's coarsest grid, small enough to relax to
/// convergence.
const COARSEST: usize = 5;

/// Points per axis of a block on a device (kernels launch over blocks in whole tiles of
/// 32 points along x); the CPU takes the library's default.
const DEVICE_BLOCK: usize = 32;

/// The adaptive settings of `args`: `--n` nodes everywhere (the levels up to it whole),
/// `--levels` more where the details ask.
fn adaptive_config(args: &Args, config: &Config) -> Result<AdaptiveConfig, CavityError> {
    let bad = |name: &'static str, value: String, expected: &'static str| {
        Err(CavityError::Config {
            name,
            value,
            expected,
        })
    };
    if config.n < COARSEST {
        return bad(
            "n",
            config.n.to_string(),
            "at least 5 nodes with --adaptive",
        );
    }
    if args.precision != "f64" {
        return bad("precision", args.precision.clone(), "f64 with --adaptive");
    }
    if args.live.address()?.is_some() {
        return bad(
            "serve",
            "given".into(),
            "no live view with --adaptive (not built yet); leave --serve out",
        );
    }
    if let Until::Time(_) = config.until {
        return bad(
            "t_end",
            "given".into(),
            "steady state with --adaptive (leave --t-end out)",
        );
    }
    let full = ((config.n - 1) / (COARSEST - 1)).ilog2() as u8 + 1;
    // The solver's tree holds at most 12 levels, `full` of them up to `--n`.
    if args.levels > 12 - full.min(12) {
        return bad(
            "levels",
            args.levels.to_string(),
            "at most 8 with --n 33, 7 with --n 65, 6 with --n 129 (the tree holds 12 levels from 5 x 5 nodes)",
        );
    }
    let c = AdaptiveConfig {
        re: config.re,
        n0: COARSEST,
        levels: full.saturating_add(args.levels),
        full,
        eps: args.eps,
        cfl: config.cfl,
        poisson_cycles: config.poisson_cycles,
        ..AdaptiveConfig::default()
    };
    c.validate()?;
    Ok(c)
}

/// Runs the adaptive cavity to steady state and writes its results.
pub fn run(args: &Args, config: &Config) -> Result<(), CavityError> {
    let backend = Backend::from_name(&args.backend)?;
    let mut adaptive = adaptive_config(args, config)?;
    if matches!(backend, Backend::Cuda(_)) {
        // A device launches over whole thread-block tiles: 32 points along x.
        adaptive.block = DEVICE_BLOCK;
    }
    let (checkpoint_path, resumed, reference) =
        start(args, config, "checkpoint-adaptive.bin", |path| {
            let c = AdaptiveCheckpoint::read(path)?;
            c.matches(&adaptive)?;
            Ok(c)
        })?;
    let mut flow = AdaptiveCavity::new(&backend, &adaptive)?;
    flow.graph = !args.no_graph;
    if let Some(c) = &resumed {
        c.restore(&mut flow)?;
        say_resumed(&checkpoint_path, c.step, c.time);
    }
    println!(
        "lid-driven cavity on an adaptive grid: Re = {}, {n} x {n} nodes everywhere, up to {f} x {f} where the details exceed {}, on {}, output in {}",
        config.re,
        adaptive.eps,
        backend.name(),
        args.out.display(),
        n = config.n,
        f = adaptive.finest_points(),
    );
    let bar = progress_bar(config);
    let start = Instant::now();
    let mut last_checkpoint = Instant::now();
    let mut first_change = None;
    let mut last: Option<Check> = None;
    let mut saved: Result<(), CavityError> = Ok(());
    let outcome = flow.run_to_steady(
        config.tolerance,
        config.check_every as u64,
        config.max_steps,
        |flow, check| {
            last = Some(*check);
            show(&bar, config, check, &mut first_change);
            bar.set_message(format!(
                "step {} t {:.3} dw/dt {:.2e} points {:.1}%",
                check.step,
                check.time,
                check.change,
                100.0 * flow.tree().present_fraction()
            ));
            if last_checkpoint.elapsed() >= Duration::from_secs_f64(args.checkpoint_every) {
                saved = AdaptiveCheckpoint::of(flow).and_then(|c| c.write(&checkpoint_path));
                last_checkpoint = Instant::now();
            }
            saved.is_ok()
        },
    );
    bar.finish_and_clear();
    saved?;
    let outcome = outcome?;
    AdaptiveCheckpoint::of(&flow)?.write(&checkpoint_path)?;
    let wall = start.elapsed().as_secs_f64();
    flow.poisson_solve_exactly()?;
    let (n, steps) = (adaptive.finest_points(), (flow.step, flow.time));
    let mut summary = summary(
        config,
        n,
        &backend,
        "f64".into(),
        outcome,
        steps,
        wall,
        last,
    );
    let files =
        cavity::write_adaptive_results(&mut flow, &args.out, reference.as_ref(), &mut summary)?;
    print!("{summary}");
    println!(
        "adaptive grid:  {:.2}% of the {n} x {n} points present, {} blocks",
        100.0 * flow.tree().present_fraction(),
        flow.tree().grid().len(),
        n = adaptive.finest_points()
    );
    println!("wrote:");
    for f in files {
        println!("  {}", f.display());
    }
    Ok(())
}
