//! The solver over several ranks ([`Solver::on_ranks`]): the grid cut along its last axis
//! into slabs, one per rank ([`stencil_ranks::Slabs`]); the levels split the same way
//! while they have more than [`Options::gather_below`] nodes per axis; the first level
//! with at most that many, and those below, gathered whole onto every rank and cycled
//! there by each (the same small work everywhere, no result to wait for).
//!
//! Every kernel runs on a rank's slab as on the whole grid: the sides at the cuts read
//! ghost planes that the neighbouring ranks fill before each kernel that reads across
//! them (where a periodic side's ghosts are wrapped). The slabs of the finest level start
//! at multiples of `2^G`, `G` the gathered level, so that every split level's slabs start
//! at even nodes: red-black colours and the coarse nodes of the transfers fall where they
//! fall on the whole grid. The iterates are those of one rank bit for bit; the residual
//! norms are sums over the ranks' sums, equal to one rank's up to rounding.

use crate::ops::Ops;
use crate::options::{BoundaryKind, Options, Precision, Smoother};
use crate::preconditioner::{gathered_level, Hierarchy};
use crate::solve::check;
use crate::solver::{Preconditioner, Solver};
use crate::SolveError;
use std::rc::Rc;
use std::sync::Arc;
use stencil_ranks::{Ranks, Slabs};
use stencil_runtime::Backend;

impl Solver {
    /// A solver for `n` nodes per axis on `dims` axes over `ranks`: this rank's fields
    /// hold the nodes [`Solver::rows`] of the last axis (whole along the others), and
    /// every rank calls the solver's methods in the same order, each with its part of
    /// the solution and right-hand side ([`crate::Problem::on_rows`]). On one rank this
    /// is [`Solver::new`].
    ///
    /// Over several ranks, full multigrid, zebra lines and periodic sides along the last
    /// axis are typed errors, and so is a grid too small for the ranks (the same on every
    /// rank). Every rank must make the same calls: after an error on one rank (a device
    /// failure), stop them all with [`Ranks::abort`] rather than go on.
    pub fn on_ranks(
        backend: &Backend,
        ranks: Arc<Ranks>,
        n: usize,
        dims: usize,
        options: &Options,
    ) -> Result<Solver, SolveError> {
        check(n, dims, options)?;
        if ranks.size() == 1 {
            return Solver::new(backend, n, dims, options);
        }
        let refuse = |what: &'static str| SolveError::Ranks(what.into());
        if options.fmg {
            return Err(refuse(
                "full multigrid is not available over several ranks yet: set `fmg` to false",
            ));
        }
        if options.smoother == Smoother::Zebra {
            return Err(refuse(
                "zebra lines would cross the ranks' cuts: use RedBlack over several ranks",
            ));
        }
        let last = options.boundary.sides()[2 * (dims - 1)];
        if last == BoundaryKind::Periodic {
            return Err(refuse("the ranks cut the last axis, which cannot be periodic over several ranks yet: make the first axis periodic instead"));
        }
        // Every split level's slabs start at even nodes: the gathered level's start at
        // whole nodes, and with none gathered the coarsest is split too.
        let (gathered, is_gathered) = gathered_level(n, options);
        let align = 1 << (gathered + usize::from(!is_gathered));
        let slabs = Slabs::new(ranks, n, align).map_err(|e| SolveError::Ranks(e.to_string()))?;
        let rows = slabs.mine();
        let ops = Ops::new(dims, options).on_slabs(Rc::new(slabs.clone()));
        let mg: Box<dyn Preconditioner> = match options.precision {
            Precision::F64 => Box::new(Hierarchy::<f64>::on_slabs(
                backend,
                n,
                ops.clone(),
                options,
                &slabs,
            )?),
            Precision::Mixed => Box::new(Hierarchy::<f32>::on_slabs(
                backend,
                n,
                ops.clone(),
                options,
                &slabs,
            )?),
        };
        Ok(Solver::assemble(backend, n, dims, options, ops, mg, rows))
    }
}
