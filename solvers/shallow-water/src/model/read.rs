//! Reading a dense run's state on the host: single cells (gauges) and whole fields.

use super::{kernel_cell_bed, velocity, with_velocities, CellFields, ShallowWater};
use crate::kernels::kp07;
use crate::FloodError;
use stencil_runtime::{Field, Real};

impl<T: Real> ShallowWater<T> {
    /// Depth and velocity `(h, u, v)` in cell `(i, j)`, read from wherever the state lives
    /// (a few element copies on a device); the velocity is 0 at or below the dry depth.
    pub fn probe(&self, i: usize, j: usize) -> Result<(f64, f64, f64), FloodError> {
        self.probe_over(i, j, self.cell_bed(i, j)?)
    }

    /// Cell `(i, j)`'s mean bed as the kernels compute it.
    pub fn cell_bed(&self, i: usize, j: usize) -> Result<f64, FloodError> {
        let corner = |di, dj| -> Result<T, FloodError> {
            Ok(T::from_f64(self.value_at(&self.bed, i + di, j + dj)?))
        };
        Ok(kernel_cell_bed(
            corner(0, 0)?,
            corner(1, 0)?,
            corner(0, 1)?,
            corner(1, 1)?,
        ))
    }

    /// [`ShallowWater::probe`] with the cell's bed known (three element copies).
    pub fn probe_over(&self, i: usize, j: usize, bed: f64) -> Result<(f64, f64, f64), FloodError> {
        Ok(self.probe_many(&[(i, j, bed)])?[0])
    }

    /// [`ShallowWater::probe_over`] at each of `cells` (`(i, j, bed)`), read from a device
    /// with one wait per state field for all of them (the gauges).
    pub fn probe_many(
        &self,
        cells: &[(usize, usize, f64)],
    ) -> Result<Vec<(f64, f64, f64)>, FloodError> {
        let points: Vec<[isize; 3]> = cells
            .iter()
            .map(|&(i, j, _)| [i as isize, j as isize, 0])
            .collect();
        let read = |k: usize| -> Result<Vec<f64>, FloodError> {
            let values = self.progress.now[k].get_many(&points)?;
            values
                .into_iter()
                .zip(cells)
                .map(|(x, &(i, j, _))| {
                    x.map(|x| x.as_f64())
                        .ok_or_else(|| self.grid.not_a_cell(i, j))
                })
                .collect()
        };
        let [w, q, p] = [read(0)?, read(1)?, read(2)?];
        let dry = self.physics.dry_depth;
        Ok(cells
            .iter()
            .enumerate()
            .map(|(n, &(_, _, bed))| {
                let h = w[n] - bed;
                (h, velocity(q[n], h, dry), velocity(p[n], h, dry))
            })
            .collect())
    }

    /// The value of `f` at `(i, j)` (halo included), or an error naming the cell.
    fn value_at(&self, f: &Field<T>, i: usize, j: usize) -> Result<f64, FloodError> {
        f.get([i as isize, j as isize, 0])
            .map(|x| x.as_f64())
            .ok_or_else(|| self.grid.not_a_cell(i, j))
    }

    /// The surface field (on the backend) and the bed's corner field: what the flood
    /// tracking kernel reads.
    pub(crate) fn surface_and_bed(&self) -> (&Field<T>, &Field<T>) {
        (&self.progress.now[0], &self.bed)
    }

    /// The depth (zero where dry) and the speed of every cell into two fields of the
    /// grid's extent where the state lives (`kp07::picture`), for the live view.
    pub fn picture(&self, depth: &mut Field<T>, speed: &mut Field<T>) -> Result<(), FloodError> {
        let [w, q, p, _, _] = &self.progress.now;
        kp07::picture::launch(
            &self.backend,
            w,
            q,
            p,
            &self.bed,
            depth,
            speed,
            T::from_f64(self.physics.dry_depth),
        )?;
        Ok(())
    }

    /// The depth per cell, row by row from the south.
    pub fn depth(&self) -> Result<Vec<f64>, FloodError> {
        let w = self.progress.now[0].interior()?;
        let bed = self.bed.to_host()?;
        let g = &self.grid;
        let corner = |i: usize, j: usize| bed.get([i as isize, j as isize, 0]).unwrap_or(T::nan());
        Ok(w.iter()
            .enumerate()
            .map(|(k, w)| {
                let (i, j) = (k % g.nx, k / g.nx);
                let b = kernel_cell_bed(
                    corner(i, j),
                    corner(i + 1, j),
                    corner(i, j + 1),
                    corner(i + 1, j + 1),
                );
                w.as_f64() - b
            })
            .collect())
    }

    /// The surface elevation per cell.
    pub fn surface(&self) -> Result<Vec<f64>, FloodError> {
        let w = self.progress.now[0].interior()?;
        Ok(w.iter().map(|w| w.as_f64()).collect())
    }

    /// The discharges `(hu, hv)` per cell.
    pub fn discharge(&self) -> Result<(Vec<f64>, Vec<f64>), FloodError> {
        let now = &self.progress.now;
        let f = |k: usize| -> Result<Vec<f64>, FloodError> {
            Ok(now[k].interior()?.iter().map(|x| x.as_f64()).collect())
        };
        Ok((f(1)?, f(2)?))
    }

    /// The velocities `(u, v)` per cell: discharge over depth where the depth exceeds the
    /// dry depth, 0 elsewhere.
    pub fn velocity(&self) -> Result<(Vec<f64>, Vec<f64>), FloodError> {
        let (_, u, v) = self.depth_and_velocity()?;
        Ok((u, v))
    }

    /// The depth and the velocities `(h, u, v)` per cell, the state read once.
    pub fn depth_and_velocity(&self) -> Result<CellFields, FloodError> {
        let h = self.depth()?;
        let (q, p) = self.discharge()?;
        Ok(with_velocities(h, &q, &p, self.physics.dry_depth))
    }
}
