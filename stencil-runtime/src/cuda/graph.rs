//! CUDA graphs: a sequence of launches recorded once from a stream and replayed with one
//! driver call, which removes the per-launch host cost that dominates small grids.

use crate::cuda::driver::{cuda_error, Stream};
use crate::cuda::trial::TrialMark;
use crate::cuda::tune::LaunchShape;
use crate::cuda::Cuda;
use crate::Error;
use cudarc::driver::{result, sys};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Launches recorded by [`Cuda::capture`], ready to be replayed on the stream they were
/// recorded from. The graph holds the device pointers of the fields it was recorded with:
/// keep those fields alive, and in place, for as long as the graph is replayed.
pub struct Graph {
    stream: Arc<Stream>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    nodes: usize,
}

// SAFETY: graph handles may be used from any thread once the context is current, which
// every method makes it; a `Graph` is not shared between threads (`!Sync`).
unsafe impl Send for Graph {}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Graph {{ nodes: {} }}", self.nodes)
    }
}

impl Graph {
    /// Queues the recorded work on its stream (asynchronously, like a launch).
    pub fn launch(&self) -> Result<(), Error> {
        self.stream.device.bind()?;
        // SAFETY: `exec` was instantiated in `Cuda::capture` and lives as long as `self`.
        unsafe { result::graph::launch(self.exec, self.stream.raw) }
            .map_err(|e| cuda_error("launching a CUDA graph", e))
    }

    /// The number of operations (kernels, copies, allocations) it holds.
    pub fn nodes(&self) -> usize {
        self.nodes
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: both were created in `Cuda::capture` and are destroyed once.
        self.stream.device.release(|| unsafe {
            let _ = result::graph::exec_destroy(self.exec);
            let _ = result::graph::destroy(self.graph);
        });
    }
}

impl Cuda {
    /// Records the work `record` queues on this backend's stream into a [`Graph`] instead
    /// of running it. Nothing runs until [`Graph::launch`].
    ///
    /// While recording, launches do not wait (checked launches are suspended), kernels
    /// with reductions are refused (their values cannot be read back), and kernels whose
    /// launch shape is not tuned yet use the model's first choice: run the work once
    /// before recording it to tune it. Launch-shape trials that have timed a launch end
    /// first, with the fastest shape they timed (see [`Cuda::ready_to_record`]).
    pub fn capture(&self, record: impl FnOnce() -> Result<(), Error>) -> Result<Graph, Error> {
        let stream = self.stream().clone();
        stream.device.bind()?;
        self.settle_trials()?;
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        // SAFETY: the stream is alive; capture ends below on every path.
        unsafe { result::stream::begin_capture(stream.raw, mode) }
            .map_err(|e| cuda_error("starting a graph capture", e))?;
        stream.capturing.store(true, Ordering::Relaxed);
        let recorded = record();
        stream.capturing.store(false, Ordering::Relaxed);
        stream.device.bind()?;
        // SAFETY: capture was begun on this stream above.
        let ended = unsafe { result::stream::end_capture(stream.raw) };
        let graph = match (recorded, ended) {
            (Err(e), ended) => {
                if let Ok(g) = ended {
                    // SAFETY: the graph was just returned by the driver and is unused.
                    unsafe {
                        let _ = result::graph::destroy(g);
                    }
                }
                return Err(e);
            }
            (Ok(()), Err(e)) => return Err(cuda_error("ending a graph capture", e)),
            (Ok(()), Ok(g)) => g,
        };
        let mut nodes = 0usize;
        // SAFETY: `graph` is valid; a null node array asks only for the count.
        unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut nodes) }
            .result()
            .map_err(|e| cuda_error("counting a graph's nodes", e))?;
        let flags = sys::CUgraphInstantiate_flags(0);
        // SAFETY: `graph` is a complete captured graph.
        let exec = match unsafe { result::graph::instantiate(graph, flags) } {
            Ok(x) => x,
            Err(e) => {
                // SAFETY: not instantiated, destroyed once.
                unsafe {
                    let _ = result::graph::destroy(graph);
                }
                return Err(cuda_error("instantiating a CUDA graph", e));
            }
        };
        Ok(Graph {
            stream,
            graph,
            exec,
            nodes,
        })
    }

    /// The present moment of this device's launch-shape trials: pass it to
    /// [`Cuda::ready_to_record`] after running work launch by launch.
    pub fn trial_mark(&self) -> TrialMark {
        let device = &self.stream().device;
        device
            .trials
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .mark()
    }

    /// Whether work run launch by launch `runs` times, the last time after `mark`
    /// ([`Cuda::trial_mark`]), may now be recorded into a graph with the shapes its
    /// launch-shape trials choose: every kernel the work launched has run each of its
    /// trial's launches, or `runs` exceeds the most launches a trial takes (a kernel
    /// whose shape depends on arguments the work changes must not hold recording back).
    pub fn ready_to_record(&self, mark: TrialMark, runs: usize) -> bool {
        let device = &self.stream().device;
        runs > LaunchShape::MOST_TRIAL_LAUNCHES
            || !device
                .trials
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .untried_since(mark)
    }

    /// Writes the times of the finished launches of trials under way to the tuning cache
    /// file (after a wait, every launch of this stream has finished), so that a trial a
    /// program does not finish (a kernel launched fewer times than a trial takes) goes on
    /// in the next run.
    pub(crate) fn save_trial_launches(&self) -> Result<(), Error> {
        let device = &self.stream().device;
        // Locks taken trials, then tuned, as a launch takes them.
        let mut trials = device.trials.lock().unwrap_or_else(|e| e.into_inner());
        if trials.is_idle() {
            return Ok(());
        }
        let timed = trials.timed_unsaved()?;
        let mut tuned = device.tuned.lock().unwrap_or_else(|e| e.into_inner());
        tuned.put_samples(timed);
        Ok(())
    }

    /// Ends the trials that have timed launches, with the fastest shape each timed (kept
    /// in the cache file where the trial had run all its launches, else for this process
    /// only, the times of its finished launches in the file for the next process).
    fn settle_trials(&self) -> Result<(), Error> {
        let device = &self.stream().device;
        // Locks taken trials, then tuned, as a launch takes them.
        let mut trials = device.trials.lock().unwrap_or_else(|e| e.into_inner());
        let (decided, timed) = trials.settle()?;
        let mut tuned = device.tuned.lock().unwrap_or_else(|e| e.into_inner());
        // The launches of a trial the capture ends unfinished are kept for the next
        // process's trial of that key.
        tuned.put_samples(timed);
        for (key, shape, complete) in decided {
            if complete {
                tuned.put(key, shape);
            } else {
                tuned.put_in_memory(key, shape);
            }
        }
        Ok(())
    }

    /// Whether launches on this backend's stream are being recorded into a graph.
    pub fn is_capturing(&self) -> bool {
        self.stream().capturing.load(Ordering::Relaxed)
    }
}
