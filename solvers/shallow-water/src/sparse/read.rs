//! Reading a sparse run's state: surveys, the dense state, single cells, and the
//! instability check (absent blocks read as dry).

use super::layout::dry_surface;
use super::SparseShallowWater;
use crate::kernels::kp07;
use crate::model::{instability, velocity, with_velocities, CellFields};
use crate::{FloodError, Physics, Survey};
use stencil_runtime::{BlockField, Field, Real};

impl<T: Real> SparseShallowWater<T> {
    /// The volume, depth range and largest speed over the present blocks (absent blocks
    /// are dry).
    pub fn survey(&self) -> Result<Survey, FloodError> {
        let [w, q, p, _, _] = &self.progress.now;
        let (volume, min_depth, max_depth, max_speed) = kp07::survey::launch_blocks(
            &self.backend,
            &self.list,
            w,
            q,
            p,
            &self.bed,
            T::from_f64(self.physics.dry_depth),
        )?;
        let mut survey = Survey {
            volume: volume * self.grid.cell_area(),
            min_depth: min_depth.as_f64(),
            max_depth: max_depth.as_f64(),
            max_speed: max_speed.as_f64().max(0.0),
        };
        if let Some(d) = &self.distribution {
            survey = d.all_survey(survey);
        }
        Ok(survey)
    }

    /// The backend the blocks live on.
    pub fn backend(&self) -> &stencil_runtime::Backend {
        &self.backend
    }

    /// The depth (zero where dry or absent) and the speed of every cell into two dense
    /// fields of the grid's extent where the state lives (`kp07::picture` over the present
    /// blocks, then a copy per block on the device), for the live view. Without a `speed`
    /// field the speed is not copied (one copy per block fewer).
    pub fn picture(
        &self,
        depth: &mut Field<T>,
        speed: Option<&mut Field<T>>,
    ) -> Result<(), FloodError> {
        let [w, q, p, _, _] = &self.progress.now;
        let mut on_blocks = [
            BlockField::zeroed(&self.blocks)?,
            BlockField::zeroed(&self.blocks)?,
        ];
        let [d, s] = &mut on_blocks;
        kp07::picture::launch_blocks(
            &self.backend,
            &self.list,
            w,
            q,
            p,
            &self.bed,
            d,
            s,
            T::from_f64(self.physics.dry_depth),
        )?;
        for (blocks, dense) in on_blocks.iter().zip(std::iter::once(depth).chain(speed)) {
            dense.set_zero()?;
            blocks.copy_into_dense(&self.blocks, dense)?;
        }
        Ok(())
    }

    /// The state as `f64`, dense: surface, x and y discharge per cell, row by row from the
    /// south (absent blocks dry; a NaN of a present block stays NaN). Over ranks every
    /// rank gets every cell (every rank must call it at the same point).
    pub fn state(&self) -> Result<[Vec<f64>; 3], FloodError> {
        let g = self.grid;
        let geometry = *self.blocks.geometry();
        let absent = |c: usize| {
            !self
                .blocks
                .contains(geometry.key_of([c % g.nx, c / g.nx, 0]))
        };
        let dense = |k: usize| -> Result<Vec<f64>, FloodError> {
            let f = self.progress.now[k].to_dense(&self.blocks, 0, T::nan())?;
            let values = f.interior()?;
            Ok(values
                .iter()
                .enumerate()
                .map(|(c, v)| match (v.is_nan() && absent(c), k) {
                    (true, 0) => dry_surface(&self.corners, c % g.nx, c / g.nx),
                    (true, _) => 0.0,
                    (false, _) => v.as_f64(),
                })
                .collect())
        };
        let [w, q, p]: [Vec<f64>; 3] = self
            .gathered(vec![dense(0)?, dense(1)?, dense(2)?])
            .try_into()
            .map_err(|_| FloodError::Config {
                name: "state".into(),
                value: "not three fields".into(),
                expected: "surface and discharges".into(),
            })?;
        Ok([w, q, p])
    }

    /// Surveys the state and stops with [`FloodError::Unstable`] if a value is not
    /// finite or a depth negative (as the dense model's `check`).
    pub fn check(&mut self) -> Result<Survey, FloodError> {
        let s = self.survey()?;
        if !(s.volume.is_finite() && s.min_depth >= 0.0 && s.max_speed.is_finite()) {
            return Err(self.instability());
        }
        Ok(s)
    }

    /// The instability of the present state, located (see [`instability`]).
    pub(super) fn instability(&self) -> FloodError {
        let p = &self.progress;
        match self.depth_and_velocity() {
            Ok(fields) => instability(&self.grid, p.steps, p.time, &fields),
            Err(e) => e,
        }
    }

    /// The physical parameters.
    pub fn physics(&self) -> &Physics {
        &self.physics
    }

    /// Cell `(i, j)`'s mean bed as the kernels compute it.
    pub fn cell_bed(&self, i: usize, j: usize) -> Result<f64, FloodError> {
        self.inside(i, j)?;
        Ok(dry_surface(&self.corners, i, j))
    }

    /// Depth and velocity `(h, u, v)` in cell `(i, j)` whose bed is `bed` (three element
    /// copies on a device; a cell of an absent block is dry).
    pub fn probe_over(&self, i: usize, j: usize, bed: f64) -> Result<(f64, f64, f64), FloodError> {
        self.inside(i, j)?;
        let Some(d) = &self.distribution else {
            return Ok(self.probe_many(&[(i, j, bed)])?[0]);
        };
        // The owner's values (every rank must probe the same cell at the same point; the
        // others may not hold it). A cell of a block no rank holds is dry, on every rank
        // as on one.
        let at = [i, j, 0];
        let key = self.blocks.geometry().key_of(at);
        if d.follows && d.dealt().present.binary_search(&key).is_err() {
            return Ok((0.0, 0.0, 0.0));
        }
        let mine = self.list.keys().contains(&key);
        let own = |k: usize| -> Result<Vec<f64>, FloodError> {
            let value = self.progress.now[k].get(&self.blocks, at)?;
            Ok(vec![value.map_or(f64::NEG_INFINITY, |x| x.as_f64())])
        };
        let mut values = [own(0)?, own(1)?, own(2)?];
        d.gather(&[mine], &mut values);
        Ok(self.depth_and_velocity_of(values[0][0], values[1][0], values[2][0], bed))
    }

    /// [`SparseShallowWater::probe_over`] at each of `cells` (`(i, j, bed)`); on one rank
    /// read from a device with one wait per state field for all of them (the gauges).
    pub fn probe_many(
        &self,
        cells: &[(usize, usize, f64)],
    ) -> Result<Vec<(f64, f64, f64)>, FloodError> {
        if self.distribution.is_some() {
            return cells
                .iter()
                .map(|&(i, j, bed)| self.probe_over(i, j, bed))
                .collect();
        }
        for &(i, j, _) in cells {
            self.inside(i, j)?;
        }
        let points: Vec<[usize; 3]> = cells.iter().map(|&(i, j, _)| [i, j, 0]).collect();
        let read = |k: usize| self.progress.now[k].get_many(&self.blocks, &points);
        let [w, q, p] = [read(0)?, read(1)?, read(2)?];
        Ok(cells
            .iter()
            .enumerate()
            .map(|(n, &(_, _, bed))| match w[n] {
                // A cell of an absent block is dry.
                None => (0.0, 0.0, 0.0),
                Some(w) => {
                    let (q, p) = (
                        q[n].map_or(0.0, |x| x.as_f64()),
                        p[n].map_or(0.0, |x| x.as_f64()),
                    );
                    self.depth_and_velocity_of(w.as_f64(), q, p, bed)
                }
            })
            .collect())
    }

    /// `(h, u, v)` from the surface `w` and the discharges over a cell whose bed is `bed`.
    fn depth_and_velocity_of(&self, w: f64, q: f64, p: f64, bed: f64) -> (f64, f64, f64) {
        let (h, dry) = (w - bed, self.physics.dry_depth);
        (h, velocity(q, h, dry), velocity(p, h, dry))
    }

    /// The depth and the velocities `(h, u, v)` per cell, row by row from the south (as
    /// the dense model's).
    pub fn depth_and_velocity(&self) -> Result<CellFields, FloodError> {
        let [w, q, p] = self.state()?;
        let g = self.grid;
        let dry = self.physics.dry_depth;
        let h: Vec<f64> = w
            .iter()
            .enumerate()
            .map(|(k, w)| w - dry_surface(&self.corners, k % g.nx, k / g.nx))
            .collect();
        Ok(with_velocities(h, &q, &p, dry))
    }

    /// An error unless `(i, j)` is a cell of the grid.
    fn inside(&self, i: usize, j: usize) -> Result<(), FloodError> {
        if i < self.grid.nx && j < self.grid.ny {
            return Ok(());
        }
        Err(self.grid.not_a_cell(i, j))
    }
}
