//! What a run leaves to look at: pictures, centre-line profiles, a VTK file and a summary.

mod adaptive;
mod pictures;
mod plot;
mod vtk;

use crate::adaptive::AdaptiveCavity;
use crate::kernels::flow;
use crate::model::LID_SPEED;
use crate::reference::{Comparison, Reference};
use crate::{Cavity, CavityError};
use std::fmt;
use std::path::{Path, PathBuf};
use stencil_runtime::{Backend, Field};

/// The flow on the host: every node's stream function, vorticity and velocity.
pub(crate) struct Snapshot {
    pub n: usize,
    pub psi: Vec<f64>,
    pub w: Vec<f64>,
    pub u: Vec<f64>,
    pub v: Vec<f64>,
}

impl Snapshot {
    /// Copies the flow of `cavity` to the host (its wall vorticity brought up to date);
    /// over several ranks the whole grid, gathered (every rank must call it).
    pub fn of(cavity: &mut Cavity) -> Result<Snapshot, CavityError> {
        cavity.update_walls()?;
        let b = cavity.backend().clone();
        match cavity.gather_whole()? {
            Some((psi, w)) => Snapshot::from_fields(&b, &psi, &w),
            None => Snapshot::from_fields(&b, &cavity.psi, &cavity.w),
        }
    }

    /// The flow of the stream function `psi` and vorticity `w` on `n x n` nodes of the
    /// unit square (halos of at least one; the velocity from `psi`).
    pub fn from_fields(
        b: &Backend,
        psi: &Field<f64>,
        w: &Field<f64>,
    ) -> Result<Snapshot, CavityError> {
        let n = psi.extent()[0];
        let h = 1.0 / (n - 1) as f64;
        let mut u = Field::<f64>::zeros_on(b, &[n, n], 0)?;
        let mut v = Field::<f64>::zeros_on(b, &[n, n], 0)?;
        flow::velocity::launch(b, psi, &mut u, &mut v, 1.0 / h, LID_SPEED, 0, n as i64)?;
        Ok(Snapshot {
            n,
            psi: psi.interior()?,
            w: w.interior()?,
            u: u.interior()?,
            v: v.interior()?,
        })
    }

    /// The node of the smallest stream function (the primary vortex's centre) and its value.
    fn psi_min(&self) -> (f64, f64, f64) {
        let k = (0..self.psi.len())
            .min_by(|&a, &b| self.psi[a].total_cmp(&self.psi[b]))
            .unwrap_or(0);
        let h = 1.0 / (self.n - 1) as f64;
        (
            self.psi[k],
            (k % self.n) as f64 * h,
            (k / self.n) as f64 * h,
        )
    }
}

/// The centre-line profiles `u(0.5, y)` and `v(x, 0.5)` at the nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Profiles {
    /// Node coordinates along either line, `0, h, .., 1`.
    pub coords: Vec<f64>,
    /// `u(0.5, y)` at `y = coords`.
    pub u: Vec<f64>,
    /// `v(x, 0.5)` at `x = coords`.
    pub v: Vec<f64>,
}

impl Profiles {
    /// The profiles of `cavity`'s current flow.
    pub fn of(cavity: &mut Cavity) -> Result<Profiles, CavityError> {
        Ok(Profiles::from_snapshot(&Snapshot::of(cavity)?))
    }

    fn from_snapshot(s: &Snapshot) -> Profiles {
        let (n, mid) = (s.n, s.n / 2);
        Profiles {
            coords: (0..n).map(|k| k as f64 / (n - 1) as f64).collect(),
            u: (0..n).map(|j| s.u[mid + n * j]).collect(),
            v: (0..n).map(|i| s.v[i + n * mid]).collect(),
        }
    }

    /// The vertical line's `u` (`vertical`) or the horizontal line's `v` at `at`, linearly
    /// interpolated between nodes.
    pub fn interpolate(&self, vertical: bool, at: f64) -> f64 {
        let values = if vertical { &self.u } else { &self.v };
        let last = values.len() - 1;
        let x = at.clamp(0.0, 1.0) * last as f64;
        let k = (x.floor() as usize).min(last - 1);
        let t = x - k as f64;
        values[k] * (1.0 - t) + values[k + 1] * t
    }

    /// Writes `y,u,x,v` rows (one per node) to a CSV file.
    pub fn write_csv(&self, path: &Path) -> Result<(), CavityError> {
        let mut s = String::from(
            "# centre lines: u(0.5, y) and v(x, 0.5); y and x are the node coordinates\ny,u,x,v\n",
        );
        for k in 0..self.coords.len() {
            let c = self.coords[k];
            s += &format!("{c:.8},{:.10e},{c:.8},{:.10e}\n", self.u[k], self.v[k]);
        }
        std::fs::write(path, s).map_err(|e| CavityError::io("writing", path, e))
    }
}

/// What a run did, for the terminal and `summary.txt`.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Reynolds number.
    pub re: f64,
    /// Nodes per side.
    pub n: usize,
    /// Where it ran.
    pub backend: String,
    /// Poisson precision.
    pub precision: String,
    /// How it ended (`steady`, `reached time`, `interrupted`).
    pub outcome: String,
    /// Steps taken (all runs of a resumed simulation).
    pub steps: u64,
    /// Simulated time.
    pub time: f64,
    /// Wall time of this run, seconds.
    pub wall_seconds: f64,
    /// The last relative change of `w` per unit time.
    pub change: f64,
    /// The smallest stream function and its node `(x, y)`.
    pub psi_min: (f64, f64, f64),
    /// The comparison with the reference, where one exists.
    pub comparison: Option<Comparison>,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "lid-driven cavity, Re = {}, {} x {} nodes, on {}, Poisson in {}",
            self.re, self.n, self.n, self.backend, self.precision
        )?;
        writeln!(f, "outcome:        {}", self.outcome)?;
        writeln!(f, "steps:          {}", self.steps)?;
        writeln!(f, "time:           {:.4}", self.time)?;
        writeln!(f, "wall time:      {:.2} s", self.wall_seconds)?;
        writeln!(f, "change of w:    {:.3e} per unit time", self.change)?;
        let (p, x, y) = self.psi_min;
        writeln!(f, "psi minimum:    {p:.6} at (x, y) = ({x:.4}, {y:.4})")?;
        if let Some(c) = &self.comparison {
            let (at, ours, theirs, vertical) = c.worst;
            let what = if vertical {
                "u(0.5, y) at y"
            } else {
                "v(x, 0.5) at x"
            };
            writeln!(f, "vs Ghia et al.: max |u - u_ref| = {:.4}, max |v - v_ref| = {:.4} (worst: {what} = {at:.4}: {ours:.5} vs {theirs:.5})", c.u_error, c.v_error)?;
        }
        Ok(())
    }
}

/// Creates the output folder `out` if missing and proves it writable (before any work).
pub fn prepare_output(out: &Path) -> Result<(), CavityError> {
    std::fs::create_dir_all(out)
        .map_err(|e| CavityError::io("cannot create the output folder", out, e))?;
    let probe = out.join(".cavity-write-test");
    std::fs::write(&probe, b"")
        .map_err(|e| CavityError::io("cannot write into the output folder", out, e))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Writes the results of `cavity` into `out`: `stream_function.png`, `vorticity.png`,
/// `centreline.csv`, `centreline.png` (with the reference's points if given),
/// `cavity.vtk` and `summary.txt`. Returns the files written.
pub fn write_results(
    cavity: &mut Cavity,
    out: &Path,
    reference: Option<&Reference>,
    summary: &mut Summary,
) -> Result<Vec<PathBuf>, CavityError> {
    let snapshot = Snapshot::of(cavity)?;
    if !cavity.writes_output() {
        return Ok(Vec::new());
    }
    write_snapshot(&snapshot, out, reference, summary)
}

/// Writes the results of the adaptive `cavity` into `out`: the files of
/// [`write_results`] from the flow composed on the uniform grid of the finest level,
/// `levels.png` (the leaf blocks, coloured by level, over the vorticity) and
/// `adaptive.vtk` (the leaf blocks' points with their level, for ParaView). Returns the
/// files written.
pub fn write_adaptive_results(
    cavity: &mut AdaptiveCavity,
    out: &Path,
    reference: Option<&Reference>,
    summary: &mut Summary,
) -> Result<Vec<PathBuf>, CavityError> {
    let finest = cavity.tree().levels() - 1;
    let (psi, w) = cavity.uniform(finest)?;
    let snapshot = Snapshot::from_fields(&Backend::Cpu, &with_halo(&psi)?, &with_halo(&w)?)?;
    let mut files = write_snapshot(&snapshot, out, reference, summary)?;
    let levels = out.join("levels.png");
    adaptive::levels_picture(&snapshot, cavity.tree(), &levels)?;
    let grid = out.join("adaptive.vtk");
    adaptive::write_vtk(&snapshot, cavity.tree(), &grid)?;
    files.extend([levels, grid]);
    Ok(files)
}

/// `f` (no halo) with a halo of one (zeros), as the velocity kernel reads.
fn with_halo(f: &Field<f64>) -> Result<Field<f64>, CavityError> {
    let host = f.to_host()?;
    Ok(Field::from_fn(f.extent(), 1, |p| {
        host.get(p).unwrap_or(0.0)
    }))
}

/// The files of [`write_results`] from a snapshot.
fn write_snapshot(
    snapshot: &Snapshot,
    out: &Path,
    reference: Option<&Reference>,
    summary: &mut Summary,
) -> Result<Vec<PathBuf>, CavityError> {
    let profiles = Profiles::from_snapshot(snapshot);
    summary.psi_min = snapshot.psi_min();
    summary.comparison = reference.map(|r| r.compare(&profiles));
    let file = |name: &str| out.join(name);
    let files = [
        "stream_function.png",
        "vorticity.png",
        "centreline.csv",
        "centreline.png",
        "cavity.vtk",
        "summary.txt",
    ]
    .map(file);
    pictures::stream_function(snapshot, &files[0])?;
    pictures::vorticity(snapshot, &files[1])?;
    profiles.write_csv(&files[2])?;
    plot::centre_lines(&profiles, reference, summary.re, &files[3])?;
    vtk::write(snapshot, &files[4])?;
    std::fs::write(&files[5], summary.to_string())
        .map_err(|e| CavityError::io("writing", &files[5], e))?;
    Ok(files.to_vec())
}
