//! Gauge time series: one CSV file per gauge (`time,depth,surface,u,v`).

use super::write_error;
use crate::{FloodError, Gauge};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One sample of a gauge.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Simulated time (s).
    pub time: f64,
    /// Depth (m).
    pub depth: f64,
    /// Surface elevation (m).
    pub surface: f64,
    /// x velocity (m/s).
    pub u: f64,
    /// y velocity (m/s).
    pub v: f64,
}

/// Writes `samples` of `gauge` to `dir/<name>.csv`.
pub fn write(dir: &Path, gauge: &Gauge, samples: &[Sample]) -> Result<(), FloodError> {
    use std::fmt::Write as _;
    let path = dir.join(format!("{}.csv", gauge.name));
    let mut text = format!(
        "# gauge {} at ({}, {}), cell ({}, {})\ntime,depth,surface,u,v\n",
        gauge.name, gauge.x, gauge.y, gauge.i, gauge.j
    );
    for s in samples {
        let _ = writeln!(text, "{},{},{},{},{}", s.time, s.depth, s.surface, s.u, s.v);
    }
    std::fs::write(&path, text).map_err(|e| write_error(&path, e))
}
