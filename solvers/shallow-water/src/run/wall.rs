//! Where a run's wall time went: stepping against each kind of output, so that the
//! program's overhead over the simulation is reported beside it.

use std::fmt;
use std::time::{Duration, Instant};

/// The parts of a run's wall time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WallSplit {
    /// Stepping: the time steps, the flood's extent, the instability checks.
    pub stepping: Duration,
    /// Sampling the gauges (reading their cells back).
    pub gauges: Duration,
    /// Reading the state back for, and writing, the pictures and VTK files.
    pub snapshots: Duration,
    /// Reading the state back for, and writing, the checkpoints.
    pub checkpoints: Duration,
    /// What is written once at the end: the extent grids, the gauge series, the GIF.
    pub finish: Duration,
}

/// One of [`WallSplit`]'s parts.
#[derive(Clone, Copy, Debug)]
pub enum Part {
    /// [`WallSplit::stepping`].
    Stepping,
    /// [`WallSplit::gauges`].
    Gauges,
    /// [`WallSplit::snapshots`].
    Snapshots,
    /// [`WallSplit::checkpoints`].
    Checkpoints,
    /// [`WallSplit::finish`].
    Finish,
}

impl WallSplit {
    /// Runs `f`, adding its wall time to `part`.
    pub fn time<R>(&mut self, part: Part, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        *self.part_mut(part) += start.elapsed();
        r
    }

    fn part_mut(&mut self, part: Part) -> &mut Duration {
        match part {
            Part::Stepping => &mut self.stepping,
            Part::Gauges => &mut self.gauges,
            Part::Snapshots => &mut self.snapshots,
            Part::Checkpoints => &mut self.checkpoints,
            Part::Finish => &mut self.finish,
        }
    }

    /// Everything but the stepping.
    pub fn outputs(&self) -> Duration {
        self.gauges + self.snapshots + self.checkpoints + self.finish
    }
}

impl fmt::Display for WallSplit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |d: Duration| d.as_secs_f64();
        write!(
            f,
            "wall time: stepping {:.2} s; outputs {:.2} s (gauges {:.2} s, pictures and VTK {:.2} s, checkpoints {:.2} s, final files {:.2} s)",
            s(self.stepping),
            s(self.outputs()),
            s(self.gauges),
            s(self.snapshots),
            s(self.checkpoints),
            s(self.finish)
        )
    }
}
