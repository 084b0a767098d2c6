//! Solves -lap(u) = f on the unit square with u = 0 on the boundary, by weighted-Jacobi
//! sweeps written in the stencil language, and checks the result against the exact
//! solution u = sin(pi x) sin(pi y).
//!
//! ```text
//! cargo run --release -p stencil-examples --bin poisson -- --n 129 --out results/
//! ```
//! Writes `poisson_residual.csv` (iteration, relative residual) and `poisson_solution.png`.

use anyhow::{bail, Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use std::f64::consts::PI;
use std::io::Write;
use std::path::PathBuf;
use stencil_runtime::prelude::*;

#[stencils]
mod kernels {

    /// One weighted-Jacobi sweep for -lap(u) = f with spacing h (h2 = h^2).
    #[stencil]
    pub fn jacobi<T: Real>(u: In<T>, f: In<T>, out: Out<T>, h2: T, omega: T) {
        let r = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] + h2 * f) * 0.25;
        out = u + omega * (r - u);
    }

    /// The squared 2-norm of the residual f + lap(u), and of f.
    #[stencil]
    pub fn residual<T: Real>(u: In<T>, f: In<T>, r2: Sum<T>, f2: Sum<T>, inv_h2: T) {
        let lap = (u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u) * inv_h2;
        let r = f + lap;
        r2.reduce(r * r);
        f2.reduce(f * f);
    }
}

/// Solve the Poisson equation on the unit square with the stencil language.
#[derive(Parser, Debug)]
// A negative number is a value (`--tol -1` is then refused by its check, naming it).
#[command(version, about, allow_negative_numbers = true)]
struct Args {
    /// Interior points per side.
    #[arg(long, default_value_t = 129)]
    n: usize,
    /// Stop when the relative residual |f + lap u| / |f| falls below this.
    #[arg(long, default_value_t = 1e-6)]
    tol: f64,
    /// Give up after this many sweeps.
    #[arg(long, default_value_t = 200_000)]
    max_sweeps: usize,
    /// Jacobi weight.
    #[arg(long, default_value_t = 1.0)]
    omega: f64,
    /// Backend: auto, cpu or cuda (default: the STENCIL_BACKEND variable, else auto).
    #[arg(long)]
    backend: Option<String>,
    /// Folder for the results.
    #[arg(long, default_value = "results")]
    out: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.n < 3 {
        bail!("--n must be at least 3 (got {})", args.n);
    }
    if !(args.tol > 0.0 && args.tol < 1.0) {
        bail!("--tol must be in (0, 1) (got {})", args.tol);
    }
    if !(args.omega > 0.0 && args.omega <= 1.0) {
        bail!(
            "--omega must be in (0, 1] for Jacobi to converge (got {})",
            args.omega
        );
    }
    if args.max_sweeps == 0 {
        bail!("--max-sweeps must be at least 1 (got 0)");
    }
    let backend = match &args.backend {
        Some(name) => Backend::from_name(name)?,
        None => Backend::auto()?,
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create the output folder {}", args.out.display()))?;

    let n = args.n;
    let h = 1.0 / (n + 1) as f64;
    let x = |i: isize| (i + 1) as f64 * h;
    // A grid too large for the memory is an error here (`Field::from_fn` would panic).
    let mut f = Field::<f64>::zeros(&[n, n], 0)?;
    f.fill_with(|[i, j, _]| 2.0 * PI * PI * (PI * x(i)).sin() * (PI * x(j)).sin())?;
    let f = f.to(&backend)?;
    // The halo of one cell holds the boundary value u = 0 and is never written.
    let mut u = Field::<f64>::zeros_on(&backend, &[n, n], 1)?;
    let mut next = Field::<f64>::zeros_on(&backend, &[n, n], 1)?;

    println!(
        "Poisson -lap(u) = f on {n}x{n} interior points, backend {}",
        backend.name()
    );
    let bar = ProgressBar::new(args.max_sweeps as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} sweeps  {msg}  [{elapsed} < {eta}]")
            .expect("valid template"),
    );
    let csv_path = args.out.join("poisson_residual.csv");
    let mut csv = std::fs::File::create(&csv_path)
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    writeln!(csv, "sweep,relative_residual")?;

    let check_every = 200;
    let mut sweeps = 0;
    let mut rel = f64::INFINITY;
    let started = std::time::Instant::now();
    while sweeps < args.max_sweeps {
        // The last check may come sooner: no more than --max-sweeps sweeps.
        let batch = check_every.min(args.max_sweeps - sweeps);
        for _ in 0..batch {
            kernels::jacobi::launch(&backend, &u, &f, &mut next, h * h, args.omega)?;
            std::mem::swap(&mut u, &mut next);
        }
        sweeps += batch;
        let (r2, f2) = kernels::residual::launch(&backend, &u, &f, 1.0 / (h * h))?;
        rel = (r2 / f2).sqrt();
        if !rel.is_finite() {
            bail!("the iteration diverged at sweep {sweeps} (residual {rel})");
        }
        writeln!(csv, "{sweeps},{rel:e}")?;
        bar.set_position(sweeps as u64);
        bar.set_message(format!("residual {rel:.2e}"));
        if rel < args.tol {
            break;
        }
    }
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();

    let u = u.to_host()?;
    let mut max_err = 0.0f64;
    for j in 0..n as isize {
        for i in 0..n as isize {
            let exact = (PI * x(i)).sin() * (PI * x(j)).sin();
            let got = u.get([i, j, 0]).expect("interior point");
            max_err = max_err.max((got - exact).abs());
        }
    }
    let png = args.out.join("poisson_solution.png");
    write_png(&u, &png)?;
    println!(
        "{} after {sweeps} sweeps ({wall:.2} s): relative residual {rel:.2e}, max error vs exact solution {max_err:.2e} (h^2 = {:.2e})",
        if rel < args.tol { "converged" } else { "NOT converged" },
        h * h
    );
    println!("wrote {} and {}", csv_path.display(), png.display());
    if rel >= args.tol {
        bail!(
            "no convergence within {} sweeps; raise --max-sweeps",
            args.max_sweeps
        );
    }
    Ok(())
}

/// Writes the interior of a 2D field as a viridis-coloured PNG (y up).
fn write_png(u: &Field<f64>, path: &std::path::Path) -> Result<()> {
    let (nx, ny) = (u.extent()[0], u.extent()[1]);
    let vals = u.interior()?;
    let (lo, hi) = vals
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let span = if hi > lo { hi - lo } else { 1.0 };
    let img = image::RgbImage::from_fn(nx as u32, ny as u32, |px, py| {
        let j = ny - 1 - py as usize;
        let c = colorous::VIRIDIS.eval_continuous((vals[j * nx + px as usize] - lo) / span);
        image::Rgb([c.r, c.g, c.b])
    });
    img.save(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
