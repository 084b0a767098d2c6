//! Checkpoints: the state of a run after a check, written atomically, and resumed
//! bit-for-bit.

use crate::{Cavity, CavityError, Config};
use multigrid::Precision;
use serde::{Deserialize, Serialize};
use std::path::Path;
use stencil_runtime::Field;

/// The first field of every checkpoint, and its version.
const FORMAT: &str = "stencil cavity checkpoint 1";

/// The state of a run after a check: what determines every later step (the options that
/// shape the trajectory, the step, time, time step and both fields). Options that only
/// decide when to stop (tolerance, end time, step limit) may change on resume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    format: String,
    /// Reynolds number.
    pub re: f64,
    /// Nodes per side.
    pub n: usize,
    /// The Poisson solver's precision (`f64` or `mixed`).
    pub precision: String,
    /// Time step fraction.
    pub cfl: f64,
    /// Multigrid cycles per stage.
    pub poisson_cycles: usize,
    /// Steps between checks.
    pub check_every: usize,
    /// Steps taken.
    pub step: u64,
    /// Simulated time.
    pub time: f64,
    /// The time step.
    pub dt: f64,
    /// Vorticity, `n * n` values, x fastest.
    pub w: Vec<f64>,
    /// Stream function, likewise.
    pub psi: Vec<f64>,
}

fn precision_name(p: Precision) -> &'static str {
    match p {
        Precision::F64 => "f64",
        Precision::Mixed => "mixed",
    }
}

impl Checkpoint {
    /// The state of `cavity` (taken right after a check; waits for the device); over
    /// several ranks the whole grid's, gathered (every rank must call it; the rank that
    /// [`Cavity::writes_output`] writes it).
    pub fn of(cavity: &Cavity) -> Result<Checkpoint, CavityError> {
        match cavity.gather_whole()? {
            Some((psi, w)) => Checkpoint::of_fields(cavity, &psi, &w),
            None => Checkpoint::of_fields(cavity, &cavity.psi, &cavity.w),
        }
    }

    /// The state of `cavity` with the whole grid's stream function `psi` and vorticity
    /// `w` (its own fields on one rank, gathered over several: [`Cavity::gather_whole`]).
    pub fn of_fields(
        cavity: &Cavity,
        psi: &Field<f64>,
        w: &Field<f64>,
    ) -> Result<Checkpoint, CavityError> {
        let (w, psi) = (w.interior()?, psi.interior()?);
        let c = cavity.config();
        Ok(Checkpoint {
            format: FORMAT.into(),
            re: c.re,
            n: c.n,
            precision: precision_name(c.precision).into(),
            cfl: c.cfl,
            poisson_cycles: c.poisson_cycles,
            check_every: c.check_every,
            step: cavity.step,
            time: cavity.time,
            dt: cavity.dt,
            w,
            psi,
        })
    }

    /// Writes to `path` atomically (a temporary file renamed over it), so that a crash
    /// while writing keeps the previous checkpoint.
    pub fn write(&self, path: &Path) -> Result<(), CavityError> {
        write_atomically(self, path)
    }

    /// Reads a checkpoint, refusing files that are not one.
    pub fn read(path: &Path) -> Result<Checkpoint, CavityError> {
        let c: Checkpoint = read_checkpoint(path, "a cavity checkpoint", FORMAT)?;
        if c.w.len() != c.n * c.n || c.psi.len() != c.n * c.n {
            return Err(CavityError::Checkpoint(format!(
                "`{}` is damaged: its fields do not hold {} x {} values",
                path.display(),
                c.n,
                c.n
            )));
        }
        Ok(c)
    }

    /// Whether it was written by a run of `config` (the options that shape the
    /// trajectory must be equal); the error names the first that differs.
    pub fn matches(&self, config: &Config) -> Result<(), CavityError> {
        let differs = |name: &str, here: String, there: String| {
            Err(CavityError::Checkpoint(format!(
                "the checkpoint is of another configuration: {name} is {there} there and {here} here; run with the checkpoint's options or start afresh without --resume"
            )))
        };
        if self.re != config.re {
            return differs("re", config.re.to_string(), self.re.to_string());
        }
        if self.n != config.n {
            return differs("n", config.n.to_string(), self.n.to_string());
        }
        let precision = precision_name(config.precision);
        if self.precision != precision {
            return differs("precision", precision.into(), self.precision.clone());
        }
        if self.cfl != config.cfl {
            return differs("cfl", config.cfl.to_string(), self.cfl.to_string());
        }
        if self.poisson_cycles != config.poisson_cycles {
            return differs(
                "poisson-cycles",
                config.poisson_cycles.to_string(),
                self.poisson_cycles.to_string(),
            );
        }
        if self.check_every != config.check_every {
            return differs(
                "check-every",
                config.check_every.to_string(),
                self.check_every.to_string(),
            );
        }
        Ok(())
    }

    /// Puts this state into `cavity` after checking that it matches its configuration.
    pub fn restore(&self, cavity: &mut Cavity) -> Result<(), CavityError> {
        self.matches(cavity.config())?;
        cavity.restore(&self.w, &self.psi, self.step, self.time, self.dt)
    }
}

/// Writes `value` (bincode) to `path` atomically: a temporary file renamed over it, so
/// that a crash while writing keeps the previous file.
pub(crate) fn write_atomically(value: &impl Serialize, path: &Path) -> Result<(), CavityError> {
    let tmp = path.with_extension("tmp");
    let bytes = bincode::serialize(value).map_err(|e| CavityError::Output {
        path: path.into(),
        cause: e.to_string(),
    })?;
    std::fs::write(&tmp, bytes).map_err(|e| CavityError::io("writing checkpoint", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| CavityError::io("replacing checkpoint", path, e))
}

/// Reads a checkpoint written by [`write_atomically`] whose first field names its format,
/// refusing a file of another format than `format` (another kind of checkpoint, or another
/// version) and one that is not a checkpoint or is damaged (`what` names what it should be
/// in that error).
pub(crate) fn read_checkpoint<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
    format: &str,
) -> Result<T, CavityError> {
    let bytes = std::fs::read(path).map_err(|e| CavityError::io("reading checkpoint", path, e))?;
    let not_one = |e: bincode::Error| {
        // bincode's error for a file that ends before its data has an empty reason.
        let why = match *e {
            bincode::ErrorKind::Io(_) => "it ends before its data: truncated?".to_string(),
            other => other.to_string(),
        };
        CavityError::Checkpoint(format!(
            "`{}` is not {what} or is damaged ({why})",
            path.display()
        ))
    };
    // The format alone first (bincode reads a leading field and leaves the rest).
    let found: String = bincode::deserialize(&bytes).map_err(not_one)?;
    if found != format {
        return Err(CavityError::Checkpoint(format!(
            "`{}` has format `{found}`, this program reads `{format}`",
            path.display()
        )));
    }
    bincode::deserialize(&bytes).map_err(not_one)
}
