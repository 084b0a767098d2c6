//! [`TreePoisson`]: `lap(psi) = -w` on a tree of levels, by multigrid across the levels
//! (the full approximation scheme on the composite grid).
//!
//! The solution lives on every present block; where a finer block covers a point, the
//! finer value is the solution and the coarser one its injection. A V-cycle goes down
//! from the finest present level:
//!
//! 1. relax the level (red-black Gauss-Seidel; halos next to absent blocks predicted from
//!    the coarser level, so the coarse-fine interface is a boundary condition of the
//!    fine level);
//! 2. restrict: the coarser level's points under the level take the level's solution
//!    (injection) and the full weighting of its residual `t` (halos of 0 past the fine
//!    region: at convergence the residual is 0 wherever the level exists);
//! 3. the coarser level's right-hand side is `lap(psi) + t` under the level and `-w`
//!    elsewhere, so that the coarse problem's solution is the fine one's injection.
//!
//! Level 0 is relaxed to convergence (it is small); on the way up each level adds the
//! prediction of the coarser level's change (the wavelet predictor, through the inverse
//! transform with zero details) and is relaxed again.

use super::hierarchy::{Hierarchy, LevelHalo};
use super::kernels::poisson::{
    coarse_rhs, correct, difference, full_weighting, norms, relax, residual,
};
use super::wavelet::transform::{copy, reconstruct};
use stencil_runtime::blocks::Predictor;
use stencil_runtime::{Backend, BlockField, Error, Real};

/// Sweeps at level 0 per cycle, per point along an axis (Gauss-Seidel's error falls by
/// about `1 - (pi h)^2` a sweep; level 0 is meant to be small, 5 to 17 points).
const COARSEST_SWEEPS_PER_POINT: usize = 3;

/// The work fields of the solve, for one layout of the tree.
pub struct TreePoisson<T: Real> {
    /// Sweeps before the coarse correction.
    pub pre: usize,
    /// Sweeps after it.
    pub post: usize,
    layout: (u64, u64),
    f: BlockField<T>,
    r: BlockField<T>,
    t: BlockField<T>,
    old: BlockField<T>,
    e: BlockField<T>,
    zero: BlockField<T>,
    covered: BlockField<T>,
}

impl<T: Real> TreePoisson<T> {
    /// Work fields for `tree`'s present layout (made again when the layout changes).
    pub fn new(tree: &Hierarchy) -> Result<TreePoisson<T>, Error> {
        let z = || BlockField::zeroed(tree.grid());
        Ok(TreePoisson {
            pre: 2,
            post: 2,
            layout: (tree.grid().id(), tree.grid().generation()),
            f: z()?,
            r: z()?,
            t: z()?,
            old: z()?,
            e: z()?,
            zero: z()?,
            covered: tree.covered()?,
        })
    }

    /// The work fields again if the tree's layout changed.
    fn follow(&mut self, tree: &Hierarchy) -> Result<(), Error> {
        if self.layout != (tree.grid().id(), tree.grid().generation()) {
            let (pre, post) = (self.pre, self.post);
            *self = TreePoisson::new(tree)?;
            (self.pre, self.post) = (pre, post);
        }
        Ok(())
    }

    /// Relaxes level `level` `sweeps` times.
    fn relax(
        &mut self,
        tree: &mut Hierarchy,
        level: u8,
        psi: &mut BlockField<T>,
        sweeps: usize,
    ) -> Result<(), Error> {
        let backend = tree.grid().backend().clone();
        let h2 = T::from_f64(tree.spacing(level).powi(2));
        for _ in 0..sweeps {
            for colour in 0..2 {
                // The coarse copies under the level follow it, so that halos predicted
                // from the coarser level next to absent blocks see the level's newest
                // values where they lie on it.
                if level > 0 {
                    tree.coarsen(level, &mut [&mut *psi])?;
                }
                tree.exchange_level(level, LevelHalo::Thin, psi)?;
                relax::launch_blocks(&backend, tree.list(level)?, psi, &self.f, h2, colour)?;
            }
        }
        Ok(())
    }

    /// `f = -w` on `level`'s points (the coarse right-hand side with no restricted
    /// residual and no point covered).
    fn minus_w(
        &mut self,
        backend: &Backend,
        tree: &mut Hierarchy,
        level: u8,
        psi: &BlockField<T>,
        w: &BlockField<T>,
    ) -> Result<(), Error> {
        let h2_inv = T::from_f64(tree.spacing(level).powi(-2));
        let (zero, list) = (&self.zero, tree.list(level)?);
        coarse_rhs::launch_blocks(backend, list, psi, zero, zero, w, &mut self.f, h2_inv)
    }

    /// One V-cycle for `lap(psi) = -w` (`w` and `psi` fields of the tree's layout).
    pub fn cycle(
        &mut self,
        tree: &mut Hierarchy,
        psi: &mut BlockField<T>,
        w: &BlockField<T>,
    ) -> Result<(), Error> {
        self.follow(tree)?;
        let backend = tree.grid().backend().clone();
        let top = tree.finest_present();
        let cubic = tree.predictor() == Predictor::Cubic;
        let h2_inv = |tree: &Hierarchy, l: u8| T::from_f64(tree.spacing(l).powi(-2));
        // The finest level's right-hand side: -w everywhere it exists (covered points
        // get theirs from the level above as the cycle goes down).
        self.minus_w(&backend, tree, top, psi, w)?;
        for level in (1..=top).rev() {
            self.relax(tree, level, psi, self.pre)?;
            tree.coarsen(level, &mut [&mut *psi])?;
            tree.exchange_level(level, LevelHalo::Thin, psi)?;
            let hi = h2_inv(tree, level);
            residual::launch_blocks(&backend, tree.list(level)?, &*psi, &self.f, &mut self.r, hi)?;
            tree.exchange_level(level, LevelHalo::Zero, &mut self.r)?;
            full_weighting::launch_blocks(&backend, tree.list(level)?, &self.r, &mut self.t)?;
            tree.coarsen(level, &mut [&mut *psi, &mut self.t])?;
            let coarse = level - 1;
            copy::launch_blocks(&backend, tree.list(coarse)?, &*psi, &mut self.old)?;
            tree.exchange_level(coarse, LevelHalo::Thin, psi)?;
            let hi = h2_inv(tree, coarse);
            coarse_rhs::launch_blocks(
                &backend,
                tree.list(coarse)?,
                &*psi,
                &self.t,
                &self.covered,
                w,
                &mut self.f,
                hi,
            )?;
        }
        let coarsest = COARSEST_SWEEPS_PER_POINT * tree.points(0);
        let sweeps = if top == 0 {
            self.pre + self.post
        } else {
            coarsest
        };
        self.relax(tree, 0, psi, sweeps)?;
        for level in 1..=top {
            let coarse = level - 1;
            // The coarser level's change, predicted onto this level.
            difference::launch_blocks(&backend, tree.list(coarse)?, &*psi, &self.old, &mut self.e)?;
            tree.inject(level, &mut self.e)?;
            tree.exchange_level(level, LevelHalo::Full, &mut self.e)?;
            // (The residual's field holds the prediction: it is not needed on the way up.)
            reconstruct::launch_blocks(
                &backend,
                tree.list(level)?,
                &self.e,
                &self.zero,
                &mut self.r,
                cubic,
            )?;
            correct::launch_blocks(&backend, tree.list(level)?, psi, &self.r)?;
            self.relax(tree, level, psi, self.post)?;
        }
        Ok(())
    }

    /// `||w + lap(psi)|| / ||w||` over the composite grid: every level's points that no
    /// finer block covers, each with its level's Laplacian.
    pub fn relative_residual(
        &mut self,
        tree: &mut Hierarchy,
        psi: &mut BlockField<T>,
        w: &BlockField<T>,
    ) -> Result<f64, Error> {
        self.follow(tree)?;
        let backend = tree.grid().backend().clone();
        let (mut rr, mut ww) = (0.0, 0.0);
        tree.restrict_and_exchange(psi)?;
        for level in 0..=tree.finest_present() {
            let h2_inv = T::from_f64(tree.spacing(level).powi(-2));
            // -w at the leaves' points (covered ones are 0 here: they are not leaves).
            self.minus_w(&backend, tree, level, psi, w)?;
            residual::launch_blocks(
                &backend,
                tree.list(level)?,
                &*psi,
                &self.f,
                &mut self.r,
                h2_inv,
            )?;
            // Leaves only: the residual and w where nothing finer covers the point.
            leaf_only(
                &backend,
                tree,
                level,
                &self.covered,
                &mut self.r,
                &mut self.t,
                w,
                &mut self.e,
            )?;
            let (a, b) = norms::launch_blocks(&backend, tree.list(level)?, &self.t, &self.e)?;
            rr += a.as_f64();
            ww += b.as_f64();
        }
        Ok((rr / ww.max(f64::MIN_POSITIVE)).sqrt())
    }
}

/// `r_leaf = r` and `w_leaf = w` where `covered` is 0, both 0 where it is 1, on `level`.
#[allow(clippy::too_many_arguments)]
fn leaf_only<T: Real>(
    backend: &Backend,
    tree: &mut Hierarchy,
    level: u8,
    covered: &BlockField<T>,
    r: &mut BlockField<T>,
    r_leaf: &mut BlockField<T>,
    w: &BlockField<T>,
    w_leaf: &mut BlockField<T>,
) -> Result<(), Error> {
    use super::kernels::poisson::uncovered;
    let list = tree.list(level)?;
    uncovered::launch_blocks(backend, list, &*r, covered, r_leaf)?;
    uncovered::launch_blocks(backend, list, w, covered, w_leaf)?;
    Ok(())
}
