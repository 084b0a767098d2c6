//! A time step recorded into a CUDA graph and replayed, shared by the uniform
//! ([`crate::Cavity`]) and the wavelet-adaptive ([`crate::adaptive::AdaptiveCavity`])
//! solvers: a step runs launch by launch until it may be recorded, is then recorded and
//! replayed while what it was recorded for (its key: the time step, a layout) stays.

use crate::CavityError;
use stencil_runtime::cuda::{Graph, TrialMark};
use stencil_runtime::{Backend, Cuda};

/// `backend` with a stream of its own on a device (the CPU as it is): a step recorded
/// into a CUDA graph captures everything queued on its stream, which must not include
/// what other threads queue meanwhile on the caller's.
pub(crate) fn own_stream(backend: &Backend) -> Result<Backend, CavityError> {
    Ok(match backend {
        Backend::Cuda(c) => Backend::Cuda(c.new_stream()?.with_tuning(c.tuning())),
        Backend::Cpu => Backend::Cpu,
    })
}

/// The device to record steps on: `backend`'s, where it is a CUDA device and recording
/// is `enabled`.
pub(crate) fn recording_device(backend: &Backend, enabled: bool) -> Option<Cuda> {
    match backend {
        Backend::Cuda(c) if enabled => Some(c.clone()),
        _ => None,
    }
}

/// `work` recorded into a CUDA graph on `cuda`'s stream (nothing runs until the graph is
/// launched); `work`'s own error comes first, then the capture's.
pub(crate) fn record(
    cuda: &Cuda,
    mut work: impl FnMut() -> Result<(), CavityError>,
) -> Result<Graph, CavityError> {
    let mut result = Ok(());
    let graph = cuda.capture(|| {
        result = work();
        Ok(())
    })?;
    result?;
    Ok(graph)
}

/// When a step may be recorded, after the steps run launch by launch that tune the
/// kernels' launch shapes (and build what the step's layout needs); in either case not
/// before the device's launch-shape trials have run ([`Cuda::ready_to_record`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WarmUp {
    /// Once any step has run launch by launch.
    AnyStep,
    /// Once a step of the same key has run launch by launch.
    SameKey,
}

/// The recorded step, the key it was recorded for, and the key of the last step run
/// launch by launch.
pub(crate) struct StepGraph<K> {
    warm_up: WarmUp,
    recorded: Option<(K, Graph)>,
    eager: Option<K>,
    /// Steps run launch by launch since the last recording, and the launch-shape trials'
    /// moment before the last of them.
    eager_steps: usize,
    eager_mark: TrialMark,
}

impl<K: Copy + PartialEq> StepGraph<K> {
    /// Nothing recorded nor run yet.
    pub fn new(warm_up: WarmUp) -> Self {
        StepGraph {
            warm_up,
            recorded: None,
            eager: None,
            eager_steps: 0,
            eager_mark: TrialMark::default(),
        }
    }

    /// Forgets the recorded step and the steps run so far (after a restored state).
    pub fn clear(&mut self) {
        self.recorded = None;
        self.eager = None;
        self.eager_steps = 0;
    }

    /// One step of `key`: the replay of the step recorded for `key`; else, on `cuda`
    /// (`None` to launch every kernel) once warmed up ([`WarmUp`]), `step` recorded and
    /// the recording launched (and kept); else `step` launch by launch.
    pub fn run(
        &mut self,
        key: K,
        cuda: Option<&Cuda>,
        mut step: impl FnMut() -> Result<(), CavityError>,
    ) -> Result<(), CavityError> {
        let replay = matches!(&self.recorded, Some((k, _)) if *k == key);
        if !replay {
            self.recorded = None;
        }
        let warm = match self.warm_up {
            WarmUp::AnyStep => self.eager.is_some(),
            WarmUp::SameKey => self.eager == Some(key),
        };
        match (&self.recorded, cuda) {
            (Some((_, graph)), _) => graph.launch()?,
            (None, Some(cuda))
                if warm && cuda.ready_to_record(self.eager_mark, self.eager_steps) =>
            {
                let graph = record(cuda, &mut step)?;
                graph.launch()?;
                self.recorded = Some((key, graph));
                self.eager_steps = 0;
            }
            _ => {
                if let Some(cuda) = cuda {
                    self.eager_mark = cuda.trial_mark();
                }
                step()?;
                if self.eager != Some(key) {
                    self.eager_steps = 0;
                }
                self.eager = Some(key);
                self.eager_steps += 1;
            }
        }
        Ok(())
    }
}
