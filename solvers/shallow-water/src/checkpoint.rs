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
    pub format: String,
    /// The scenario's name, grid size and the precision: checked on resume.
    pub scenario: String,
    pub nx: usize,
    pub ny: usize,
    pub precision: String,
    /// The simulation's state, time, steps and initial volume (stored as its four fields
    /// would be: a nested struct adds nothing to bincode's bytes).
    pub saved: SavedState,
    pub deepest: Vec<f64>,
    pub arrival: Vec<f64>,
    pub samples: Vec<Vec<Sample>>,
    pub next_output: usize,
    pub next_gauge: f64,
    pub frames: Vec<PathBuf>,
    pub depth_scale: f64,
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
    /// The header fields for `scenario` in precision `T`; the caller fills the rest.
    pub fn header<T: Real>(scenario: &Scenario) -> (String, String, usize, usize, String) {
        let g = scenario.setup.terrain.grid();
        (
            FORMAT.into(),
            scenario.name.clone(),
            g.nx,
            g.ny,
            precision_name::<T>(),
        )
    }

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
            bad(
                path,
                format!("not a shallow-water checkpoint, or a damaged one ({e})"),
            )
        })?;
        if c.format != FORMAT {
            return Err(bad(
                path,
                format!("format `{}`, this program reads `{FORMAT}`", c.format),
            ));
        }
        let cells = c.nx * c.ny;
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
        let (_, name, nx, ny, precision) = Checkpoint::header::<T>(scenario);
        let mine = (&self.scenario, self.nx, self.ny, &self.precision);
        if mine != (&name, nx, ny, &precision) {
            return Err(bad(
                path,
                format!(
                    "it was written by scenario `{}` on {} x {} cells in {}; this run is `{name}` on {nx} x {ny} in {precision}",
                    self.scenario, self.nx, self.ny, self.precision
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
