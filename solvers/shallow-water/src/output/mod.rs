//! What a run writes: pictures of the depth over a hillshade (PNG, and an animated GIF
//! of them), VTK files for ParaView, ESRI ASCII grids and gauge CSV files.

pub mod gauges;
pub mod picture;
pub mod vtk;
mod writer;

pub use writer::Writer;

use crate::FloodError;
use std::path::Path;

/// The water at one moment, per cell row by row from the south, on the host.
#[derive(Clone, Debug)]
pub struct Snapshot<'a> {
    /// The grid.
    pub grid: &'a crate::Grid,
    /// Each cell's mean bed.
    pub bed: &'a [f64],
    /// The depth.
    pub depth: Vec<f64>,
    /// The x velocity (0 where dry).
    pub u: Vec<f64>,
    /// The y velocity (0 where dry).
    pub v: Vec<f64>,
    /// The simulated time.
    pub time: f64,
}

/// An output error for `path`.
pub(crate) fn write_error(path: &Path, cause: impl std::fmt::Display) -> FloodError {
    FloodError::Output {
        path: path.display().to_string(),
        cause: cause.to_string(),
    }
}

/// Creates directory `dir` (and its parents).
pub(crate) fn create_dir(dir: &Path) -> Result<(), FloodError> {
    std::fs::create_dir_all(dir).map_err(|e| write_error(dir, e))
}
