//! Steps over ranks decided on the devices: each rank keeps the wave speeds of its face
//! passes' launches (a list or more per part, see `ranked.rs`) on its device, combines them
//! there ([`crate::clock::kernels::larger`]), and the ranks' speeds are all-reduced by NCCL on the run's
//! stream before the tick turns the speed into the step ([`crate::clock`]). No rank's
//! host waits for a step's speed, so each queues steps while earlier ones run, as one
//! device does. The tick's arithmetic is the host's, so the steps equal those of
//! [`SparseShallowWater::step`] bit for bit (`sw-ranks-check`). As on one device, this
//! needs sides whose values do not change; otherwise the host decides each step.

use super::SparseShallowWater;
use crate::clock::Clock;
use crate::model::{Kp07Steps, Which};
use crate::FloodError;
use stencil_runtime::{Backend, Real};

/// The environment variable that, set to `1`, lets runs over ranks on devices that follow
/// the water decide their steps on the devices too (the layout's work between steps stays
/// on the hosts). Off by default until `sw-ranks-check --device` has run it bit for bit
/// against the host-decided steps (its "clocked alike" cases).
pub const FOLLOW_CLOCKED_ENV: &str = "STENCIL_FOLLOW_CLOCKED";

impl<T: Real> SparseShallowWater<T> {
    /// Whether a run over ranks decides its steps on the devices: the ranks on devices
    /// (on the CPU the speed is all-reduced by MPI), and every block present for good; a
    /// run following the water (which chooses its blocks on the hosts between steps) too
    /// where [`FOLLOW_CLOCKED_ENV`] is `1`, while that path awaits its check on devices.
    pub(super) fn decides_over_ranks_on_devices(&self) -> bool {
        let following_too = std::env::var(FOLLOW_CLOCKED_ENV).is_ok_and(|v| v == "1");
        self.distribution
            .as_ref()
            .is_some_and(|d| !d.follows || following_too)
            && matches!(self.backend, Backend::Cuda(_))
    }

    /// Queues one step over ranks decided by `clock`: the faces of the present state on
    /// [`Clock::keeping`], the launches' speeds combined and all-reduced on the devices,
    /// the tick, the faces' ghosts, the stages.
    pub(super) fn queue_ranked_clocked_stages(
        &mut self,
        clock: &mut Clock<T>,
    ) -> Result<(), FloodError> {
        let Backend::Cuda(cuda) = self.backend.clone() else {
            return Err(FloodError::Config {
                name: "steps decided over ranks".into(),
                value: "ranks on the CPU".into(),
                expected: "ranks on devices (the CPU's ranks decide steps on the host)".into(),
            });
        };
        let t = self.progress.time;
        let s = self.scalars(t);
        let keeping = clock.keeping(&self.backend);
        let returned = self.ranked_faces(&keeping, Which::Now, &s)?;
        let distribution = self.distribution.as_ref().expect("a run over ranks");
        let speed = clock.combine_kept(&self.backend, returned, distribution.launches())?;
        let ranks = distribution.ranks();
        // One rank holds the answer already (and needs no NCCL).
        if ranks.size() > 1 {
            let nccl = ranks
                .nccl(&cuda)
                .map_err(stencil_ranks::LayoutError::from)?;
            nccl.all_reduce_max(&cuda, speed)?;
        }
        clock.tick_combined(&self.backend, self.physics.courant)?;
        self.start_face_ghosts()?;
        self.stages(&clock.dt, t, t)
    }
}
