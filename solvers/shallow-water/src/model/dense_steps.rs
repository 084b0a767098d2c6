//! The dense simulation's launches of the KP07 kernels ([`Kp07Steps`]): a stage as two
//! passes (`kp07::faces`, the fluxes' periodic wraps, `kp07::advance`), as one
//! (`kp07::stage_in_one`, its time step from `kp07::face_speeds`), or as rates and their
//! update (`kp07::rates` into the first three flux fields, `kp07::apply_rates`).

use super::{Kp07Steps, Passes, Progress, ShallowWater, Stage, State, Which, FLUX_HALO, HALO};
use crate::kernels::kp07::{self, Fluxes, StateFields};
use crate::{Boundaries, FloodError, Grid, Physics};
use stencil_runtime::{Backend, Real};

impl<T: Real> Kp07Steps<T> for ShallowWater<T> {
    fn setting(&self) -> (&Backend, &Grid, &Boundaries, &Physics) {
        (&self.backend, &self.grid, &self.boundaries, &self.physics)
    }

    fn evaluate_fluxes_on(&mut self, on: &Backend, which: Which, t: f64) -> Result<T, FloodError> {
        let s = self.scalars(t);
        if self.passes == Passes::Rates {
            let state = StateFields::of(self.progress.pick(which).each_ref());
            let [rate_w, rate_q, rate_p, ..] = &mut self.fluxes;
            return Ok(kp07::rates::launch(
                on, state, &self.bed, rate_w, rate_q, rate_p, &s,
            )?);
        }
        if self.passes == Passes::One {
            // The stage computes its fluxes itself; only the step's speed is wanted, that
            // of the present state (a stage's is never read).
            return match which {
                Which::Stage => Ok(T::from_f64(f64::NAN)),
                Which::Now => {
                    let now = StateFields::of(self.progress.now.each_ref());
                    Ok(kp07::face_speeds::launch(on, now, &self.bed, &s)?)
                }
            };
        }
        let state = self.progress.pick(which);
        // The faces read the surface and the velocities two cells along.
        for axis in 0..2 {
            if self.boundaries.periodic(axis) {
                let n = [self.grid.nx, self.grid.ny][axis];
                for k in [0, 3, 4] {
                    state[k].wrap_periodic(&self.backend, axis, n, HALO)?;
                }
            }
        }
        let faces = Fluxes::of(self.fluxes.each_mut());
        let state = StateFields::of(state.each_ref());
        let speed = kp07::faces::launch(on, state, &self.bed, faces, &s)?;
        // On a periodic axis the last column's east faces are the first column's west
        // faces (and likewise north and south).
        for axis in 0..2 {
            if self.boundaries.periodic(axis) {
                let n = [self.grid.nx, self.grid.ny][axis];
                for f in &mut self.fluxes[3 * axis..3 * axis + 3] {
                    f.wrap_periodic(&self.backend, axis, n, FLUX_HALO)?;
                }
            }
        }
        Ok(speed)
    }

    fn launch_advance(&mut self, stage: &Stage<T>) -> Result<(), FloodError> {
        let (from, to) = self.progress.stage_pair(stage.forward);
        let on = &self.backend;
        let (from, to) = (
            StateFields::of(from.each_ref()),
            StateFields::of(to.each_mut()),
        );
        let (dt, keep, s) = (stage.dt, stage.keep, &stage.scalars);
        match self.passes {
            Passes::One => {
                kp07::stage_in_one::launch(on, from, &self.bed, to, dt, keep, s)?;
                return Ok(());
            }
            Passes::Rates => {
                let [rate_w, rate_q, rate_p, ..] = &self.fluxes;
                let b = &self.bed;
                kp07::apply_rates::launch(on, from, b, rate_w, rate_q, rate_p, to, dt, keep, s)?;
                return Ok(());
            }
            Passes::Two => {}
        }
        let faces = Fluxes::of(self.fluxes.each_ref());
        kp07::advance::launch(on, from, &self.bed, faces, to, dt, keep, s)?;
        Ok(())
    }

    type State = State<T>;

    fn progress(&mut self) -> &mut Progress<State<T>, T> {
        &mut self.progress
    }
}
