//! Choosing a dense launch's shape: the default, a tuned shape from the cache, the next
//! proposal of a trial in the kernel's first launches (`trial.rs`), or the fastest
//! candidate of a timed search (`STENCIL_TUNE=search`).

use super::{addresses, CudaLaunch, KernelCode};
use crate::cuda::trial::{Next, Ticket};
use crate::cuda::tune::{cache_key, LaunchShape, Tuning};
use crate::cuda::Cuda;
use crate::{Error, Precision};

/// Timed launches per candidate shape in a search (after one untimed).
const TUNE_REPS: usize = 3;

/// The shape of one launch, and the trial's events when it is timed.
pub(super) struct Choice {
    pub shape: LaunchShape,
    pub ticket: Option<Ticket>,
}

impl From<LaunchShape> for Choice {
    fn from(shape: LaunchShape) -> Choice {
        Choice {
            shape,
            ticket: None,
        }
    }
}

impl CudaLaunch<'_> {
    /// The launch shape: by the backend's policy, tuned on first use when it is on. A
    /// staged kernel whose chosen shape (the default, where no other is usable) needs
    /// more shared memory than a launch may use gets the largest of a few small shapes
    /// that fits, or an error that says so.
    pub(super) fn shape(&self, n: [usize; 3]) -> Result<Choice, Error> {
        let choice = self.policy_shape(n)?;
        let Some(staging) = self.code.staging else {
            return Ok(choice);
        };
        let dims = self.code.dims;
        let fits = |s: &LaunchShape| staging.fits(s.block, s.points, dims, self.precision);
        if fits(&choice.shape) {
            return Ok(choice);
        }
        let small = [[32, 4, 1], [32, 2, 1], [32, 1, 1], [16, 1, 1], [8, 1, 1]];
        small
            .iter()
            .map(|&block| LaunchShape {
                block,
                points: 1,
                vector: 1,
            })
            .find(|s| fits(s) && s.grid(dims, n).is_some())
            .map(Choice::from)
            .ok_or_else(|| Error::Launch {
                kernel: self.code.name.to_string(),
                cause: format!(
                    "its staged values need more than {} bytes of shared memory even in a block of 8 threads; stage fewer values or read them at smaller offsets",
                    super::DEFAULT_SHARED_BYTES
                ),
            })
    }

    /// The launch shape by the backend's policy (see [`CudaLaunch::shape`]).
    fn policy_shape(&self, n: [usize; 3]) -> Result<Choice, Error> {
        let code = self.code;
        let default = LaunchShape::default_for(code.dims);
        match self.cuda.tuning {
            Tuning::Off => Ok(default.into()),
            Tuning::Fixed(s) if self.usable(n, &s) => Ok(s.into()),
            Tuning::Fixed(_) => Ok(default.into()),
            Tuning::On | Tuning::Search => {
                let (key, cached) = self.cuda.cached_shape(self.ptx(), self.precision, n);
                let first = || self.proposals(n).first().copied().unwrap_or(default);
                match cached {
                    Some(s) if self.usable(n, &s) => return Ok(s.into()),
                    // Tuned for this size class, but not usable by this launch (fields not
                    // aligned to the vectors, a grid too large): the model's choice, untimed,
                    // so that the tuned shape stays.
                    Some(_) => return Ok(first().into()),
                    None => {}
                }
                // Timing needs waiting, which a graph capture cannot do; trials are settled
                // before a capture starts.
                if self.cuda.is_capturing() {
                    return Ok(first().into());
                }
                let device = &self.cuda.stream().device;
                // Running an in-place kernel to time it would change its result: such a
                // kernel is tuned by trials in its real launches.
                if self.cuda.tuning == Tuning::Search && !code.in_place {
                    let best = self.search(&self.candidates(n), n)?.unwrap_or(default);
                    device
                        .tuned
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .put(key, best);
                    return Ok(best.into());
                }
                // The trials' lock is held until the decision is in the cache (locks are
                // taken trials, then tuned), so no other thread starts a second trial.
                let mut trials = device.trials.lock().unwrap_or_else(|e| e.into_inner());
                let tuned = || device.tuned.lock().unwrap_or_else(|e| e.into_inner());
                let next = trials.next(
                    &key,
                    || self.proposals(n),
                    || tuned().samples(&key),
                    default,
                )?;
                // The times of finished trial launches go to the cache file at once, so
                // that a trial this process does not finish goes on in the next one.
                let timed = trials.timed_unsaved()?;
                if !timed.is_empty() {
                    tuned().put_samples(timed);
                }
                Ok(match next {
                    Next::Decided(best, timed) => {
                        let mut tuned = tuned();
                        if timed {
                            tuned.put(key, best);
                        } else {
                            tuned.put_in_memory(key, best);
                        }
                        if self.usable(n, &best) {
                            best.into()
                        } else {
                            first().into()
                        }
                    }
                    Next::Wait(shape) if self.usable(n, &shape) => shape.into(),
                    Next::Try(shape, ticket) if self.usable(n, &shape) => Choice {
                        shape,
                        ticket: Some(ticket),
                    },
                    // A trial started by a launch of the same size class that this one
                    // cannot follow (other alignment, a larger grid): not timed.
                    Next::Wait(_) | Next::Try(..) => first().into(),
                })
            }
        }
    }

    /// Whether the kernel has an entry for shape `s` and the shape's grid covers `n`.
    fn usable(&self, n: [usize; 3], s: &LaunchShape) -> bool {
        fits(
            self.code,
            self.ptx().vector,
            n,
            s,
            self.aligned,
            self.precision,
        )
    }

    /// Whether the domain `n` has fewer points than the device holds threads.
    fn small(&self, n: [usize; 3]) -> bool {
        n.iter().product::<usize>() <= self.cuda.stream().device.resident_threads
    }

    /// The widest vectors this launch may use: the kernel's, where every field is aligned.
    fn vector(&self) -> u32 {
        if self.aligned {
            self.ptx().vector
        } else {
            1
        }
    }

    /// The model's proposals for this launch that it can use.
    fn proposals(&self, n: [usize; 3]) -> Vec<LaunchShape> {
        let code = self.code;
        let proposed = if code.staging.is_some() {
            LaunchShape::staged_proposals(code.dims)
        } else {
            LaunchShape::proposals(code.dims, code.tiles, self.vector(), self.small(n))
        };
        proposed.into_iter().filter(|s| self.usable(n, s)).collect()
    }

    /// Every candidate shape of a search that this launch can use.
    fn candidates(&self, n: [usize; 3]) -> Vec<LaunchShape> {
        let small = self.small(n);
        LaunchShape::candidates(self.code.dims, self.code.tiles, self.vector())
            .into_iter()
            .filter(|s| self.usable(n, s))
            .filter(|s| !small || (s.points == 1 && s.vector == 1))
            .collect()
    }

    /// Times each candidate on the real arguments (outputs are distinct from inputs, so
    /// running a kernel again gives the same result) and returns the fastest.
    pub(super) fn search(
        &self,
        candidates: &[LaunchShape],
        n: [usize; 3],
    ) -> Result<Option<LaunchShape>, Error> {
        let mut timer = self.cuda.timer()?;
        let mut best: Option<(f64, LaunchShape)> = None;
        for &shape in candidates {
            let Some(grid) = shape.grid(self.code.dims, n) else {
                continue;
            };
            let partials = self.partials(grid)?;
            let at = addresses(&partials);
            // A shape the kernel cannot launch with (too many registers for the block) is
            // skipped; any other failure surfaces when the timer waits.
            if self.launch(n, shape, grid, &at, false).is_err() {
                continue;
            }
            timer.start()?;
            for _ in 0..TUNE_REPS {
                self.launch(n, shape, grid, &at, false)?;
            }
            let t = timer.stop().map_err(|e| self.failed(e))?;
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, shape));
            }
        }
        Ok(best.map(|(_, s)| s))
    }
}

impl Cuda {
    /// The launch shape `code` would use at precision `p` over domain `n` under this
    /// backend's policy, without searching: the tuned shape if one is cached, else the
    /// fixed or default shape (where tuning has not finished yet, a launch may use another:
    /// a trial's or the model's). For reports; assumes aligned fields and no textures.
    pub fn launch_shape(&self, code: &KernelCode, p: Precision, n: [usize; 3]) -> LaunchShape {
        let default = LaunchShape::default_for(code.dims);
        let ptx = code.ptx(p);
        match self.tuning {
            Tuning::Off => default,
            Tuning::Fixed(s) if fits(code, ptx.vector, n, &s, true, p) => s,
            Tuning::Fixed(_) => default,
            Tuning::On | Tuning::Search => self.cached_shape(ptx, p, n).1.unwrap_or(default),
        }
    }

    /// The tuning-cache key of the PTX `ptx` at `p` over `n`, and the shape cached under
    /// it.
    pub(super) fn cached_shape(
        &self,
        ptx: &super::Ptx,
        p: Precision,
        n: [usize; 3],
    ) -> (String, Option<LaunchShape>) {
        let device = &self.stream().device;
        let name = match p {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        };
        let key = cache_key(ptx.hash, name, &device.name, n);
        let cached = device
            .tuned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key);
        (key, cached)
    }
}

/// Whether `code`, whose PTX has vector entries of width `vector`, has an entry for shape
/// `s` and the shape's grid covers `n`; vector shapes also need every field `aligned` to
/// the vector.
fn fits(
    code: &KernelCode,
    vector: u32,
    n: [usize; 3],
    s: &LaunchShape,
    aligned: bool,
    p: Precision,
) -> bool {
    code.tiles.has(s.vector > 1, s.points)
        && (s.vector == 1 || (s.vector == vector && aligned))
        && s.grid(code.dims, n).is_some()
        && code
            .staging
            .is_none_or(|st| st.fits(s.block, s.points, code.dims, p))
}
