//! The simulation: its state on a backend and its time step.

mod dense_steps;
mod progress;
mod read;
mod setup;
mod stages;
mod step;

#[cfg(test)]
pub(crate) use step::DenseStepping;

pub(crate) use progress::{progress_getters, Progress};
pub(crate) use setup::{cell_field, corner_field, initial_fields, instability, kernel_cell_bed};
pub(crate) use setup::{velocity, with_velocities};
pub(crate) use stages::{Kp07Steps, Stage, Which};
pub use step::AfterStep;
pub(crate) use step::FAR_TARGET;

use crate::kernels::kp07;
use crate::{Boundaries, FloodError, Grid, Terrain};
use stencil_runtime::{Backend, Field, Real};

/// The halo of the state fields: the reconstruction reads two cells along each axis.
pub(crate) const HALO: usize = 2;

/// The halo of the bed's corner field: the kernels read the corners one cell along, and
/// a sparse run's block grid (whose halo every block field shares) needs the state's two.
pub(crate) const BED_HALO: usize = 2;

/// `backend` on a stream of its own (the CPU as it is): a simulation records its steps
/// as CUDA graphs from its stream, which no other thread's work may enter meanwhile.
/// Everything the simulation makes lives on that stream; read it through the
/// simulation's methods, or wait with its [`ShallowWater::backend`].
pub(crate) fn own_stream(backend: &Backend) -> Result<Backend, FloodError> {
    Ok(match backend {
        Backend::Cuda(c) => Backend::Cuda(c.new_stream()?),
        b => b.clone(),
    })
}

/// The most cells a grid may have for its stages to run in one pass by default on a
/// device. Measured on an H100 (`benches/kp07.rs`, `docs/benchmarks.md`): one pass per
/// stage was faster on Malpasset's 0.7 million cells (4.04 s against 5.27 s in f32) and
/// on 1024^2 in f64 (equal in f32), slower from 2048^2 on (0.74 against 0.62 ms per step
/// in f32), where the extra CFL pass and the stages' recomputed halo cost more than the
/// flux fields' traffic saved.
pub const ONE_PASS_MOST_CELLS: usize = 1 << 20;

/// How the dense simulation runs a Runge-Kutta stage ([`ShallowWater::set_passes`]); each
/// gives the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passes {
    /// [`kp07::faces`] (the six face fluxes to memory, with the CFL maximum), then
    /// [`kp07::advance`] from them.
    Two,
    /// [`kp07::stage_in_one`]: the face fluxes staged on chip and the update from them in
    /// one kernel, its time step from the CFL pass [`kp07::face_speeds`].
    One,
    /// [`kp07::rates`] (each cell reconstructed once and the face fluxes from it, staged
    /// on chip; each cell's three rates to memory, with the CFL maximum), then
    /// [`kp07::apply_rates`]: the "compact stencils" codes' split.
    Rates,
}

/// Steps between the stability checks of [`ShallowWater::advance_to`] (and of a whole
/// [`crate::Run`]).
pub(crate) const CHECK_EVERY: u64 = 100;

/// The time integrator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// First-order forward Euler.
    Euler,
    /// Second-order strong-stability-preserving Runge-Kutta (Heun's method).
    Rk2,
}

/// Physical and numerical parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Physics {
    /// Gravity (m/s^2).
    pub gravity: f64,
    /// Manning's roughness `n` (s/m^(1/3)); 0 for no friction.
    pub manning: f64,
    /// The generalised minmod limiter's parameter, in `[1, 2]` (1 most diffusive).
    pub theta: f64,
    /// The Courant number per direction: `dt = C min(dx / a_x, dy / a_y)`. KP07 prove
    /// positivity for `C <= 0.25`.
    pub courant: f64,
    /// The depth (m) below which velocities are desingularised (KP07 2.17 with
    /// `eps = dry_depth^4`), and below which a cell counts as dry and loses its discharge
    /// (thin films would otherwise move fast enough to shrink the time step tenfold).
    pub dry_depth: f64,
    /// The time integrator.
    pub integrator: Integrator,
}

impl Default for Physics {
    fn default() -> Physics {
        Physics {
            gravity: 9.81,
            manning: 0.0,
            theta: 1.3,
            courant: 0.25,
            dry_depth: 1e-3,
            integrator: Integrator::Rk2,
        }
    }
}

impl Physics {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), FloodError> {
        let checks: [(&str, f64, bool, &str); 5] = [
            (
                "gravity",
                self.gravity,
                self.gravity > 0.0,
                "a number above 0",
            ),
            (
                "manning",
                self.manning,
                self.manning >= 0.0,
                "a number >= 0",
            ),
            (
                "theta",
                self.theta,
                (1.0..=2.0).contains(&self.theta),
                "a limiter parameter in [1, 2]",
            ),
            (
                "courant",
                self.courant,
                self.courant > 0.0 && self.courant <= 0.5,
                "a Courant number in (0, 0.5] (0.25 keeps depths positive)",
            ),
            (
                "dry_depth",
                self.dry_depth,
                self.dry_depth > 0.0 && self.dry_depth < 1.0,
                "a depth in (0, 1) m",
            ),
        ];
        for (name, value, ok, expected) in checks {
            if !(ok && value.is_finite()) {
                return Err(FloodError::Config {
                    name: name.into(),
                    value: value.to_string(),
                    expected: expected.into(),
                });
            }
        }
        Ok(())
    }

    /// `eps` of the desingularisation (KP07 2.17): the dry depth to the fourth.
    pub(crate) fn eps<T: Real>(&self) -> T {
        T::from_f64(self.dry_depth.powi(4))
    }
}

/// The water at the start, per cell, row by row from the south.
#[derive(Clone, Debug, PartialEq)]
pub struct Water {
    /// The surface elevation `w = B + h`; values below the cell's bed mean dry.
    pub surface: Vec<f64>,
    /// The x velocity (m/s).
    pub u: Vec<f64>,
    /// The y velocity (m/s).
    pub v: Vec<f64>,
}

impl Water {
    /// Water of depth `h(x, y)` (at the cell centres) at rest.
    pub fn from_depth(terrain: &Terrain, h: impl Fn(f64, f64) -> f64) -> Water {
        Water::still_over(terrain, |x, y, bed| bed + h(x, y))
    }

    /// A still surface at `eta(x, y)` where it lies above the bed, dry elsewhere.
    pub fn from_surface(terrain: &Terrain, eta: impl Fn(f64, f64) -> f64) -> Water {
        Water::still_over(terrain, |x, y, bed| eta(x, y).max(bed))
    }

    /// Still water whose surface in each cell is `surface(x, y, bed)` of the cell's centre
    /// and bed.
    fn still_over(terrain: &Terrain, surface: impl Fn(f64, f64, f64) -> f64) -> Water {
        let g = *terrain.grid();
        let surface = (0..g.ny)
            .flat_map(|j| (0..g.nx).map(move |i| (i, j)))
            .map(|(i, j)| {
                let (x, y) = g.centre(i, j);
                surface(x, y, terrain.cell(i, j))
            })
            .collect();
        Water::still(surface)
    }

    /// The given surface at rest.
    pub fn still(surface: Vec<f64>) -> Water {
        let n = surface.len();
        Water {
            surface,
            u: vec![0.0; n],
            v: vec![0.0; n],
        }
    }

    /// The per-cell fields with their names: `surface`, `u`, `v`.
    pub(crate) fn named_fields(&self) -> [(&'static str, &Vec<f64>); 3] {
        [("surface", &self.surface), ("u", &self.u), ("v", &self.v)]
    }
}

/// Everything a simulation starts from.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The bed.
    pub terrain: Terrain,
    /// The initial water.
    pub water: Water,
    /// The sides' conditions.
    pub boundaries: Boundaries,
    /// Parameters.
    pub physics: Physics,
}

impl Setup {
    /// Gathers the parts.
    pub fn new(terrain: Terrain, water: Water, boundaries: Boundaries, physics: Physics) -> Setup {
        Setup {
            terrain,
            water,
            boundaries,
            physics,
        }
    }
}

/// What a survey of the state found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Survey {
    /// The water volume (m^3).
    pub volume: f64,
    /// The smallest depth.
    pub min_depth: f64,
    /// The largest depth.
    pub max_depth: f64,
    /// The largest `|u| + |v|` where the depth exceeds the dry depth.
    pub max_speed: f64,
}

/// A state saved to go on from: the conserved fields as `f64` (what
/// [`ShallowWater::state`] returns) with the time, the step count and the initial volume
/// they were taken at. Restored ([`ShallowWater::restore`]), the run goes on bit for bit
/// as if never stopped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedState {
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    /// The water volume at the start (m^3).
    pub initial_volume: f64,
    /// Surface, x discharge and y discharge per cell, row by row from the south.
    pub state: [Vec<f64>; 3],
}

/// A state: the three conserved fields (surface, x discharge, y discharge) and the
/// velocities `u`, `v` derived from them, which the face fluxes reconstruct.
type State<T> = [Field<T>; 5];

/// The face fluxes of a state (what [`kp07::faces`] writes): through each cell's west
/// face the fluxes of `w`, `q` and `p`, then through its south face the same.
type Fluxes<T> = [Field<T>; 6];

/// The halo of the flux fields: a cell reads its east and north neighbours' faces.
const FLUX_HALO: usize = 1;

/// Three per-cell fields on the host (e.g. depth, x and y velocity), row by row from the
/// south.
pub type CellFields = (Vec<f64>, Vec<f64>, Vec<f64>);

/// A shallow-water simulation in precision `T` on a backend.
pub struct ShallowWater<T: Real> {
    backend: Backend,
    grid: Grid,
    boundaries: Boundaries,
    physics: Physics,
    bed: Field<T>,
    fluxes: Fluxes<T>,
    /// How a stage runs.
    passes: Passes,
    /// The present state and the RK stage, the clock, the time and the steps.
    progress: Progress<State<T>, T>,
}

impl<T: Real> ShallowWater<T> {
    /// Uploads the setup to `backend`, checking it first. On a device the simulation
    /// queues its work on a stream of its own: everything it makes lives there (read it
    /// through its methods, or wait with its [`ShallowWater::backend`]).
    pub fn new(backend: &Backend, setup: &Setup) -> Result<ShallowWater<T>, FloodError> {
        let backend = &own_stream(backend)?;
        let (surface, q, p) = initial_fields::<T>(setup)?;
        let grid = *setup.terrain.grid();
        let extent = [grid.nx, grid.ny];
        let bed = corner_field::<T>(&setup.terrain, &setup.boundaries).to(backend)?;
        let zeros = |halo: usize| Field::zeros_on(backend, &extent, halo);
        let now = [
            surface.to(backend)?,
            q.to(backend)?,
            p.to(backend)?,
            zeros(HALO)?,
            zeros(HALO)?,
        ];
        let stage = [
            zeros(HALO)?,
            zeros(HALO)?,
            zeros(HALO)?,
            zeros(HALO)?,
            zeros(HALO)?,
        ];
        let mut flow = ShallowWater {
            backend: backend.clone(),
            grid,
            boundaries: setup.boundaries.clone(),
            physics: setup.physics,
            bed,
            fluxes: [
                zeros(FLUX_HALO)?,
                zeros(FLUX_HALO)?,
                zeros(FLUX_HALO)?,
                zeros(FLUX_HALO)?,
                zeros(FLUX_HALO)?,
                zeros(FLUX_HALO)?,
            ],
            passes: Passes::Two,
            progress: Progress::new(backend, now, stage)?,
        };
        flow.derive_velocities()?;
        flow.progress.initial_volume = flow.survey()?.volume;
        // On a device see `ONE_PASS_MOST_CELLS`. On the CPU rates and their update were
        // 1 to 20% faster than two passes in 11 of 12 rows of the `kp07` bench (512^2 and
        // 1024^2, f32 and f64, three runs; docs/benchmarks.md).
        let periodic = flow.boundaries.periodic(0) || flow.boundaries.periodic(1);
        if !periodic {
            match flow.backend {
                Backend::Cuda(_) if grid.nx * grid.ny <= ONE_PASS_MOST_CELLS => {
                    flow.passes = Passes::One
                }
                Backend::Cpu => flow.passes = Passes::Rates,
                _ => {}
            }
        }
        Ok(flow)
    }

    /// Runs each stage as one pass ([`Passes::One`]) or as two ([`Passes::Two`]). Both
    /// give the same bits. By default one pass on a device for grids of at most
    /// [`ONE_PASS_MOST_CELLS`] cells, two otherwise, and rates ([`Passes::Rates`]) on the
    /// CPU. A periodic side needs
    /// two passes (its fluxes are wrapped between them): asking for one is an error.
    pub fn set_one_pass(&mut self, one: bool) -> Result<(), FloodError> {
        self.set_passes(if one { Passes::One } else { Passes::Two })
    }

    /// Whether each stage runs as one pass (see [`ShallowWater::set_one_pass`]).
    pub fn one_pass(&self) -> bool {
        self.passes == Passes::One
    }

    /// Runs each stage as `passes` says; every way gives the same bits. A periodic side
    /// needs [`Passes::Two`] (its fluxes are wrapped between the passes): asking for
    /// another is an error.
    pub fn set_passes(&mut self, passes: Passes) -> Result<(), FloodError> {
        let periodic = self.boundaries.periodic(0) || self.boundaries.periodic(1);
        if passes != Passes::Two && periodic {
            return Err(FloodError::Config {
                name: "passes".into(),
                value: format!("{passes:?}"),
                expected: "two passes (faces, then advance) on a grid with a periodic side".into(),
            });
        }
        self.passes = passes;
        Ok(())
    }

    /// How each stage runs (see [`ShallowWater::set_passes`]).
    pub fn passes(&self) -> Passes {
        self.passes
    }

    /// Bytes of the fields the simulation keeps on its backend (state, RK stage, fluxes,
    /// bed).
    pub fn memory(&self) -> usize {
        let mut fields: Vec<&Field<T>> = self
            .progress
            .now
            .iter()
            .chain(&self.progress.stage)
            .chain(&self.fluxes)
            .collect();
        fields.push(&self.bed);
        fields.iter().map(|f| f.storage_len()).sum::<usize>() * std::mem::size_of::<T>()
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The backend it runs on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    progress_getters!();

    /// The parameters.
    pub fn physics(&self) -> &Physics {
        &self.physics
    }

    /// Writes the velocities of the present state from its conserved fields (after the
    /// state was set from outside).
    fn derive_velocities(&mut self) -> Result<(), FloodError> {
        let eps = self.physics.eps();
        let [w, q, p, u, v] = &mut self.progress.now;
        kp07::velocities::launch(&self.backend, w, q, p, &self.bed, u, v, eps)?;
        Ok(())
    }

    /// Surveys the state and stops with [`FloodError::Unstable`] if a value is not
    /// finite or a depth negative.
    pub fn check(&mut self) -> Result<Survey, FloodError> {
        let s = self.survey()?;
        if !(s.volume.is_finite() && s.min_depth >= 0.0 && s.max_speed.is_finite()) {
            return Err(self.locate_instability());
        }
        Ok(s)
    }

    /// The volume, depth range and largest speed.
    pub fn survey(&self) -> Result<Survey, FloodError> {
        let [w, q, p, _, _] = &self.progress.now;
        let (volume, min_depth, max_depth, max_speed) = kp07::survey::launch(
            &self.backend,
            w,
            q,
            p,
            &self.bed,
            T::from_f64(self.physics.dry_depth),
        )?;
        Ok(Survey {
            volume: volume * self.grid.cell_area(),
            min_depth: min_depth.as_f64(),
            max_depth: max_depth.as_f64(),
            max_speed: max_speed.as_f64().max(0.0),
        })
    }

    /// The first cell (row by row from the south) whose values are not finite, whose
    /// depth is negative or whose speed is the largest, as an error.
    fn locate_instability(&self) -> FloodError {
        let p = &self.progress;
        match self.depth_and_velocity() {
            Ok(fields) => instability(&self.grid, p.steps, p.time, &fields),
            Err(e) => e,
        }
    }

    /// The state as `f64`: surface, x discharge and y discharge per cell, row by row
    /// from the south (exact in either precision: what [`ShallowWater::restore`] takes).
    pub fn state(&self) -> Result<[Vec<f64>; 3], FloodError> {
        let now = &self.progress.now;
        let f = |k: usize| -> Result<Vec<f64>, FloodError> {
            Ok(now[k].interior()?.iter().map(|x| x.as_f64()).collect())
        };
        Ok([f(0)?, f(1)?, f(2)?])
    }

    /// Puts back a saved state (the fields as [`ShallowWater::state`] takes them): the run
    /// then goes on bit for bit as if never stopped.
    pub fn restore(&mut self, saved: &SavedState) -> Result<(), FloodError> {
        let g = self.grid;
        for (k, values) in saved.state.iter().enumerate() {
            let host = cell_field::<T>(&g, "restored state", values, HALO)?;
            self.progress.now[k].copy_from(&host)?;
        }
        self.derive_velocities()?;
        self.progress.resume_from(saved);
        Ok(())
    }
}
