//! How a backend runs a cycle: which of its launches are fused.
//!
//! The kernels say what a cycle computes; a [`Schedule`] says how a backend runs them.
//! Every fusion leaves the iterates bit-identical (the `fused_launches_give_the_same_iterates`
//! test), so the choice is one of cost alone, and the costs differ by backend: the fusions
//! that recompute neighbours' intermediate values save a GPU memory traffic it is bound
//! by, and cost a CPU arithmetic it is bound by (measured in `docs/benchmarks.md`).

use stencil_runtime::Backend;

/// Which launches of a multigrid cycle run fused. Each flag applies where the level
/// allows it (see the fields); elsewhere the launches run one by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Zeroing a correction and its first red-black half-sweep in one launch (2D
    /// red-black levels): one pass fewer, no extra arithmetic.
    pub zero_with_sweep: bool,
    /// On 2D red-black levels with four Dirichlet sides imposed directly: the residual with
    /// its restriction, the prolongation with the next half-sweep, the zeroing with the
    /// first two whole sweeps, the three half-sweeps after the prolongation's, and every
    /// further whole sweep out of place. Each point recomputes its neighbours' intermediate
    /// values: fewer bytes moved, more arithmetic done.
    pub recomputing: bool,
    /// Defect correction's update `u + e` and the next 2nd-order defect in one pass, into
    /// a second solution buffer that alternates with the caller's: one pass fewer.
    pub update_with_defect: bool,
}

impl Schedule {
    /// Every fusion.
    pub const FUSED: Schedule = Schedule {
        zero_with_sweep: true,
        recomputing: true,
        update_with_defect: true,
    };

    /// Every launch on its own.
    pub const UNFUSED: Schedule = Schedule {
        zero_with_sweep: false,
        recomputing: false,
        update_with_defect: false,
    };

    /// The schedule measured fastest on `backend`'s kind (`docs/benchmarks.md`, "Schedules
    /// per backend"): on a CUDA device every fusion (the cycle is bound by memory
    /// traffic); on the CPU only the zeroing with the first half-sweep (on two cores a
    /// 1025^2 solve took 1.8x as long with the recomputing fusions, and 10% longer with
    /// the update and defect in one pass, whose odd cycle counts cost a copy back).
    pub fn for_backend(backend: &Backend) -> Schedule {
        match backend {
            Backend::Cuda(_) => Schedule::FUSED,
            Backend::Cpu => Schedule {
                zero_with_sweep: true,
                ..Schedule::UNFUSED
            },
        }
    }

    /// Parses `fused`, `unfused`, or a comma-separated list of the fusions to turn on
    /// (`zero-with-sweep`, `recomputing`, `update-with-defect`).
    pub fn parse(text: &str) -> Result<Schedule, String> {
        match text {
            "fused" => return Ok(Schedule::FUSED),
            "unfused" => return Ok(Schedule::UNFUSED),
            _ => {}
        }
        let mut s = Schedule::UNFUSED;
        for flag in text.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            match flag {
                "zero-with-sweep" => s.zero_with_sweep = true,
                "recomputing" => s.recomputing = true,
                "update-with-defect" => s.update_with_defect = true,
                other => {
                    return Err(format!(
                        "unknown schedule `{other}`: use fused, unfused or a list of \
                         zero-with-sweep, recomputing, update-with-defect"
                    ))
                }
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_by_name_and_by_flags() {
        assert_eq!(Schedule::parse("fused"), Ok(Schedule::FUSED));
        assert_eq!(Schedule::parse("unfused"), Ok(Schedule::UNFUSED));
        assert_eq!(
            Schedule::parse("zero-with-sweep, recomputing,update-with-defect"),
            Ok(Schedule::FUSED)
        );
        let err = Schedule::parse("recompute").unwrap_err();
        assert!(err.contains("unknown schedule `recompute`"), "{err}");
    }

    #[test]
    fn the_cpu_runs_no_recomputing_fusion() {
        assert!(!Schedule::for_backend(&Backend::Cpu).recomputing);
    }
}
