//! `smooth`: anisotropic vertex smoothing of a triangular mesh with a metric.
//!
//! ```text
//! smooth ../shared/data/meshes/smooth_2d.vtu --method pain --sweeps 10 --out smoothed.vtu
//! smooth --generate 2000 --method min-quality --sweeps 5 --out front.vtu
//! smooth --generate 2000 --metric-grid 4000 --texture --backend cuda --out front.vtu
//! ```
//!
//! With `--serve`, a page's checkpoint is the mesh so far, `<out>.checkpoint.vtu`: smooth
//! it further by giving it as the input.

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use live_view::{LiveView, Progress};
use mesh_smoothing::colour::{greedy, jones_plassmann};
use mesh_smoothing::metric_grid::MetricGrid;
use mesh_smoothing::quality::{min_mean, qualities};
use mesh_smoothing::smooth::{serially, Method, Smoother};
use mesh_smoothing::{generate, live, picture, vtu, Mesh, MeshError};
use std::path::PathBuf;
use std::time::Instant;
use stencil_runtime::Filtering;

/// Smooths a triangular mesh towards unit quality in its metric.
#[derive(Parser, Debug)]
// A negative number is a value (`--generate -4` is then named as invalid).
#[command(version, about, allow_negative_numbers = true)]
struct Args {
    /// The mesh: `.vtu` with a `Metric` point array, or Gmsh 4 ASCII `.msh` with a
    /// `Metric` node-data view.
    input: Option<PathBuf>,
    /// Instead of reading one, generate an N x N-vertex square with a circular front.
    #[arg(long)]
    generate: Option<usize>,
    /// laplacian, smart-laplacian, pain or min-quality.
    #[arg(long, default_value = "min-quality")]
    method: String,
    /// Sweeps over every colour.
    #[arg(long, default_value_t = 10)]
    sweeps: usize,
    /// Colouring: greedy or jones-plassmann.
    #[arg(long, default_value = "greedy")]
    colouring: String,
    /// Where the kernels run: cpu, cuda, cuda:N or auto (a GPU if there is one).
    #[arg(long, default_value = "auto")]
    backend: String,
    /// On the CPU, move a colour's vertices one by one instead of in parallel (same
    /// result).
    #[arg(long)]
    serial: bool,
    /// Read the metric at candidate positions from a super-sampled copy of the metric
    /// field with N x N samples (bilinear) instead of the cavity's triangles
    /// (barycentric).
    #[arg(long, value_name = "N")]
    metric_grid: Option<usize>,
    /// With --metric-grid on a GPU: read the grid through textures with hardware
    /// filtering.
    #[arg(long)]
    texture: bool,
    /// The smoothed mesh (`.vtu`, with quality as cell data); pictures of the quality
    /// before and after go beside it.
    #[arg(long, default_value = "smoothed.vtu")]
    out: PathBuf,
    /// Width of the pictures in pixels (0: none).
    #[arg(long, default_value_t = 1200)]
    picture: u32,
    #[command(flatten)]
    live: live_view::ServeOption,
}

fn main() {
    stencil_runtime::programs::exit_on_error(run(Args::parse()));
}

fn run(args: Args) -> Result<(), MeshError> {
    if args.serial {
        return serially(move || smooth(args))?;
    }
    smooth(args)
}

/// The most pixels across a picture, and samples along each axis of `--metric-grid`.
const MAX_PICTURE: u32 = 16_384;
const MAX_METRIC_GRID: usize = 16_384;

/// The options that can be checked before any work: each bad one an error naming it, its
/// value and what it must be.
fn check(args: &Args) -> Result<(), MeshError> {
    let bad = |option: &str, value: &dyn std::fmt::Display, expected: &str| {
        Err(MeshError::Invalid(format!(
            "{option} {value} is invalid: {expected}"
        )))
    };
    match (args.metric_grid, args.texture) {
        (Some(n), _) if !(2..=MAX_METRIC_GRID).contains(&n) => {
            return bad(
                "--metric-grid",
                &n,
                &format!("the grid needs 2 to {MAX_METRIC_GRID} samples per axis"),
            )
        }
        (None, true) => {
            return Err(MeshError::Invalid(
                "--texture reads the super-sampled metric: give --metric-grid N too".into(),
            ))
        }
        _ => {}
    }
    if args.picture > MAX_PICTURE {
        return bad(
            "--picture",
            &args.picture,
            &format!("a width of at most {MAX_PICTURE} pixels (0: no pictures)"),
        );
    }
    if args.out.is_dir() {
        return bad(
            "--out",
            &args.out.display(),
            "the smoothed mesh's file (e.g. smoothed.vtu), not a folder",
        );
    }
    if args.out.extension().is_none_or(|e| e != "vtu") {
        return bad(
            "--out",
            &args.out.display(),
            "a `.vtu` file (the smoothed mesh is written as VTK XML)",
        );
    }
    // The output's folder is made before the work, so that a bad one costs no sweeps.
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| MeshError::Input {
            file: dir.display().to_string(),
            message: format!("cannot create it (the folder of --out): {e}"),
        })?;
    }
    Ok(())
}

fn smooth(args: Args) -> Result<(), MeshError> {
    check(&args)?;
    let backend = stencil_runtime::Backend::from_name(&args.backend)?;
    let method: Method = args.method.parse()?;
    let mut mesh: Mesh = match (&args.input, args.generate) {
        (Some(path), None) if path.extension().is_some_and(|e| e == "msh") => {
            mesh_smoothing::gmsh::read_mesh(path)?
        }
        (Some(path), None) => vtu::read_mesh(path)?,
        (None, Some(n)) => generate::square_with_front(n, 0.3)?,
        _ => {
            return Err(MeshError::Invalid(
                "give either an input mesh or --generate N".into(),
            ))
        }
    };
    let colouring = match args.colouring.as_str() {
        "greedy" => greedy(&mesh),
        "jones-plassmann" => jones_plassmann(&mesh, 1),
        other => {
            return Err(MeshError::Invalid(format!(
                "unknown colouring `{other}`: greedy or jones-plassmann"
            )))
        }
    };
    let q0 = qualities(&mesh);
    let (min0, mean0) = min_mean(&q0);
    println!(
        "{} vertices, {} triangles, {} colours on {}; quality min {min0:.4} mean {mean0:.4}",
        mesh.points.len(),
        mesh.triangles.len(),
        colouring.colours.len(),
        backend.name()
    );
    let mut smoother = Smoother::new(&mesh, &colouring, &backend)?;
    // `check` refused a texture without a grid.
    if let Some(n) = args.metric_grid {
        let start = Instant::now();
        let grid = MetricGrid::sample(&mesh, n);
        let filtering = if args.texture {
            Filtering::Hardware
        } else {
            Filtering::Software
        };
        smoother = smoother.with_metric_grid(&grid, filtering)?;
        println!(
            "metric grid: {n} x {n} samples ({filtering:?} filtering), built in {:.2} s",
            start.elapsed().as_secs_f64()
        );
    }
    let stem = args.out.with_extension("");
    if args.picture > 0 {
        picture::write_png(&mesh, &q0, args.picture, &stem.with_extension("before.png"))?;
    }
    let bar = if mesh.points.len() > 1_000_000 {
        ProgressBar::new(args.sweeps as u64)
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) = ProgressStyle::with_template("{bar:40} sweep {pos}/{len} {elapsed}") {
        bar.set_style(style);
    }
    let mut live = match args.live.address()? {
        Some(address) => {
            let view = LiveView::serve(address, &live::description(&mesh, &args.method))?;
            println!("{}{}/", live_view::SERVING_AT, view.address());
            Some(view)
        }
        None => None,
    };
    let checkpoint = stem.with_extension("checkpoint.vtu");
    println!("| sweep | min quality | mean quality | vertices moved | seconds |");
    println!("| --- | --- | --- | --- | --- |");
    for s in 1..=args.sweeps {
        if let Some(view) = &mut live {
            let progress = Progress {
                time: (s - 1) as f64,
                step: (s - 1) as u64,
                fraction: (s - 1) as f64 / args.sweeps as f64,
            };
            let write = || -> Result<String, MeshError> {
                vtu::write(&checkpoint, &mesh, &[("quality", &qualities(&mesh))])?;
                Ok(format!(
                    "after sweep {}: {} (continue with smooth {} --sweeps N)",
                    s - 1,
                    checkpoint.display(),
                    checkpoint.display()
                ))
            };
            view.tick(progress, |r| live::draw(&mesh, r), write)?;
        }
        let start = Instant::now();
        let moved = smoother.sweep(method)?;
        backend.synchronize()?;
        let seconds = start.elapsed().as_secs_f64();
        smoother.write_back(&mut mesh)?;
        let (min, mean) = min_mean(&qualities(&mesh));
        bar.inc(1);
        bar.suspend(|| println!("| {s} | {min:.4} | {mean:.4} | {moved} | {seconds:.3} |"));
    }
    bar.finish_and_clear();
    if let Some(view) = &mut live {
        let progress = Progress {
            time: args.sweeps as f64,
            step: args.sweeps as u64,
            fraction: 1.0,
        };
        view.finish(progress, |r| live::draw(&mesh, r))?;
    }
    let q = qualities(&mesh);
    let (min, mean) = min_mean(&q);
    println!("before: min {min0:.4} mean {mean0:.4}; after: min {min:.4} mean {mean:.4}");
    vtu::write(&args.out, &mesh, &[("quality", &q)])?;
    if args.picture > 0 {
        picture::write_png(&mesh, &q, args.picture, &stem.with_extension("after.png"))?;
    }
    println!("wrote {}", args.out.display());
    Ok(())
}
