//! The GPU benchmark: in one run on one device, the device's copy bandwidth, then each
//! benchmark kernel as generated (PTX through the runtime's CUDA backend, launch shape
//! tuned) and as written by hand in CUDA C (`benchmarks/cuda/stencils.cu`, built with
//! `nvcc -O3 -arch=sm_90` by `benchmarks/cuda/build.sh`), timed with device events on the
//! same fields. Reports T_eff (each input read once, each output written once, over the
//! median time) against the copy bandwidth, and the speed of generated over hand-written.
//!
//! Run on a GPU machine: `benchmarks/gpu.sh` (builds the hand-written kernels, runs this).
//! Options: `--cubin PATH` (default `benchmarks/cuda/build/stencils.cubin`), `--out DIR`
//! (where `gpu_stencils.csv` and `gpu_stencils.md` go; default `target/gpu-bench`).
//! Without a GPU it says so and exits.

use cudarc::driver::{result, sys};
use std::ffi::{c_void, CString};
use std::fmt::Write as _;
use std::path::PathBuf;
use stencil_runtime::cuda::Tuning;
use stencil_runtime::{Backend, Cuda, Error, Field, Precision, Real};
use stencil_tests::bench::{arg, R};
use stencil_tests::kernels::suite;

/// Timed launches per measurement (after warm-up); the median is reported.
const REPS: usize = 15;

/// Median seconds of `f`, each call timed alone with device events.
fn median_time(cuda: &Cuda, mut f: impl FnMut() -> R<()>) -> R<f64> {
    for _ in 0..3 {
        f()?;
    }
    cuda.synchronize()?;
    let mut timer = cuda.timer()?;
    let mut ts = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        timer.start()?;
        f()?;
        ts.push(timer.stop()?);
    }
    ts.sort_by(|a, b| a.total_cmp(b));
    Ok(ts[REPS / 2])
}

/// The hand-written kernels, loaded from the nvcc-built cubin.
struct Hand {
    module: sys::CUmodule,
}

/// A launch argument of a hand-written kernel, each in its own 8-byte slot.
#[derive(Clone, Copy)]
enum Arg {
    Ptr(u64),
    Int(i32),
    Real(f64, Precision),
}

impl Hand {
    fn load(path: &PathBuf) -> R<Hand> {
        let image = std::fs::read(path)?;
        let mut module = std::ptr::null_mut();
        // SAFETY: a cubin image read whole from disk.
        unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr() as *const c_void) }
            .result()
            .map_err(|e| format!("cannot load {}: {e:?}", path.display()))?;
        Ok(Hand { module })
    }

    fn launch(
        &self,
        cuda: &Cuda,
        name: &str,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[Arg],
    ) -> R<()> {
        let cname = CString::new(name)?;
        // SAFETY: the module is loaded; the name is NUL-terminated.
        let f = unsafe { result::module::get_function(self.module, cname) }
            .map_err(|e| format!("no kernel {name} in the cubin: {e:?}"))?;
        let mut slots: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                Arg::Ptr(p) => p,
                Arg::Int(i) => i as u32 as u64,
                Arg::Real(v, Precision::F32) => (v as f32).to_bits() as u64,
                Arg::Real(v, Precision::F64) => v.to_bits(),
            })
            .collect();
        let mut ptrs: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: the arguments match the kernel's signature in stencils.cu (integers and
        // f32 sit in the low bytes of their slots, little-endian); the fields cover the
        // domain plus the halo.
        unsafe {
            result::launch_kernel(
                f,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                0,
                cuda.raw_stream(),
                &mut ptrs,
            )
        }
        .map_err(|e| format!("{name}: {e:?}"))?;
        Ok(())
    }

    /// The fastest of `shapes` for `run(block)`; returns (seconds, shape).
    fn best(
        cuda: &Cuda,
        shapes: &[[u32; 3]],
        mut run: impl FnMut([u32; 3]) -> R<()>,
    ) -> R<(f64, [u32; 3])> {
        let mut best = (f64::INFINITY, shapes[0]);
        for &s in shapes {
            let t = median_time(cuda, || run(s))?;
            if t < best.0 {
                best = (t, s);
            }
        }
        Ok(best)
    }
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

const SHAPES_2D: &[[u32; 3]] = &[
    [32, 4, 1],
    [32, 8, 1],
    [32, 16, 1],
    [64, 4, 1],
    [128, 2, 1],
    [256, 1, 1],
];
const SHAPES_3D: &[[u32; 3]] = &[[32, 4, 2], [32, 8, 1], [64, 4, 1], [32, 4, 4], [128, 2, 1]];

fn grid(n: &[usize], b: [u32; 3]) -> [u32; 3] {
    let mut g = [1u32; 3];
    for a in 0..n.len() {
        g[a] = n[a].div_ceil(b[a] as usize) as u32;
    }
    g
}

/// A hand-written kernel's time and launch shape, and its output's difference from the
/// generated kernel's.
type HandResult = (Option<(f64, String)>, Option<f64>);

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
    let (t, shape) = Hand::best(cuda, shapes, |blk| {
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
    }
}

fn jacobi<T: Real>(cuda: &Cuda, hand: Option<&Hand>, n: [usize; 2]) -> R<Row> {
    let b = Backend::Cuda(cuda.clone());
    let (pname, p) = prec::<T>();
    let u = input::<T>(&b, &n, 1, 1)?;
    let f = input::<T>(&b, &n, 0, 2)?;
    let mut out = Field::<T>::zeros_on(&b, &n, 0)?;
    let (h2, w) = (T::from_f64(1e-4), T::from_f64(0.8));
    let gen_s = median_time(cuda, || {
        suite::jacobi::launch(&b, &u, &f, &mut out, h2, w)?;
        Ok(())
    })?;
    let shape = cuda.launch_shape(&suite::jacobi::CODE, p, [n[0], n[1], 1]);
    let hand_out = Field::<T>::zeros_on(&b, &n, 0)?;
    let ((pu, su, _), (pf, sf, _), (po, so, _)) = (ptr(&u), ptr(&f), ptr(&hand_out));
    let args = [
        Arg::Ptr(pu),
        Arg::Ptr(pf),
        Arg::Ptr(po),
        Arg::Int(n[0] as i32),
        Arg::Int(n[1] as i32),
        Arg::Int(su),
        Arg::Int(sf),
        Arg::Int(so),
        Arg::Real(h2.as_f64(), p),
        Arg::Real(w.as_f64(), p),
    ];
    let name = format!("jacobi5_{pname}");
    let hand = against_hand(cuda, hand, &name, SHAPES_2D, &n, &args, &out, &hand_out)?;
    Ok(stencil_row::<T>(
        "jacobi (5-point, 2D)",
        &n,
        3.0,
        gen_s,
        shape,
        hand,
    ))
}

fn lap9<T: Real>(cuda: &Cuda, hand: Option<&Hand>, n: [usize; 2]) -> R<Row> {
    let b = Backend::Cuda(cuda.clone());
    let (pname, p) = prec::<T>();
    let u = input::<T>(&b, &n, 1, 3)?;
    let mut out = Field::<T>::zeros_on(&b, &n, 0)?;
    let s = T::from_f64(1e4);
    let gen_s = median_time(cuda, || {
        suite::lap9::launch(&b, &u, &mut out, s)?;
        Ok(())
    })?;
    let shape = cuda.launch_shape(&suite::lap9::CODE, p, [n[0], n[1], 1]);
    let hand_out = Field::<T>::zeros_on(&b, &n, 0)?;
    let ((pu, su, _), (po, so, _)) = (ptr(&u), ptr(&hand_out));
    let args = [
        Arg::Ptr(pu),
        Arg::Ptr(po),
        Arg::Int(n[0] as i32),
        Arg::Int(n[1] as i32),
        Arg::Int(su),
        Arg::Int(so),
        Arg::Real(s.as_f64(), p),
    ];
    let name = format!("lap9_{pname}");
    let hand = against_hand(cuda, hand, &name, SHAPES_2D, &n, &args, &out, &hand_out)?;
    Ok(stencil_row::<T>(
        "lap9 (9-point, 2D)",
        &n,
        2.0,
        gen_s,
        shape,
        hand,
    ))
}

fn lap7<T: Real>(cuda: &Cuda, hand: Option<&Hand>, n: [usize; 3]) -> R<Row> {
    let b = Backend::Cuda(cuda.clone());
    let (pname, p) = prec::<T>();
    let u = input::<T>(&b, &n, 1, 4)?;
    let mut out = Field::<T>::zeros_on(&b, &n, 0)?;
    let s = T::from_f64(1e4);
    let gen_s = median_time(cuda, || {
        suite::lap7::launch(&b, &u, &mut out, s)?;
        Ok(())
    })?;
    let shape = cuda.launch_shape(&suite::lap7::CODE, p, n);
    let hand_out = Field::<T>::zeros_on(&b, &n, 0)?;
    let ((pu, suy, suz), (po, soy, soz)) = (ptr(&u), ptr(&hand_out));
    let args = [
        Arg::Ptr(pu),
        Arg::Ptr(po),
        Arg::Int(n[0] as i32),
        Arg::Int(n[1] as i32),
        Arg::Int(n[2] as i32),
        Arg::Int(suy),
        Arg::Int(suz),
        Arg::Int(soy),
        Arg::Int(soz),
        Arg::Real(s.as_f64(), p),
    ];
    let name = format!("lap7_{pname}");
    let hand = against_hand(cuda, hand, &name, SHAPES_3D, &n, &args, &out, &hand_out)?;
    Ok(stencil_row::<T>(
        "lap7 (7-point, 3D)",
        &n,
        2.0,
        gen_s,
        shape,
        hand,
    ))
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
    let (hand_res, diff) = match hand {
        Some(h) => {
            let (pu, su, _) = ptr(&u);
            let result = Field::<T>::zeros_on(&b, &[1], 0)?;
            let (pr, _, _) = ptr(&result);
            let mut best = (f64::INFINITY, String::new());
            for blk in [[32u32, 8, 1], [128, 2, 1], [256, 1, 1], [32, 32, 1]] {
                for rows in [1usize, 4, 16] {
                    let g = [
                        n[0].div_ceil(blk[0] as usize) as u32,
                        n[1].div_ceil(blk[1] as usize * rows) as u32,
                        1,
                    ];
                    let blocks = (g[0] * g[1]) as usize;
                    let partials = Field::<T>::zeros_on(&b, &[blocks], 0)?;
                    let (pp, _, _) = ptr(&partials);
                    let t = median_time(cuda, || {
                        h.launch(
                            cuda,
                            &format!("maxabs_{pname}"),
                            g,
                            blk,
                            &[
                                Arg::Ptr(pu),
                                Arg::Ptr(pp),
                                Arg::Int(n[0] as i32),
                                Arg::Int(n[1] as i32),
                                Arg::Int(su),
                            ],
                        )?;
                        h.launch(
                            cuda,
                            &format!("max_final_{pname}"),
                            [1, 1, 1],
                            [1024, 1, 1],
                            &[Arg::Ptr(pp), Arg::Ptr(pr), Arg::Int(blocks as i32)],
                        )?;
                        // The value comes back to the host, as the generated launch's does.
                        let _ = result.get([0, 0, 0]);
                        Ok(())
                    })?;
                    if t < best.0 {
                        best = (t, format!("{}x{} x{rows} rows", blk[0], blk[1]));
                    }
                }
            }
            let want = result.get([0, 0, 0]).ok_or("no hand result")?;
            let d = (want.as_f64() - got.as_f64()).abs() / want.as_f64().abs();
            (Some(best), Some(d))
        }
        None => (None, None),
    };
    Ok(stencil_row::<T>(
        "max |u| (reduction, 2D)",
        &n,
        1.0,
        gen_s,
        shape,
        (hand_res, diff),
    ))
}

fn main() -> R<()> {
    let cuda = match Cuda::new(0) {
        Ok(c) => c.with_tuning(Tuning::On),
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
    for n in [8192, 16384] {
        rows.push(jacobi::<f32>(&cuda, h, [n, n])?);
        rows.push(jacobi::<f64>(&cuda, h, [n, n])?);
    }
    for n in [8192, 16384] {
        rows.push(lap9::<f32>(&cuda, h, [n, n])?);
        rows.push(lap9::<f64>(&cuda, h, [n, n])?);
    }
    rows.push(lap7::<f32>(&cuda, h, [512, 512, 512])?);
    rows.push(lap7::<f64>(&cuda, h, [512, 512, 512])?);
    rows.push(maxabs::<f32>(&cuda, h, [16384, 16384])?);
    rows.push(maxabs::<f64>(&cuda, h, [16384, 16384])?);

    let mut md = String::new();
    writeln!(
        md,
        "Device: {}. Copy bandwidth (device-to-device, 2 GiB, read + write): {:.0} GB/s.\n",
        cuda.device_name(),
        copy / 1e9
    )?;
    writeln!(md, "| kernel | precision | size | generated (ms) | T_eff (GB/s) | T_eff / copy | shape | hand-written (ms) | T_eff / copy | hand shape | generated speed / hand | max rel. difference |")?;
    writeln!(
        md,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )?;
    let mut csv = String::from("kernel,precision,size,bytes,generated_ms,generated_gbps,generated_over_copy,shape,hand_ms,hand_gbps,hand_over_copy,hand_shape,speed_ratio,max_rel_difference,device,copy_gbps\n");
    for r in &rows {
        let g = r.bytes / r.gen_s;
        let (hms, hfrac, hshape, ratio) = match &r.hand {
            Some((t, s)) => (
                format!("{:.3}", t * 1e3),
                format!("{:.3}", r.bytes / t / copy),
                s.clone(),
                format!("{:.3}", t / r.gen_s),
            ),
            None => ("n/a".into(), "n/a".into(), "n/a".into(), "n/a".into()),
        };
        let diff = r.diff.map_or("n/a".into(), |d| format!("{d:.1e}"));
        writeln!(
            md,
            "| {} | {} | {} | {:.3} | {:.0} | {:.3} | {} | {hms} | {hfrac} | {hshape} | {ratio} | {diff} |",
            r.kernel, r.precision, r.size, r.gen_s * 1e3, g / 1e9, g / copy, r.shape
        )?;
        writeln!(
            csv,
            "{},{},{},{},{:.6},{:.1},{:.4},{},{hms},{},{hfrac},{hshape},{ratio},{diff},{},{:.1}",
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
