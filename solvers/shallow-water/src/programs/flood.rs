//! `flood`: shallow-water flood simulation of a built-in case or a scenario file, with a
//! progress bar, pictures, VTK files, gauges, checkpoints and a summary.
//!
//! ```text
//! flood malpasset --out results/malpasset
//! flood my_scenario.toml --precision f64 --backend cpu
//! flood thacker --resume results/thacker/checkpoint.bin
//! flood malpasset --sparse        # only the blocks with water (the default where it pays)
//! flood --list
//! ```

use crate::{cases, FloodError, Run, RunOptions, Scenario, Storage, Summary};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use stencil_ranks::Ranks;
use stencil_runtime::{Backend, Cuda, Real};

/// Shallow-water flood simulation (Kurganov-Petrova 2007) on the CPU or a CUDA GPU.
#[derive(Parser, Debug)]
// A negative number is a value (`--end-time -1` is refused by its check, naming it).
#[command(version, about, allow_negative_numbers = true)]
struct Args {
    /// A built-in case (see --list) or a scenario file (.toml).
    what: Option<String>,
    /// List the built-in cases and stop.
    #[arg(long)]
    list: bool,
    /// Cells per side of the built-in analytic cases (ignored for Malpasset and files).
    #[arg(long, default_value_t = 200)]
    n: usize,
    /// The folder of the Malpasset data (topo.asc, eta0.asc).
    #[arg(long, default_value = "../shared/data/malpasset")]
    data: PathBuf,
    /// Folder for the results (created if missing); default results/<name>.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Where to run: cpu, cuda, cuda:N or auto (CUDA when present).
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Floating-point precision of the state.
    #[arg(long, default_value = "f32", value_parser = ["f32", "f64"])]
    precision: String,
    /// Stop at this simulated time (s) instead of the case's end time.
    #[arg(long)]
    end_time: Option<f64>,
    /// Pictures (and VTK files) per run for a built-in case.
    #[arg(long, default_value_t = 20)]
    frames: usize,
    /// Continue from this checkpoint (written at every output time as checkpoint.bin).
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Store only the 64 x 32 blocks with water and their neighbours (a block grid). The
    /// default when at the start at most half of the blocks would be present.
    #[arg(long, conflicts_with = "dense")]
    sparse: bool,
    /// Store every cell (dense fields). The default for mostly wet domains.
    #[arg(long)]
    dense: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    live: live_view::ServeOption,
}

/// The built-in cases: name and description.
const CASES: [(&str, &str); 6] = [
    (
        "lake-at-rest",
        "still water over bumps and two dry islands (n x n, 20 s)",
    ),
    ("ritter", "1D dam break over a dry bed (n cells, 0.05 s)"),
    ("stoker", "1D dam break over a wet bed (n cells, 0.05 s)"),
    (
        "thacker",
        "planar surface oscillating in a paraboloid, SWASHES (n x n, 3 periods)",
    ),
    (
        "radial",
        "radial dam break over a wavy bed, Manning 0.03 (n x n, 5 s)",
    ),
    (
        "malpasset",
        "the 1959 Malpasset dam break, 15 m cells, Manning 0.033, its 29 gauges (4000 s)",
    ),
];

/// The program: its command line from the process's arguments.
pub fn main() {
    let args = Args::parse();
    // One rank, or the ranks mpirun started (built with `--features mpi`).
    let ranks = crate::run::shared_ranks().unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    if let Err(e) = run(&args, &ranks) {
        if ranks.size() > 1 {
            // Stops every rank, with this one's error.
            ranks.abort(&e);
        }
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args, ranks: &Arc<Ranks>) -> Result<(), FloodError> {
    if args.list {
        for (name, about) in CASES {
            println!("{name:18} {about}");
        }
        return Ok(());
    }
    let Some(what) = &args.what else {
        return Err(FloodError::Config {
            name: "case".into(),
            value: "nothing".into(),
            expected: "a built-in case (flood --list) or a scenario file".into(),
        });
    };
    let mut scenario = scenario(what, args)?;
    if let Some(t) = args.end_time {
        if !(t.is_finite() && t > 0.0) {
            return Err(FloodError::Config {
                name: "--end-time".into(),
                value: t.to_string(),
                expected: "a time above 0 s".into(),
            });
        }
        scenario.end_time = t;
        scenario.output.times.retain(|&x| x < t);
        scenario.output.times.push(t);
    }
    let mut backend = Backend::from_name(&args.backend)?;
    if let (Backend::Cuda(_), true) = (&backend, ranks.size() > 1) {
        if matches!(args.backend.as_str(), "auto" | "cuda") {
            // One device per rank: the rank's index on its node.
            backend = Backend::Cuda(Cuda::new(ranks.local_rank())?);
        }
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&scenario.name));
    let g = *scenario.setup.terrain.grid();
    let storage = match (args.sparse, args.dense, ranks.size() > 1) {
        // Over ranks: sparse over every block.
        (_, _, true) => Storage::Sparse,
        (true, _, _) => Storage::Sparse,
        (_, true, _) => Storage::Dense,
        _ => Storage::Auto,
    }
    .choose(&scenario.setup, &backend)?;
    let split = (ranks.size() > 1).then(|| ranks.clone());
    if ranks.rank() > 0 {
        // Rank 0 speaks for the run.
        let options = RunOptions {
            out,
            progress: false,
            storage,
            serve: args.live.address()?,
        };
        match args.precision.as_str() {
            "f64" => go::<f64>(&backend, scenario, options, args.resume.as_deref(), split)?,
            _ => go::<f32>(&backend, scenario, options, args.resume.as_deref(), split)?,
        };
        return Ok(());
    }
    if let Some(r) = &split {
        println!("{} ranks, each on {}", r.size(), backend.name());
    }
    println!(
        "{}: {} x {} cells of {} x {} m, to t = {} s, {} on {}, {}; results in {}",
        scenario.name,
        g.nx,
        g.ny,
        g.dx,
        g.dy,
        scenario.end_time,
        args.precision,
        backend.name(),
        match storage {
            Storage::Sparse => "sparse (blocks with water)",
            _ => "dense",
        },
        out.display()
    );
    let options = RunOptions {
        out,
        progress: !args.quiet,
        storage,
        serve: args.live.address()?,
    };
    let summary = match args.precision.as_str() {
        "f64" => go::<f64>(&backend, scenario, options, args.resume.as_deref(), split)?,
        _ => go::<f32>(&backend, scenario, options, args.resume.as_deref(), split)?,
    };
    println!("{summary}");
    Ok(())
}

fn go<T: Real>(
    backend: &Backend,
    scenario: Scenario,
    options: RunOptions,
    resume: Option<&Path>,
    ranks: Option<Arc<Ranks>>,
) -> Result<Summary, FloodError> {
    let speaks = ranks.as_ref().is_none_or(|r| r.rank() == 0);
    let run = match resume {
        Some(c) => {
            let run = Run::<T>::resume_over(backend, scenario, options, c, ranks)?;
            if speaks {
                println!(
                    "resumed from {} at step {}, t = {:.3} s",
                    c.display(),
                    run.flow().steps(),
                    run.flow().time()
                );
            }
            run
        }
        None => Run::<T>::start(backend, scenario, options, ranks)?,
    };
    run.run()
}

/// The scenario a command line names.
fn scenario(what: &str, args: &Args) -> Result<Scenario, FloodError> {
    let n = args.n;
    let case = match what {
        "lake-at-rest" => cases::lake_at_rest(n)?,
        "ritter" => named(cases::dam_break(n, 1.0, 0.0)?, "ritter"),
        "stoker" => named(cases::dam_break(n, 1.0, 0.1)?, "stoker"),
        "thacker" => cases::thacker(n)?,
        "radial" => cases::radial(n)?,
        "malpasset" => {
            let case = cases::malpasset(&args.data)?;
            let gauges = cases::malpasset_gauges(&args.data)?;
            let mut scenario = Scenario::from_case(case, args.frames).with_gauges(gauges)?;
            scenario.output.gauge_every = 5.0;
            return Ok(scenario);
        }
        file if file.ends_with(".toml") || Path::new(file).is_file() => {
            return Scenario::read(Path::new(file));
        }
        other => {
            let names: Vec<&str> = CASES.iter().map(|c| c.0).collect();
            return Err(FloodError::Config {
                name: "case".into(),
                value: format!("`{other}`"),
                expected: format!(
                    "a built-in case ({}) or an existing scenario file",
                    names.join(", ")
                ),
            });
        }
    };
    Ok(Scenario::from_case(case, args.frames))
}

fn named(mut case: cases::Case, name: &str) -> cases::Case {
    case.name = name.into();
    case
}
