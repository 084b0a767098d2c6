//! The GPU benchmark: in one run on one device, the device's copy bandwidth, then each
//! benchmark kernel as generated (PTX through the runtime's CUDA backend, launch shape
//! tuned) and as written by hand in CUDA C (`benchmarks/cuda/stencils.cu`, built with
//! `nvcc -O3 -arch=sm_90` by `benchmarks/cuda/build.sh`), timed with device events on the
//! same fields. Each hand-written kernel comes twice: simple (one point per thread) and
//! tuned (16-byte vector loads and stores, 1, 2 or 4 points along the last axis per
//! thread, each value loaded once per thread), each at its best block shape. Reports T_eff
//! (each input read once, each output written once, over the median time) against the
//! copy bandwidth, and the speed of generated over each hand-written version.
//!
//! Run on a GPU machine: `benchmarks/gpu.sh` (builds the hand-written kernels, runs this).
//! The generated kernels' launch shapes come from the policy `STENCIL_TUNE` names (`on`,
//! the trials of a few proposals, when unset; `search` times every candidate).
//! Options: `--cubin PATH` (default `benchmarks/cuda/build/stencils.cubin`), `--out DIR`
//! (where `gpu_stencils.csv` and `gpu_stencils.md` go; default `target/gpu-bench`).
//! Without a GPU it says so and exits.

use std::fmt::Write as _;
use std::path::PathBuf;
use stencil_runtime::cuda::{KernelCode, Tuning};
use stencil_runtime::{Backend, Cuda, Error, Field, Precision, Real};
use stencil_tests::bench::{arg, median_device_time, R};
use stencil_tests::kernels::suite;

#[path = "gpu_stencils/hand.rs"]
mod hand;
use hand::{best, grid, hand_blocks, tuned_grid, vector_width, Arg, Hand, TUNED_POINTS};

/// Timed launches per measurement (after warm-up); the median is reported.
const REPS: usize = 15;

/// Median seconds of `f`, each call timed alone with device events.
fn median_time(cuda: &Cuda, f: impl FnMut() -> R<()>) -> R<f64> {
    median_device_time(cuda, REPS, f)
}

fn ptr<T: Real>(f: &Field<T>) -> (u64, i32, i32) {
    let (_, p, s) = f.device_args().expect("a device field");
    (p, s[0] as i32, s[1] as i32)
}

fn input<T: Real>(b: &Backend, n: &[usize], halo: usize, seed: usize) -> Result<Field<T>, Error> {
    // Not zeros (METHOD.md): a smooth non-trivial pattern, different per input.
    Field::<T>::from_fn(n, halo, |[i, j, k]| {
        let h = (i * 7 + j * 13 + k * 3 + seed as isize * 5).rem_euclid(101);
        T::from_f64(0.5 + h as f64 / 101.0 - if (i + j) % 3 == 0 { 1.0 } else { 0.0 })
    })
    .to(b)
}

/// max |a - b| / max |a| over the interiors.
fn difference<T: Real>(a: &Field<T>, b: &Field<T>) -> R<f64> {
    let (a, b) = (a.interior()?, b.interior()?);
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.as_f64().abs()));
    let diff = a
        .iter()
        .zip(&b)
        .fold(0.0f64, |m, (x, y)| m.max((x.as_f64() - y.as_f64()).abs()));
    Ok(diff / scale.max(f64::MIN_POSITIVE))
}

/// One row of the table.
struct Row {
    kernel: &'static str,
    precision: &'static str,
    size: String,
    bytes: f64,
    gen_s: f64,
    shape: String,
    hand: Option<(f64, String)>,
    diff: Option<f64>,
    /// The tuned hand-written kernel's time and shape, and its output's difference.
    tuned: HandResult,
}

fn size(n: &[usize]) -> String {
    n.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn prec<T: Real>() -> (&'static str, Precision) {
    match T::PRECISION {
        Precision::F32 => ("f32", Precision::F32),
        Precision::F64 => ("f64", Precision::F64),
    }
}

/// A hand-written kernel's time and launch shape, and its output's difference from the
/// generated kernel's.
type HandResult = (Option<(f64, String)>, Option<f64>);

/// The tuned hand-written `name` (`NAME_tuned_pP_f32`) at its best over the block shapes
/// and points per thread that divide domain `n`, writing `tuned_out`: its time and shape
/// (`BXxBYxBZ vV pP`), and its output's difference from the generated `out`.
fn against_tuned<T: Real>(
    cuda: &Cuda,
    hand: Option<&Hand>,
    name: &str,
    n: &[usize],
    args: &[Arg],
    (out, tuned_out): (&Field<T>, &Field<T>),
) -> R<HandResult> {
    let Some(h) = hand else {
        return Ok((None, None));
    };
    let (pname, _) = prec::<T>();
    let last = n[n.len() - 1];
    let (mut best, mut diff): (Option<(f64, String)>, f64) = (None, 0.0);
    for points in TUNED_POINTS.into_iter().filter(|&p| last.is_multiple_of(p)) {
        let entry = format!("{name}_tuned_p{points}_{pname}");
        for blk in hand_blocks(n.len()) {
            let g = tuned_grid::<T>(n, blk, points);
            let t = median_time(cuda, || h.launch(cuda, &entry, g, blk, args))?;
            if best.as_ref().is_none_or(|b| t < b.0) {
                let shape = blk[..n.len()]
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>();
                best = Some((
                    t,
                    format!("{}v{}p{points}", shape.join("x"), vector_width::<T>()),
                ));
            }
        }
        // Each entry's output is compared (its shapes all write the same values).
        diff = diff.max(difference(out, tuned_out)?);
    }
    Ok((best, Some(diff)))
}

/// The hand-written `name` at its best of `shapes` over domain `n` with `args`, writing
/// `hand_out`: its time and shape, and its output's difference from the generated `out`
/// (`None`s without the hand-written kernels).
#[allow(clippy::too_many_arguments)]
fn against_hand<T: Real>(
    cuda: &Cuda,
    hand: Option<&Hand>,
    name: &str,
    shapes: &[[u32; 3]],
    n: &[usize],
    args: &[Arg],
    out: &Field<T>,
    hand_out: &Field<T>,
) -> R<HandResult> {
    let Some(h) = hand else {
        return Ok((None, None));
    };
    let (t, shape) = best(cuda, shapes, |blk| {
        h.launch(cuda, name, grid(n, blk), blk, args)
    })?;
    let shape = shape[..n.len()]
        .iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x");
    Ok((Some((t, shape)), Some(difference(out, hand_out)?)))
}

/// A table row of a stencil of `reads_writes` passes over the domain's values.
fn stencil_row<T: Real>(
    kernel: &'static str,
    n: &[usize],
    reads_writes: f64,
    gen_s: f64,
    shape: impl ToString,
    (hand, diff): HandResult,
    tuned: HandResult,
) -> Row {
    Row {
        kernel,
        precision: prec::<T>().0,
        size: size(n),
        bytes: reads_writes * (n.iter().product::<usize>() * std::mem::size_of::<T>()) as f64,
        gen_s,
        shape: shape.to_string(),
        hand,
        diff,
        tuned,
    }
}

/// A stencil of the benchmark at precision `T`: the generated kernel and its hand-written
/// twin, which take the same fields and scalars.
struct Stencil<T: Real> {
    /// The table's name for it.
    label: &'static str,
    /// The hand-written kernel's name, less its `_f32` or `_f64`.
    hand: &'static str,
    /// How many passes over the domain's values it reads and writes.
    reads_writes: f64,
    /// The domains it runs on.
    sizes: &'static [&'static [usize]],
    /// Each input's halo and the seed of its values ([`input`]).
    inputs: &'static [(usize, usize)],
    /// Its scalars.
    scalars: &'static [f64],
    /// The generated kernel's code (for its launch shape).
    code: &'static KernelCode,
    /// The generated launch on the inputs, the output and the scalars.
    launch: GeneratedLaunch<T>,
}

/// A generated stencil's launch on its inputs, its output and its scalars.
type GeneratedLaunch<T> = fn(&Backend, &[Field<T>], &mut Field<T>, &[T]) -> Result<(), Error>;

/// The benchmark's stencils at precision `T`.
#[rustfmt::skip]
fn stencils<T: Real>() -> [Stencil<T>; 3] {
    const SQUARES: &[&[usize]] = &[&[8192, 8192], &[16384, 16384]];
    [
        Stencil { label: "jacobi (5-point, 2D)", hand: "jacobi5", reads_writes: 3.0, sizes: SQUARES, inputs: &[(1, 1), (0, 2)], scalars: &[1e-4, 0.8],
            code: &suite::jacobi::CODE, launch: |b, i, o, s| suite::jacobi::launch(b, &i[0], &i[1], o, s[0], s[1]) },
        Stencil { label: "lap9 (9-point, 2D)", hand: "lap9", reads_writes: 2.0, sizes: SQUARES, inputs: &[(1, 3)], scalars: &[1e4],
            code: &suite::lap9::CODE, launch: |b, i, o, s| suite::lap9::launch(b, &i[0], o, s[0]) },
        Stencil { label: "lap7 (7-point, 3D)", hand: "lap7", reads_writes: 2.0, sizes: &[&[512, 512, 512]], inputs: &[(1, 4)], scalars: &[1e4],
            code: &suite::lap7::CODE, launch: |b, i, o, s| suite::lap7::launch(b, &i[0], o, s[0]) },
    ]
}

/// The launch arguments of a hand-written stencil on domain `n`: each field's pointer
/// (the inputs', then the output's), the domain's extent, each field's strides (one per
/// axis beyond the first), then the scalars.
fn hand_args<T: Real>(fields: &[&Field<T>], n: &[usize], scalars: &[T]) -> Vec<Arg> {
    let p = prec::<T>().1;
    let mut args: Vec<Arg> = fields.iter().map(|f| Arg::Ptr(ptr(f).0)).collect();
    args.extend(n.iter().map(|&x| Arg::Int(x as i32)));
    for f in fields {
        let (_, sy, sz) = ptr(f);
        args.extend([sy, sz][..n.len() - 1].iter().map(|&s| Arg::Int(s)));
    }
    args.extend(scalars.iter().map(|x| Arg::Real(x.as_f64(), p)));
    args
}

/// Times stencil `s` on domain `n`, generated and (with `hand`) hand-written: its row.
fn stencil_bench<T: Real>(cuda: &Cuda, hand: Option<&Hand>, s: &Stencil<T>, n: &[usize]) -> R<Row> {
    let b = Backend::Cuda(cuda.clone());
    let (pname, p) = prec::<T>();
    let inputs = s
        .inputs
        .iter()
        .map(|&(halo, seed)| input::<T>(&b, n, halo, seed))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Field::<T>::zeros_on(&b, n, 0)?;
    let scalars: Vec<T> = s.scalars.iter().map(|&x| T::from_f64(x)).collect();
    let gen_s = median_time(cuda, || {
        (s.launch)(&b, &inputs, &mut out, &scalars)?;
        Ok(())
    })?;
    let shape = cuda.launch_shape(s.code, p, [n[0], n[1], n.get(2).copied().unwrap_or(1)]);
    let hand_out = Field::<T>::zeros_on(&b, n, 0)?;
    let fields: Vec<&Field<T>> = inputs.iter().chain([&hand_out]).collect();
    let args = hand_args(&fields, n, &scalars);
    let name = format!("{}_{pname}", s.hand);
    let shapes = hand_blocks(n.len());
    let hand_res = against_hand(cuda, hand, &name, &shapes, n, &args, &out, &hand_out)?;
    // The tuned kernels need whole vectors along x.
    let tuned = if n[0].is_multiple_of(vector_width::<T>()) {
        let tuned_out = Field::<T>::zeros_on(&b, n, 0)?;
        let fields: Vec<&Field<T>> = inputs.iter().chain([&tuned_out]).collect();
        let args = hand_args(&fields, n, &scalars);
        against_tuned(cuda, hand, s.hand, n, &args, (&out, &tuned_out))?
    } else {
        (None, None)
    };
    Ok(stencil_row::<T>(
        s.label,
        n,
        s.reads_writes,
        gen_s,
        shape,
        hand_res,
        tuned,
    ))
}

/// The best time of a two-pass hand-written max |u| (`first`, then `max_final`), each
/// first-pass entry of `entries` (name, points along y per thread, points along x per
/// thread) at each block shape and rows per thread: its time and shape, and the
/// difference of its result from `got`.
fn hand_maxabs<T: Real>(
    cuda: &Cuda,
    h: &Hand,
    u: &Field<T>,
    entries: &[(String, usize, usize)],
    got: T,
) -> R<HandResult> {
    let b = Backend::Cuda(cuda.clone());
    let (pname, _) = prec::<T>();
    let n = [u.extent()[0], u.extent()[1]];
    let (pu, su, _) = ptr(u);
    let result = Field::<T>::zeros_on(&b, &[1], 0)?;
    let (pr, _, _) = ptr(&result);
    let (mut best, mut d) = ((f64::INFINITY, String::new()), 0.0f64);
    for (entry, points, width) in entries {
        for blk in [[32u32, 8, 1], [128, 2, 1], [256, 1, 1], [32, 32, 1]] {
            for rows in [1usize, 4, 16] {
                let g = [
                    n[0].div_ceil(blk[0] as usize * width) as u32,
                    n[1].div_ceil(blk[1] as usize * rows * points) as u32,
                    1,
                ];
                let blocks = (g[0] * g[1]) as usize;
                let partials = Field::<T>::zeros_on(&b, &[blocks], 0)?;
                let (pp, _, _) = ptr(&partials);
                let first = [
                    Arg::Ptr(pu),
                    Arg::Ptr(pp),
                    Arg::Int(n[0] as i32),
                    Arg::Int(n[1] as i32),
                    Arg::Int(su),
                ];
                let last = [Arg::Ptr(pp), Arg::Ptr(pr), Arg::Int(blocks as i32)];
                let t = median_time(cuda, || {
                    h.launch(cuda, entry, g, blk, &first)?;
                    h.launch(
                        cuda,
                        &format!("max_final_{pname}"),
                        [1, 1, 1],
                        [1024, 1, 1],
                        &last,
                    )?;
                    // The value comes back to the host, as the generated launch's does.
                    let _ = result.get([0, 0, 0]);
                    Ok(())
                })?;
                // Every entry, block and row count is checked, not only the fastest.
                let want = result.to_host()?.get([0, 0, 0]).ok_or("no hand result")?;
                d = d.max((want.as_f64() - got.as_f64()).abs() / want.as_f64().abs());
                if t < best.0 {
                    let v = if *width > 1 {
                        format!("v{width}p{points} ")
                    } else {
                        String::new()
                    };
                    best = (t, format!("{}x{} {v}x{rows} rows", blk[0], blk[1]));
                }
            }
        }
    }
    Ok((Some(best), Some(d)))
}

fn maxabs<T: Real>(cuda: &Cuda, hand: Option<&Hand>, n: [usize; 2]) -> R<Row> {
    let b = Backend::Cuda(cuda.clone());
    let (pname, p) = prec::<T>();
    let u = input::<T>(&b, &n, 0, 5)?;
    let mut got = T::zero();
    let gen_s = median_time(cuda, || {
        got = suite::maxabs::launch(&b, &u)?;
        Ok(())
    })?;
    let shape = cuda.launch_shape(&suite::maxabs::CODE, p, [n[0], n[1], 1]);
    let (simple, tuned) = match hand {
        Some(h) => {
            let simple = [(format!("maxabs_{pname}"), 1, 1)];
            let tuned: Vec<_> = TUNED_POINTS
                .into_iter()
                .filter(|&points| {
                    n[1].is_multiple_of(points) && n[0].is_multiple_of(vector_width::<T>())
                })
                .map(|points| {
                    (
                        format!("maxabs_tuned_p{points}_{pname}"),
                        points,
                        vector_width::<T>(),
                    )
                })
                .collect();
            (
                hand_maxabs(cuda, h, &u, &simple, got)?,
                hand_maxabs(cuda, h, &u, &tuned, got)?,
            )
        }
        None => ((None, None), (None, None)),
    };
    Ok(stencil_row::<T>(
        "max |u| (reduction, 2D)",
        &n,
        1.0,
        gen_s,
        shape,
        simple,
        tuned,
    ))
}

fn main() -> R<()> {
    // The trials of a few proposed shapes (the default), or `STENCIL_TUNE=search` (every
    // candidate shape) and the other policies `STENCIL_TUNE` names.
    let tuning = Tuning::from_env()?;
    let cuda = match Cuda::new(0) {
        Ok(c) => c.with_tuning(tuning),
        Err(why) => {
            println!("SKIPPED: the GPU benchmark needs a CUDA device: {why}");
            return Ok(());
        }
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let cubin = arg("--cubin")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("benchmarks/cuda/build/stencils.cubin"));
    let out_dir = arg("--out")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/gpu-bench"));
    cuda.bind()?;
    let hand = match Hand::load(&cubin) {
        Ok(h) => Some(h),
        Err(e) => {
            println!("hand-written kernels not loaded ({e}); run benchmarks/cuda/build.sh first");
            None
        }
    };
    let h = hand.as_ref();
    let copy = cuda.copy_bandwidth(2 << 30)?;
    let mut rows = Vec::new();
    for (single, double) in stencils::<f32>().iter().zip(&stencils::<f64>()) {
        for n in single.sizes {
            rows.push(stencil_bench(&cuda, h, single, n)?);
            rows.push(stencil_bench(&cuda, h, double, n)?);
        }
    }
    rows.push(maxabs::<f32>(&cuda, h, [16384, 16384])?);
    rows.push(maxabs::<f64>(&cuda, h, [16384, 16384])?);

    let mut md = String::new();
    writeln!(
        md,
        "Device: {}. Copy bandwidth (device-to-device, 2 GiB, read + write): {:.0} GB/s.\n",
        cuda.device_name(),
        copy / 1e9
    )?;
    writeln!(md, "| kernel | precision | size | generated (ms) | T_eff (GB/s) | T_eff / copy | shape | hand-written (ms) | T_eff / copy | hand shape | generated speed / hand | max rel. difference | tuned hand (ms) | T_eff / copy | tuned shape | generated speed / tuned | tuned max rel. difference |")?;
    writeln!(
        md,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )?;
    let mut csv = String::from("kernel,precision,size,bytes,generated_ms,generated_gbps,generated_over_copy,shape,hand_ms,hand_gbps,hand_over_copy,hand_shape,speed_ratio,max_rel_difference,tuned_ms,tuned_over_copy,tuned_shape,tuned_speed_ratio,tuned_max_rel_difference,device,copy_gbps\n");
    for r in &rows {
        let g = r.bytes / r.gen_s;
        let columns = |hand: &Option<(f64, String)>| match hand {
            Some((t, s)) => (
                format!("{:.3}", t * 1e3),
                format!("{:.3}", r.bytes / t / copy),
                s.clone(),
                format!("{:.3}", t / r.gen_s),
            ),
            None => ("n/a".into(), "n/a".into(), "n/a".into(), "n/a".into()),
        };
        let (hms, hfrac, hshape, ratio) = columns(&r.hand);
        let (tms, tfrac, tshape, tratio) = columns(&r.tuned.0);
        let diff = r.diff.map_or("n/a".into(), |d| format!("{d:.1e}"));
        let tdiff = r.tuned.1.map_or("n/a".into(), |d| format!("{d:.1e}"));
        writeln!(
            md,
            "| {} | {} | {} | {:.3} | {:.0} | {:.3} | {} | {hms} | {hfrac} | {hshape} | {ratio} | {diff} | {tms} | {tfrac} | {tshape} | {tratio} | {tdiff} |",
            r.kernel, r.precision, r.size, r.gen_s * 1e3, g / 1e9, g / copy, r.shape
        )?;
        writeln!(
            csv,
            "{},{},{},{},{:.6},{:.1},{:.4},{},{hms},{},{hfrac},{hshape},{ratio},{diff},{tms},{tfrac},{tshape},{tratio},{tdiff},{},{:.1}",
            r.kernel,
            r.precision,
            r.size,
            r.bytes,
            r.gen_s * 1e3,
            g / 1e9,
            g / copy,
            r.shape,
            r.hand
                .as_ref()
                .map_or("n/a".into(), |(t, _)| format!("{:.1}", r.bytes / t / 1e9)),
            cuda.device_name(),
            copy / 1e9
        )?;
    }
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join("gpu_stencils.md"), &md)?;
    std::fs::write(out_dir.join("gpu_stencils.csv"), &csv)?;
    println!("{md}");
    println!("wrote {}", out_dir.join("gpu_stencils.{md,csv}").display());
    Ok(())
}
