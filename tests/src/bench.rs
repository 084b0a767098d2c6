//! What the benchmarks share: their result type and their command-line options, and the
//! hand-written CUDA kernels they compare with.

pub mod hand;

/// A benchmark's result: any error ends it with its message.
pub type R<T> = Result<T, Box<dyn std::error::Error>>;

/// Median seconds of `f` on `cuda`, after three untimed calls: each of `reps` calls timed
/// alone with device events.
pub fn median_device_time(
    cuda: &stencil_runtime::Cuda,
    reps: usize,
    mut f: impl FnMut() -> R<()>,
) -> R<f64> {
    for _ in 0..3 {
        f()?;
    }
    cuda.synchronize()?;
    let mut timer = cuda.timer()?;
    let mut ts = Vec::with_capacity(reps);
    for _ in 0..reps {
        timer.start()?;
        f()?;
        ts.push(timer.stop()?);
    }
    ts.sort_by(f64::total_cmp);
    Ok(ts[reps / 2])
}

/// The value after option `name` on the command line (`--sizes 4096,8192`), if given.
pub fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The machine a benchmark measures: the CPU with `--cpu` on the command line, else CUDA
/// device 0; its name; and its copy bandwidth (bytes read plus written per second)
/// measured now, for the T_eff ratios. `None`, after printing why, without a device.
pub fn machine() -> R<Option<(stencil_runtime::Backend, String, Option<f64>)>> {
    use stencil_runtime::{Backend, Cuda};
    if std::env::args().any(|a| a == "--cpu") {
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        // A 256 MiB copy: well beyond the caches.
        let bw = stencil_runtime::cpu::copy_bandwidth(256 << 20);
        return Ok(Some((
            Backend::Cpu,
            format!("CPU ({threads} threads)"),
            Some(bw),
        )));
    }
    match Cuda::new(0) {
        Ok(c) => {
            let bw = c.copy_bandwidth(1 << 30)?;
            let name = c.device_name().to_string();
            Ok(Some((Backend::Cuda(c), name, Some(bw))))
        }
        Err(why) => {
            println!("SKIPPED: no CUDA device ({why}); run with --cpu for the CPU benchmark");
            Ok(None)
        }
    }
}
