//! Timing a step and its parts ([`Cavity::profile`]), for the benchmarks.

use super::{walls, Cavity};
use crate::kernels::flow;
use crate::model::poisson_cycles;
use crate::step_graph::{record, recording_device};
use crate::CavityError;
use std::time::Instant;

impl Cavity {
    /// Times `steps` steps and the two parts of a step run on their own: the Poisson
    /// solves (with the wall update) and the RK4 stage kernels. Advances the state (for
    /// benchmarks). Returns seconds per step for the whole, the Poisson part and the rest.
    pub fn profile(&mut self, steps: usize) -> Result<[f64; 3], CavityError> {
        self.whole_grid("the profile of a step")?;
        let whole = self.timed(steps, |c| c.rk4_step())?;
        let poisson = self.timed_recorded(steps, |c| {
            let [s0, _] = &mut c.stages;
            for f in 0..4 {
                let field = if f == 0 { &c.w } else { &*s0 };
                poisson_cycles(&mut c.poisson, &mut c.psi, field, c.config.poisson_cycles)?;
            }
            Ok(())
        })?;
        let rest = self.timed_recorded(steps, |c| {
            let dt = c.dt;
            let (re_inv, h_inv) = (1.0 / c.config.re, 1.0 / c.h);
            let b = c.backend.clone();
            let rows = c.kernel_rows();
            let (j0, nj) = rows;
            let [s0, s1] = &mut c.stages;
            let [a0, a1] = &mut c.sums;
            for _ in 0..2 {
                walls(&b, c.h, &c.psi, s0, rows)?;
                flow::rk4_stage::launch(
                    &b, s0, &c.psi, s1, s1, a0, a1, re_inv, h_inv, dt, dt, false, false, j0, nj,
                )?;
                walls(&b, c.h, &c.psi, s1, rows)?;
                flow::rk4_stage::launch(
                    &b, s1, &c.psi, s0, s0, a1, a0, re_inv, h_inv, dt, dt, false, false, j0, nj,
                )?;
            }
            Ok(())
        })?;
        Ok([whole, poisson, rest])
    }

    /// Seconds per call of `work`, over `calls` calls after one untimed call.
    fn timed(
        &mut self,
        calls: usize,
        mut work: impl FnMut(&mut Cavity) -> Result<(), CavityError>,
    ) -> Result<f64, CavityError> {
        work(self)?;
        self.backend.synchronize()?;
        let start = Instant::now();
        for _ in 0..calls {
            work(self)?;
        }
        self.backend.synchronize()?;
        Ok(start.elapsed().as_secs_f64() / calls as f64)
    }

    /// [`Cavity::timed`], with `work` recorded into a CUDA graph on a device (as the
    /// whole step is).
    fn timed_recorded(
        &mut self,
        calls: usize,
        mut work: impl FnMut(&mut Cavity) -> Result<(), CavityError>,
    ) -> Result<f64, CavityError> {
        let Some(cuda) = recording_device(&self.backend, self.config.graph) else {
            return self.timed(calls, work);
        };
        work(self)?;
        let graph = record(&cuda, || work(self))?;
        self.timed(calls, |_| Ok(graph.launch()?))
    }
}
