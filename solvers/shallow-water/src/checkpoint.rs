//! Checkpoints: everything a run needs to go on as if never stopped, written atomically
//! (to a temporary file, then renamed) at every output time.

use crate::output::gauges::Sample;
use crate::{FloodError, SavedState, Scenario};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use stencil_runtime::Real;

/// The first field of every checkpoint, and its version.
const FORMAT: &str = "stencil shallow-water checkpoint 1";

/// A run's state at an output time. Field values are stored as `f64`, which holds an
/// `f32` exactly, so a resumed run is bit for bit the uninterrupted one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Checkpoint {
    /// What is checked on resume (nested structs add nothing to bincode's bytes: the
    /// file holds the fields of each in turn).
    pub header: Header,
    /// The simulation's state, time, steps and initial volume.
    pub saved: SavedState,
    pub deepest: Vec<f64>,
    pub arrival: Vec<f64>,
    pub samples: Vec<Vec<Sample>>,
    /// The outputs written so far (the number of the last files), whatever the output
    /// times of the run that resumes.
    pub next_output: usize,
    pub next_gauge: f64,
    pub frames: Vec<PathBuf>,
    pub depth_scale: f64,
}

/// The first fields of every checkpoint: the format, then the scenario's name, grid size
/// and the precision, checked on resume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Header {
    pub format: String,
    pub scenario: String,
    pub nx: usize,
    pub ny: usize,
    pub precision: String,
}

impl Header {
    /// The header of a checkpoint of `scenario` in precision `T`.
    pub fn of<T: Real>(scenario: &Scenario) -> Header {
        let g = scenario.setup.terrain.grid();
        Header {
            format: FORMAT.into(),
            scenario: scenario.name.clone(),
            nx: g.nx,
            ny: g.ny,
            precision: precision_name::<T>(),
        }
    }
}

/// The name of precision `T` as stored.
pub(crate) fn precision_name<T: Real>() -> String {
    format!("{:?}", T::PRECISION).to_lowercase()
}

fn bad(path: &Path, message: String) -> FloodError {
    FloodError::Input {
        file: path.display().to_string(),
        line: 0,
        message,
    }
}

impl Checkpoint {
    /// Writes it atomically.
    pub fn write(&self, path: &Path) -> Result<(), FloodError> {
        let fail = |e: &dyn std::fmt::Display| FloodError::Output {
            path: path.display().to_string(),
            cause: e.to_string(),
        };
        let bytes = bincode::serialize(self).map_err(|e| fail(&e))?;
        let partial = path.with_extension("partial");
        std::fs::write(&partial, bytes).map_err(|e| fail(&e))?;
        std::fs::rename(&partial, path).map_err(|e| fail(&e))
    }

    /// Reads a checkpoint; a file that is not one is an error saying so.
    pub fn read(path: &Path) -> Result<Checkpoint, FloodError> {
        let bytes = std::fs::read(path).map_err(|e| bad(path, format!("cannot read it: {e}")))?;
        let c: Checkpoint = bincode::deserialize(&bytes).map_err(|e| {
            // bincode's error for a file that ends before its data has an empty reason.
            let why = match *e {
                bincode::ErrorKind::Io(_) => "it ends before its data: truncated?".to_string(),
                other => other.to_string(),
            };
            bad(
                path,
                format!("not a shallow-water checkpoint, or a damaged one ({why})"),
            )
        })?;
        let h = &c.header;
        if h.format != FORMAT {
            return Err(bad(
                path,
                format!("format `{}`, this program reads `{FORMAT}`", h.format),
            ));
        }
        let cells = h.nx * h.ny;
        let sizes_ok = c.saved.state.iter().all(|s| s.len() == cells)
            && c.deepest.len() == cells
            && c.arrival.len() == cells;
        if !sizes_ok {
            return Err(bad(path, "its fields do not match its grid size".into()));
        }
        Ok(c)
    }

    /// Checks that it was written by a run of `scenario` in precision `T`.
    pub fn matches<T: Real>(&self, path: &Path, scenario: &Scenario) -> Result<(), FloodError> {
        // The formats are equal: `read` checked it.
        let (h, run) = (&self.header, Header::of::<T>(scenario));
        if *h != run {
            return Err(bad(
                path,
                format!(
                    "it was written by scenario `{}` on {} x {} cells in {}; this run is `{}` on {} x {} in {}",
                    h.scenario, h.nx, h.ny, h.precision, run.scenario, run.nx, run.ny, run.precision
                ),
            ));
        }
        if self.samples.len() != scenario.gauges.len() {
            return Err(bad(
                path,
                format!(
                    "it holds {} gauge series, the scenario has {} gauges",
                    self.samples.len(),
                    scenario.gauges.len()
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_or_foreign_file_is_refused_with_a_reason() {
        let path = std::env::temp_dir().join(format!("sw-checkpoint-{}.bin", std::process::id()));
        let files: [&[u8]; 3] = [
            b"",
            b"\x05\0\0\0\0\0\0\0abc",
            b"text, not a checkpoint at all",
        ];
        for bytes in files {
            std::fs::write(&path, bytes).unwrap();
            let e = Checkpoint::read(&path).unwrap_err().to_string();
            assert!(e.contains("not a shallow-water checkpoint"), "{e}");
            assert!(!e.contains("io error: )"), "the reason is said: {e}");
        }
        std::fs::remove_file(&path).ok();
    }
}
