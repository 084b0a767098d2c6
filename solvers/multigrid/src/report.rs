//! What a solve reports.

/// One cycle of the outer iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CycleStat {
    /// The relative residual after the cycle.
    pub residual: f64,
    /// The factor by which the cycle reduced the residual.
    pub rate: f64,
    /// Wall time of the cycle, residual included, seconds.
    pub seconds: f64,
}

/// Time spent on one level of the hierarchy (with [`crate::Options::profile`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LevelStat {
    /// Nodes per axis.
    pub n: usize,
    /// Kernel launches.
    pub launches: usize,
    /// Seconds, summed over the solve.
    pub seconds: f64,
}

/// The history of a solve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The residual norm of the initial guess (absolute, 2-norm).
    pub initial: f64,
    /// Each cycle, in order.
    pub cycles: Vec<CycleStat>,
    /// Per level, finest first (empty unless profiled).
    pub levels: Vec<LevelStat>,
    /// Time to set up the hierarchy, seconds.
    pub setup_seconds: f64,
    /// Total wall time of the cycles, seconds.
    pub solve_seconds: f64,
    /// The operations of the CUDA graph the cycles were replayed from, if one was used.
    pub graph_nodes: Option<usize>,
}

impl Report {
    /// The final relative residual (1 if no cycle ran).
    pub fn relative_residual(&self) -> f64 {
        self.cycles.last().map_or(1.0, |c| c.residual)
    }

    /// The mean residual reduction per cycle (geometric).
    pub fn mean_rate(&self) -> f64 {
        match self.cycles.len() {
            0 => 1.0,
            k => self.relative_residual().powf(1.0 / k as f64),
        }
    }

    /// A table of the cycles, one line each.
    pub fn table(&self) -> String {
        let mut s = String::from("cycle  relative residual  rate     time (ms)\n");
        for (i, c) in self.cycles.iter().enumerate() {
            s += &format!(
                "{:>5}  {:>17.3e}  {:>6.4}  {:>9.3}\n",
                i + 1,
                c.residual,
                c.rate,
                c.seconds * 1e3
            );
        }
        s
    }
}
