//! The cavity over several ranks ([`Cavity::over_ranks`]): the grid cut into slabs of
//! rows, one per rank, as the Poisson solver over ranks cuts it
//! ([`multigrid::Solver::on_ranks`]); the flow kernels take a slab's place in the grid,
//! their ghost rows are filled before the stage update and the speed read across the cuts,
//! and the sums and maxima of the checks are all-reduced. A rank's rows then equal those
//! of one rank holding the whole grid, bit for bit, step by step.

use super::Cavity;
use crate::config::Config;
use crate::CavityError;
use multigrid::Solver;
use std::sync::Arc;
use stencil_ranks::{Op, Ranks};
use stencil_runtime::{Backend, Field};

/// The whole grid's stream function and vorticity, gathered from the ranks' slabs.
pub type WholeFlow = (Field<f64>, Field<f64>);

impl Cavity {
    /// A cavity at rest over `ranks`: this rank's fields hold the rows [`Cavity::rows`] of
    /// the grid, and every rank calls the same methods in the same order. On one rank this
    /// is [`Cavity::new`]. Snapshots and checkpoints gather the whole grid
    /// ([`Cavity::writes_output`] says which rank writes them); restoring one gives each
    /// rank its rows.
    pub fn over_ranks(
        backend: &Backend,
        config: &Config,
        ranks: Arc<Ranks>,
    ) -> Result<Cavity, CavityError> {
        Cavity::with_solver(backend, config, |b, n, options| {
            Solver::on_ranks(b, ranks, n, 2, options)
        })
    }

    /// `Ok` when this cavity holds the whole grid (one rank); over several ranks a typed
    /// error saying that `what` is not available there yet. The same on every rank.
    pub(crate) fn whole_grid(&self, what: &str) -> Result<(), CavityError> {
        match &self.slabs {
            None => Ok(()),
            Some(_) => Err(CavityError::Ranks(format!(
                "{what} needs the whole grid on one rank; over several ranks it is not available yet"
            ))),
        }
    }

    /// Over several ranks, the whole grid's stream function and vorticity on every rank
    /// (each rank's slab sent to all: every rank must call it); `None` on one rank, whose
    /// fields are the whole grid.
    pub fn gather_whole(&self) -> Result<Option<WholeFlow>, CavityError> {
        let Some(slabs) = &self.slabs else {
            return Ok(None);
        };
        let n = self.config.n;
        let gather = |part: &Field<f64>| -> Result<Field<f64>, CavityError> {
            let mut whole = Field::<f64>::zeros_on(&self.backend, &[n, n], 1)?;
            slabs
                .all_gather(&self.backend, part, &mut whole)
                .map_err(|e| CavityError::Ranks(e.to_string()))?;
            Ok(whole)
        };
        Ok(Some((gather(&self.psi)?, gather(&self.w)?)))
    }

    /// Whether this rank writes the run's files: the only rank, or rank 0 of several.
    pub fn writes_output(&self) -> bool {
        self.slabs.as_ref().is_none_or(|s| s.ranks().rank() == 0)
    }

    /// Whether `yes` holds on some rank (itself on one): a decision every rank takes
    /// alike, such as stopping on an interrupt one rank saw.
    pub fn on_any_rank(&self, yes: bool) -> bool {
        match &self.slabs {
            Some(s) => !s.ranks().all(!yes),
            None => yes,
        }
    }

    /// `value` summed over the ranks (itself on one).
    pub(super) fn all_sum(&self, value: f64) -> f64 {
        self.all(value, Op::Sum)
    }

    /// The largest `value` of the ranks (itself on one).
    pub(super) fn all_max(&self, value: f64) -> f64 {
        self.all(value, Op::Max)
    }

    fn all(&self, value: f64, op: Op) -> f64 {
        let mut v = [value];
        if let Some(s) = &self.slabs {
            s.ranks().all_reduce(&mut v, op);
        }
        v[0]
    }

    /// The worst node of every rank's (node `(i, j)` of the grid and its value), as one
    /// rank holding the whole grid finds it: the first non-finite value (so, on a tie,
    /// the lowest rank's), else the last of the largest magnitude (the highest rank's).
    pub(super) fn worst_over_ranks(&self, i: usize, j: usize, value: f64) -> (usize, usize, f64) {
        let Some(slabs) = &self.slabs else {
            return (i, j, value);
        };
        let ranks = slabs.ranks();
        let score = if value.is_finite() {
            value.abs()
        } else {
            f64::INFINITY
        };
        let worst = self.all_max(score);
        // Among the ranks holding the worst score: the lowest for a non-finite value,
        // else the highest (as the signs say).
        let sign = if worst.is_infinite() { -1.0 } else { 1.0 };
        let candidate = if score == worst {
            sign * ranks.rank() as f64
        } else {
            f64::NEG_INFINITY
        };
        let mut owner = [candidate];
        ranks.all_reduce(&mut owner, Op::Max);
        let mine = owner[0] == sign * ranks.rank() as f64;
        let mut place = [i as f64, j as f64, value];
        ranks.gather_owned(&[mine, mine, mine], &mut place);
        (place[0] as usize, place[1] as usize, place[2])
    }
}
