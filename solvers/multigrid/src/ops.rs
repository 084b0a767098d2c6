//! The launches of the solver's kernels on a square (2D) or cubic (3D) grid: the one place
//! that knows the boundary codes and which halos to wrap before a kernel reads across a
//! periodic side. Kernels that need neither (copies, precision changes, the fused kernels
//! of the 2D Dirichlet levels with the operator of [`Ops::dirichlet`]) are launched
//! directly from `mg`, and so is `replace`, with the codes of [`Ops::sides`].

use crate::kernels::mg::{self, Dirichlet, Level};
use crate::options::{BoundaryKind, Options, Order};
use std::rc::Rc;
use stencil_ranks::{Op, Slabs};
use stencil_runtime::{Axes, Backend, Error, Field, Real};

/// The boundary code of a side whose ghost layer holds the neighbours' values: a periodic
/// side's after its wrap, or a cut between two ranks' slabs after their exchange.
const NEIGHBOURS: i64 = 3;

/// The 2-norm of a residual from the sum of squares its defect kernel reduces (what a
/// deferred read of [`Ops::defect`] or [`Ops::correct_defect2`] gives), on one rank.
fn norm_of_sum(sum_of_squares: f64) -> f64 {
    sum_of_squares.sqrt()
}

/// A failure between ranks as the run time's error (the solver's kernels and exchanges
/// share one error path).
pub(crate) fn ranks_error(e: stencil_ranks::RanksError) -> Error {
    match e {
        stencil_ranks::RanksError::Device(inner) => *inner,
        other => Error::Backend(other.to_string()),
    }
}

/// The operator `-(ax u_xx + ay u_yy [+ az u_zz])` with its boundary kinds, and the
/// launches that apply it.
#[derive(Clone, Debug)]
pub(crate) struct Ops {
    /// 2 or 3.
    pub dims: usize,
    /// `ax, ay, az`.
    coef: [f64; 3],
    kappa: f64,
    /// Boundary codes: west, east, south, north, bottom, top.
    sides: [i64; 6],
    /// The codes of the low sides (west, south, bottom) and of the high ones.
    lo: [i64; 3],
    hi: [i64; 3],
    /// Which axes are periodic.
    periodic: [bool; 3],
    /// Over several ranks: the slabs of the last axis that this rank's fields hold (of
    /// the finest level; ghost planes at the cuts are filled wherever a periodic side
    /// would be wrapped, at any level).
    slabs: Option<Rc<Slabs>>,
}

impl Ops {
    /// The operator of `options` on a grid of `dims` axes.
    pub fn new(dims: usize, options: &Options) -> Ops {
        let kinds = options.boundary.sides();
        let sides = options.boundary.codes();
        Ops {
            dims,
            coef: [options.ax, options.ay, options.az],
            kappa: options.kappa,
            sides,
            lo: [sides[0], sides[2], sides[4]],
            hi: [sides[1], sides[3], sides[5]],
            periodic: [0, 1, 2].map(|a| a < dims && kinds[2 * a] == BoundaryKind::Periodic),
            slabs: None,
        }
    }

    /// The operator on this rank's slab of `slabs` (along the last axis): the sides at
    /// the cuts read their ghost planes, which the neighbouring ranks fill.
    pub fn on_slabs(mut self, slabs: Rc<Slabs>) -> Ops {
        let last = self.dims - 1;
        if slabs.cut(true) {
            self.sides[2 * last] = NEIGHBOURS;
            self.lo[last] = NEIGHBOURS;
        }
        if slabs.cut(false) {
            self.sides[2 * last + 1] = NEIGHBOURS;
            self.hi[last] = NEIGHBOURS;
        }
        self.slabs = Some(slabs);
        self
    }

    /// The slabs this rank's fields hold, over several ranks.
    pub fn slabs(&self) -> Option<Slabs> {
        self.slabs.as_deref().cloned()
    }

    /// The 2-norm from a sum of squares over this rank's nodes: over every rank's, on
    /// several (every rank must ask, at the same point).
    pub fn norm_of(&self, sum_of_squares: f64) -> f64 {
        let mut v = [sum_of_squares];
        if let Some(s) = &self.slabs {
            s.ranks().all_reduce(&mut v, Op::Sum);
        }
        norm_of_sum(v[0])
    }

    /// [`Ops::norm_of`] of a defect kernel's sum of squares launched on `b`, or NaN where
    /// `b` leaves reductions unread or deferred (the same on every rank: no rank waits
    /// for another).
    fn defect_norm(&self, b: &Backend, sum_of_squares: f64) -> f64 {
        match b {
            Backend::Cuda(c) if !c.returns_reductions() => f64::NAN,
            _ => self.norm_of(sum_of_squares),
        }
    }

    /// Seconds per fill of `f`'s ghost planes at the cuts, 1 deep, over `repeats` fills
    /// waited for (`None` on one rank).
    pub fn cut_seconds<T: Real>(
        &self,
        b: &Backend,
        f: &mut Field<T>,
        repeats: usize,
    ) -> Result<Option<f64>, Error> {
        if self.slabs.as_ref().is_none_or(|s| s.ranks().size() <= 1) {
            return Ok(None);
        }
        self.fill_cuts(b, f, 1)?;
        b.synchronize()?;
        let start = std::time::Instant::now();
        for _ in 0..repeats {
            self.fill_cuts(b, f, 1)?;
        }
        b.synchronize()?;
        Ok(Some(start.elapsed().as_secs_f64() / repeats.max(1) as f64))
    }

    /// Fills the ghost planes at the cuts of this rank's slab of `f`, `depth` deep.
    pub fn fill_cuts<T: Real>(
        &self,
        b: &Backend,
        f: &mut Field<T>,
        depth: usize,
    ) -> Result<(), Error> {
        match &self.slabs {
            Some(s) => s.fill_cuts(b, f, depth).map_err(ranks_error),
            None => Ok(()),
        }
    }

    /// Whether every axis is periodic (the operator is then singular).
    pub fn all_periodic(&self) -> bool {
        self.periodic[..self.dims].iter().all(|&p| p)
    }

    /// Fills `depth` ghost layers of `f` along every periodic axis with the periodic images
    /// (the last node of a periodic axis repeats the first: the period is `n - 1`), and
    /// at the cuts of a rank's slab with the neighbouring ranks' planes.
    pub fn wrap<T: Real>(&self, b: &Backend, f: &mut Field<T>, depth: usize) -> Result<(), Error> {
        self.fill_cuts(b, f, depth)?;
        for axis in 0..self.dims {
            if self.periodic[axis] {
                let n = f.extent()[axis];
                f.wrap_periodic(b, axis, n - 1, depth)?;
            }
        }
        Ok(())
    }

    /// The operator and sides of a level of spacing `h` (`h2inv = 1 / h^2`) in `T`, as the
    /// level kernels take them.
    pub fn level<T: Real>(&self, h2inv: T) -> Level<T> {
        let c = self.coef.map(T::from_f64);
        let (lo, hi) = self.sides();
        Level {
            c: Axes::new(&c[..self.dims]),
            h2inv,
            kappa: T::from_f64(self.kappa),
            lo: Axes::new(lo),
            hi: Axes::new(hi),
        }
    }

    /// The codes of the low and of the high sides, one per axis (the `lo` and `hi` of the
    /// kernels).
    pub fn sides(&self) -> (&[i64], &[i64]) {
        (&self.lo[..self.dims], &self.hi[..self.dims])
    }

    /// Wraps the halo of 1 that the level kernels read of the correction `e` across
    /// periodic sides, and gives the level's operator and sides ([`Ops::level`]).
    fn wrapped_level<T: Real>(
        &self,
        b: &Backend,
        e: &mut Field<T>,
        h2inv: T,
    ) -> Result<Level<T>, Error> {
        self.wrap(b, e, 1)?;
        Ok(self.level(h2inv))
    }

    /// One weighted Jacobi sweep from `e` into `out`.
    pub fn jacobi<T: Real>(
        &self,
        b: &Backend,
        e: &mut Field<T>,
        r: &Field<T>,
        out: &mut Field<T>,
        h2inv: T,
        omega: T,
    ) -> Result<(), Error> {
        let l = self.wrapped_level(b, e, h2inv)?;
        mg::jacobi::launch(b, e, r, out, &l, omega)
    }

    /// One Gauss-Seidel half-sweep over the points of `colour`: pointwise (red-black)
    /// with `lines` `None`, else the zebra lines along axis `lines` (0 or 1; 2D only).
    pub fn gauss_seidel<T: Real>(
        &self,
        b: &Backend,
        lines: Option<usize>,
        e: &mut Field<T>,
        r: &Field<T>,
        h2inv: T,
        colour: i64,
    ) -> Result<(), Error> {
        let l = self.wrapped_level(b, e, h2inv)?;
        match lines {
            None => mg::rbgs::launch(b, e, r, &l, colour),
            Some(axis) => mg::zebra::launch(b, e, r, &l, colour, axis as i64),
        }
    }

    /// `res = r - A e`.
    pub fn residual<T: Real>(
        &self,
        b: &Backend,
        e: &mut Field<T>,
        r: &Field<T>,
        res: &mut Field<T>,
        h2inv: T,
    ) -> Result<(), Error> {
        let l = self.wrapped_level(b, e, h2inv)?;
        mg::residual::launch(b, e, r, res, &l)
    }

    /// Whether the launches of the fused residual-restriction and prolongation-smoothing
    /// kernels apply: 2D with four Dirichlet sides imposed directly.
    pub fn all_dirichlet_2d(&self) -> bool {
        self.dims == 2 && self.sides[..4].iter().all(|&k| k == 0)
    }

    /// `e = 0` followed by the colour-0 red-black half-sweep, in one launch (2D).
    pub fn rbgs_from_zero<T: Real>(
        &self,
        b: &Backend,
        r: &Field<T>,
        e: &mut Field<T>,
        h2inv: T,
    ) -> Result<(), Error> {
        mg::rbgs_from_zero::launch(b, r, e, &self.level(h2inv))
    }

    /// The operator of a 2D level with four Dirichlet sides imposed directly
    /// ([`Ops::all_dirichlet_2d`]) as its fused kernels take it, for fields that hold rows
    /// `j0..` of the level's `nj` (`0, nj` for the whole level). They take no boundary
    /// codes and need no halo wrapped, so the preconditioner launches them itself
    /// (`mg::rbgs_sweep`, `mg::restrict_residual`, `mg::prolong_rbgs`, ..).
    pub fn dirichlet<T: Real>(&self, h2inv: T, j0: i64, nj: i64) -> Dirichlet<T> {
        let c = [T::from_f64(self.coef[0]), T::from_f64(self.coef[1])];
        Dirichlet {
            c: Axes::new(&c),
            h2inv,
            j0,
            nj,
        }
    }

    /// Full-weighting restriction of `fine` to `coarse`.
    pub fn restrict<T: Real>(
        &self,
        b: &Backend,
        fine: &mut Field<T>,
        coarse: &mut Field<T>,
    ) -> Result<(), Error> {
        self.wrap(b, fine, 1)?;
        let (lo, hi) = self.sides();
        match self.dims {
            2 => mg::restrict_full::launch(b, fine, coarse, lo, hi),
            _ => mg::restrict_full_3d::launch(b, fine, coarse, lo, hi),
        }
    }

    /// `e += P coarse` (bi- or trilinear).
    pub fn prolong<T: Real>(
        &self,
        b: &Backend,
        e: &mut Field<T>,
        coarse: &mut Field<T>,
    ) -> Result<(), Error> {
        // A slab's last fine plane lies between its coarse slab's last plane and the next
        // rank's first.
        self.fill_cuts(b, coarse, 1)?;
        let (lo, hi) = self.sides();
        match self.dims {
            2 => mg::prolong_add::launch(b, e, coarse, lo, hi),
            _ => mg::prolong_add_3d::launch(b, e, coarse, lo, hi),
        }
    }

    /// Whether any side is a Dirichlet side in the penalty form (code 2), whose terms the
    /// right-hand side carries.
    pub fn has_penalty_sides(&self) -> bool {
        self.sides[..2 * self.dims].contains(&2)
    }

    /// The right-hand side with the penalty terms of penalty sides.
    pub fn penalty_rhs(
        &self,
        b: &Backend,
        u: &Field<f64>,
        f: &Field<f64>,
        rhs: &mut Field<f64>,
        h2inv: f64,
    ) -> Result<(), Error> {
        mg::penalty_rhs::launch(b, u, f, rhs, &self.level(h2inv))
    }

    /// The residual `res = f - A u` of the operator of `order`, computed in f64 and stored
    /// in `res`'s precision; returns its 2-norm. On a backend with deferred reductions it
    /// returns NaN and the value read later is the sum of squares ([`norm_of_sum`]).
    pub fn defect<T: Real>(
        &self,
        b: &Backend,
        order: Order,
        u: &mut Field<f64>,
        f: &Field<f64>,
        res: &mut Field<T>,
        h2inv: f64,
    ) -> Result<f64, Error> {
        // The centred stencils' reach: what a periodic side must wrap.
        let reach = match order {
            Order::Second => 1,
            Order::Fourth => 2,
            Order::Sixth => 3,
        };
        self.wrap(b, u, reach)?;
        let l = self.level(h2inv);
        let norm2 = match order {
            Order::Second => mg::defect2::launch(b, u, f, res, &l)?,
            Order::Fourth => mg::defect::launch(b, u, f, res, &l, 4)?,
            Order::Sixth => mg::defect::launch(b, u, f, res, &l, 6)?,
        };
        Ok(self.defect_norm(b, norm2))
    }

    /// `out = u + e` and the 2nd-order residual `res = f - A out` in one launch; returns
    /// the residual's 2-norm (deferred like [`Ops::defect`]'s). `out` must be another field
    /// than `u`.
    #[allow(clippy::too_many_arguments)]
    pub fn correct_defect2<T: Real>(
        &self,
        b: &Backend,
        u: &mut Field<f64>,
        e: &mut Field<T>,
        f: &Field<f64>,
        out: &mut Field<f64>,
        res: &mut Field<T>,
        h2inv: f64,
    ) -> Result<f64, Error> {
        self.wrap(b, u, 1)?;
        self.wrap(b, e, 1)?;
        let norm2 = mg::correct_defect2::launch(b, u, e, f, out, res, &self.level(h2inv))?;
        Ok(self.defect_norm(b, norm2))
    }

    /// The mean of `u` over the distinct nodes (a periodic axis's last node repeats the
    /// first and is not counted).
    pub fn mean(&self, b: &Backend, u: &Field<f64>) -> Result<f64, Error> {
        let periodic = self.periodic.map(i64::from);
        let n = u.extent()[0];
        let distinct = |a: usize| (n - usize::from(self.periodic[a])) as f64;
        let count: f64 = (0..self.dims).map(distinct).product();
        let sum = mg::periodic_sum::launch(b, u, &periodic[..self.dims])?;
        Ok(sum / count)
    }
}
