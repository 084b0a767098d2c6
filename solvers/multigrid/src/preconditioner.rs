//! The multigrid preconditioner: a hierarchy of levels in precision `T`, smoothers and
//! cycles. Level 0 is the finest; its `r` holds the defect to correct and its `e` receives
//! the correction.

use crate::kernels::mg;
use crate::ops::{ranks_error, Ops};
use crate::options::{BoundaryKind, Cycle, Options, Smoother};
use crate::report::LevelStat;
use crate::SolveError;
use std::time::Instant;
use stencil_ranks::Slabs;
use stencil_runtime::{Backend, Error, Field, Real};

/// One grid of the hierarchy.
pub(crate) struct Level<T: Real> {
    /// Nodes per axis.
    pub n: usize,
    /// `1 / h^2`.
    h2inv: T,
    /// The correction.
    pub e: Field<T>,
    /// The right-hand side (the restricted defect).
    pub r: Field<T>,
    /// Scratch: the level's residual, or the other Jacobi buffer.
    t: Field<T>,
    /// The whole grid's index of the fields' first node along the last axis, and the
    /// whole grid's nodes along it (`(0, n)` unless the level is a rank's slab): the
    /// `j0, nj` of the fused kernels.
    rows: (i64, i64),
}

impl<T: Real> Level<T> {
    /// The level's operator as the fused kernels of 2D Dirichlet levels take it.
    fn fused(&self, ops: &Ops) -> mg::Dirichlet<T> {
        ops.dirichlet(self.h2inv, self.rows.0, self.rows.1)
    }
}

/// How far the fused kernels read beyond a node (and so how deep the ghost planes at a
/// rank's cuts are filled before them).
const FUSED_REACH: usize = 3;

/// The levels, the options that shape the cycles, and per-level timing.
pub(crate) struct Hierarchy<T: Real> {
    backend: Backend,
    pub levels: Vec<Level<T>>,
    pub ops: Ops,
    pub options: Options,
    /// Which Jacobi factor comes next (for SRJ schedules).
    sweep: usize,
    /// Zeroing a correction and its first red-black half-sweep run as one launch.
    fused_start: bool,
    /// The residual and its restriction run as one launch, and so do the prolongation
    /// and the next red-black half-sweep, the zeroing and the first two whole sweeps (or
    /// the first one), the three half-sweeps after the prolongation's, and the two
    /// half-sweeps of every further whole sweep (out of place).
    fused_transfers: bool,
    pub stats: Vec<LevelStat>,
    /// Over several ranks, with levels gathered: the first gathered level, whose slab
    /// form is the last of `levels`.
    gathered: Option<Gathered<T>>,
}

/// The levels below the split ones, gathered whole onto every rank and cycled there by
/// each (see [`Options::gather_below`]): the same work on every rank, no rank waiting
/// for another's result, and no message back.
struct Gathered<T: Real> {
    /// The slabs of the first gathered level, as the last split level's fields hold them.
    slabs: Slabs,
    /// The hierarchy from that level down, whole.
    whole: Box<Hierarchy<T>>,
}

/// The index of the level a hierarchy from `n` nodes per axis gathers onto one rank over
/// several ranks (the first below the finest with at most `options.gather_below` nodes),
/// or of its coarsest level when none is gathered; and whether it is gathered.
pub(crate) fn gathered_level(n: usize, options: &Options) -> (usize, bool) {
    let (mut m, mut l) = (n, 0);
    loop {
        if l > 0 && m <= options.gather_below {
            return (l, true);
        }
        if m <= options.coarsest || m <= 3 {
            return (l, false);
        }
        m = m.div_ceil(2);
        l += 1;
    }
}

/// The factors of a scheduled relaxation Jacobi smoother of `m` sweeps: the reciprocals
/// of the Chebyshev points of the high-frequency part `[1/2, 2]` of the spectrum of the
/// Jacobi-scaled 5-point operator, largest factor first. Their product polynomial is the
/// smallest possible on that range, so `m` sweeps damp every high frequency by at most
/// `1 / T_m(5/3)` (0.22 for `m = 2`, 0.10 for `m = 3`); the schedule over-relaxes
/// (factors above 1) and under-relaxes in turn, as in Yang & Mittal (2014), with factors
/// tuned for smoothing rather than for convergence on their own.
pub fn srj_schedule(m: usize) -> Vec<f64> {
    let (lo, hi) = (0.5f64, 2.0f64);
    let mut f: Vec<f64> = (1..=m)
        .map(|k| {
            let t = ((2 * k - 1) as f64 * std::f64::consts::PI / (2 * m) as f64).cos();
            1.0 / ((hi + lo) / 2.0 + (hi - lo) / 2.0 * t)
        })
        .collect();
    f.sort_by(|a, b| b.total_cmp(a));
    f
}

impl<T: Real> Hierarchy<T> {
    /// Levels from `n` nodes per axis (of `ops.dims` axes) down to `options.coarsest`.
    pub fn new(
        backend: &Backend,
        n: usize,
        ops: Ops,
        options: &Options,
    ) -> Result<Self, SolveError> {
        Hierarchy::build(backend, n, ops, options, None)
    }

    /// The levels of this rank's slabs of `slabs` (of the finest level, `n` nodes per axis,
    /// split along the last axis; `ops` on them), down to the level that
    /// [`gathered_level`] names: gathered onto every rank from there, or the coarsest. A
    /// split level whose slabs would hold fewer than [`FUSED_REACH`] rows (what a ghost
    /// exchange sends) is a typed error, the same on every rank.
    pub fn on_slabs(
        backend: &Backend,
        n: usize,
        ops: Ops,
        options: &Options,
        slabs: &Slabs,
    ) -> Result<Self, SolveError> {
        Hierarchy::build(backend, n, ops, options, Some(slabs))
    }

    fn build(
        backend: &Backend,
        n: usize,
        ops: Ops,
        options: &Options,
        slabs: Option<&Slabs>,
    ) -> Result<Self, SolveError> {
        let schedule = options.schedule_on(backend);
        let red_black_2d = ops.dims == 2 && options.smoother == Smoother::RedBlack;
        let fused_start = schedule.zero_with_sweep && red_black_2d;
        // The side codes of the whole grid decide the halo: split levels and the levels
        // gathered from them share it, so planes copy between them as they are.
        let fusable =
            schedule.recomputing && red_black_2d && Ops::new(ops.dims, options).all_dirichlet_2d();
        // The fused kernels take the whole grid's indices of a slab's nodes: they run on
        // slabs as on the whole grid.
        let fused_transfers = fusable;
        // The fused kernels read up to three nodes beyond a level's boundary (and discard
        // them).
        let halo = if fusable { 3 } else { 1 };
        let (last, gather) = match slabs {
            Some(_) => gathered_level(n, options),
            None => (usize::MAX, false),
        };
        let mut levels = Vec::new();
        let mut part = slabs.cloned();
        let mut m = n;
        loop {
            if let Some(p) = &part {
                if p.fewest_planes() < FUSED_REACH && !(gather && levels.len() == last) {
                    return Err(SolveError::Ranks(format!(
                        "a rank's slab of the level of {m} nodes per axis would hold {} rows, \
                         fewer than the {FUSED_REACH} a ghost exchange sends: use fewer ranks \
                         or a larger `gather_below` (now {})",
                        p.fewest_planes(),
                        options.gather_below
                    )));
                }
            }
            let h = 1.0 / (m - 1) as f64;
            let mut extent = vec![m; ops.dims];
            let mut rows = (0, m as i64);
            if let Some(p) = &part {
                extent[ops.dims - 1] = p.mine().len();
                rows.0 = p.mine().start as i64;
            }
            let field = || Field::<T>::zeros_on(backend, &extent, halo);
            levels.push(Level {
                n: m,
                h2inv: T::from_f64(1.0 / (h * h)),
                e: field()?,
                r: field()?,
                t: field()?,
                rows,
            });
            if levels.len() > last || m <= options.coarsest || m <= 3 {
                break;
            }
            m = m.div_ceil(2);
            part = match part {
                Some(p) => Some(p.coarser().ok_or(SolveError::Option {
                    name: "gather_below",
                    value: options.gather_below.to_string(),
                    expected: "a level the ranks' slabs stay aligned to (the slabs are aligned when the solver makes them)",
                })?),
                None => None,
            };
        }
        let gathered = match (gather, part) {
            (true, Some(slabs)) => {
                let whole = Ops::new(ops.dims, options);
                let whole = Box::new(Hierarchy::new(backend, m, whole, options)?);
                Some(Gathered { slabs, whole })
            }
            _ => None,
        };
        let stats = levels
            .iter()
            .map(|l| LevelStat {
                n: l.n,
                ..LevelStat::default()
            })
            .collect();
        Ok(Hierarchy {
            backend: backend.clone(),
            levels,
            ops,
            options: options.clone(),
            sweep: 0,
            fused_start,
            fused_transfers,
            stats,
            gathered,
        })
    }

    /// The backend the levels live on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Runs `f` as work of level `l`: with profiling, waits for it and charges its time.
    fn on_level(
        &mut self,
        l: usize,
        f: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if !self.options.profile {
            return f(self);
        }
        let start = Instant::now();
        f(self)?;
        self.backend.synchronize()?;
        self.stats[l].seconds += start.elapsed().as_secs_f64();
        self.stats[l].launches += 1;
        Ok(())
    }

    /// One cycle of the configured shape on level 0 from a zero correction (the zeroing
    /// fused into the first sweep where it can be). Every cycle starts the SRJ schedule
    /// afresh, so all cycles do the same work (and a cycle recorded into a CUDA graph
    /// replays exactly).
    pub fn cycle_from_zero(&mut self) -> Result<(), Error> {
        self.sweep = 0;
        self.cycle_on(0, self.options.cycle, true)
    }

    /// Full multigrid from scratch: level 0's `e` holds the boundary values (and `r` the
    /// right-hand side); both are carried to every level (boundary values by injection,
    /// the right-hand side by full weighting), the coarsest is solved, and each finer level
    /// starts from the prolonged coarse solution and runs one cycle. Level 0's `e` is then
    /// an approximation of the solution itself, to the discretisation error.
    pub fn full_multigrid(&mut self) -> Result<(), Error> {
        let last = self.levels.len() - 1;
        for l in 0..last {
            self.on_level(l, |h| {
                let (fine, coarse) = h.levels.split_at_mut(l + 1);
                h.ops
                    .restrict(&h.backend, &mut fine[l].r, &mut coarse[0].r)?;
                mg::restrict_inject::launch(&h.backend, &fine[l].e, &mut coarse[0].e)
            })?;
        }
        self.coarse_solve(false)?;
        for l in (0..last).rev() {
            self.prolong(l)?;
            self.cycle_on(l, self.options.cycle, false)?;
        }
        Ok(())
    }

    /// Sets level `l`'s correction to zero.
    pub fn zero(&mut self, l: usize) -> Result<(), Error> {
        self.on_level(l, |h| mg::zero::launch(&h.backend, &mut h.levels[l].e))
    }

    /// A cycle of `shape` on level `l`, from its current correction or, with
    /// `from_zero`, from zero.
    fn cycle_on(&mut self, l: usize, shape: Cycle, from_zero: bool) -> Result<(), Error> {
        if l + 1 == self.levels.len() {
            if self.gathered.is_some() {
                return self.gathered_cycle(shape, from_zero);
            }
            self.fill_fused(l, |lv| &mut lv.r)?;
            return self.coarse_solve(from_zero);
        }
        // The fused kernels read the right-hand side around a node.
        self.fill_fused(l, |lv| &mut lv.r)?;
        let (pre, post) = (self.options.pre, self.options.post);
        // A V(1, post) visit from zero: the level's correction after its one pre-sweep is a
        // function of its right-hand side, which the restriction and the prolongation
        // recompute instead of storing it.
        let swept = from_zero && self.fused_transfers && pre == 1 && post >= 1;
        if swept {
            self.restrict_fused(l, true)?;
        } else {
            self.smooth_from(l, pre, from_zero)?;
            self.restrict_residual(l)?;
        }
        match shape {
            Cycle::V => self.cycle_on(l + 1, Cycle::V, true)?,
            Cycle::W => {
                self.cycle_on(l + 1, Cycle::W, true)?;
                self.cycle_on(l + 1, Cycle::W, false)?;
            }
            Cycle::F => {
                self.cycle_on(l + 1, Cycle::F, true)?;
                self.cycle_on(l + 1, Cycle::V, false)?;
            }
        }
        self.prolong_smooth(l, post, swept)
    }

    /// The visit of the first gathered level (the last split one): the ranks' slabs of
    /// its right-hand side gathered whole onto every rank, a cycle of `shape` there from
    /// level 0 of the gathered hierarchy (as the whole hierarchy would run it from this
    /// level), and this rank's slab of the correction, with its ghost rows, copied back.
    /// Every rank runs the same cycle, so the SRJ schedule goes on alike everywhere.
    fn gathered_cycle(&mut self, shape: Cycle, from_zero: bool) -> Result<(), Error> {
        let l = self.levels.len() - 1;
        let backend = self.backend.clone();
        let Some(g) = self.gathered.as_mut() else {
            return self.coarse_solve(from_zero);
        };
        let level = &mut self.levels[l];
        g.slabs
            .all_gather(&backend, &level.r, &mut g.whole.levels[0].r)
            .map_err(ranks_error)?;
        g.whole.sweep = self.sweep;
        g.whole.cycle_on(0, shape, from_zero)?;
        self.sweep = g.whole.sweep;
        // This rank's planes and the ghost planes around them that the whole level
        // stores: no exchange needed before the prolongation reads them.
        let (e, mine) = (&g.whole.levels[0].e, g.slabs.mine());
        let (h, n) = (e.halo() as isize, g.slabs.n() as isize);
        let (start, end) = (mine.start as isize, mine.end as isize);
        let (from, to) = ((start - h).max(-h), (end + h).min(n + h));
        level.e.copy_planes(from - start, e, from..to)
    }

    /// `sweeps` sweeps on level `l`, from zero with `from_zero` (the zeroing and the
    /// first half-sweep then fused where that is possible).
    fn smooth_from(&mut self, l: usize, sweeps: usize, from_zero: bool) -> Result<(), Error> {
        if !from_zero {
            return self.smooth(l, sweeps);
        }
        if !(self.fused_start && sweeps > 0) {
            self.zero(l)?;
            return self.smooth(l, sweeps);
        }
        if self.fused_transfers {
            // One or two whole sweeps from zero in one launch.
            let done = sweeps.min(2);
            self.on_level(l, |h| {
                let (lv, b) = (&mut h.levels[l], &h.backend);
                let g = lv.fused(&h.ops);
                match done {
                    2 => mg::rbgs_two_sweeps_from_zero::launch(b, &lv.r, &mut lv.e, &g),
                    _ => mg::rbgs_sweep_from_zero::launch(b, &lv.r, &mut lv.e, &g),
                }
            })?;
            return self.smooth(l, sweeps - done);
        }
        self.on_level(l, |h| {
            let lv = &mut h.levels[l];
            h.ops.rbgs_from_zero(&h.backend, &lv.r, &mut lv.e, lv.h2inv)
        })?;
        self.half_sweep(l, 1)?;
        self.smooth(l, sweeps - 1)
    }

    /// `e_l += P e_{l+1}` followed by `sweeps` sweeps (the prolongation and the first
    /// half-sweep fused where that is possible). With `swept`, level `l`'s correction was
    /// never stored: it is one sweep from zero, recomputed from the right-hand side.
    fn prolong_smooth(&mut self, l: usize, sweeps: usize, swept: bool) -> Result<(), Error> {
        if !(self.fused_transfers && sweeps > 0) {
            self.prolong(l)?;
            return self.smooth(l, sweeps);
        }
        self.fill_fused(l + 1, |lv| &mut lv.e)?;
        if !swept {
            self.fill_fused(l, |lv| &mut lv.e)?;
        }
        self.on_level(l, |h| {
            let (fine, coarse) = h.levels.split_at_mut(l + 1);
            let (lv, b, e) = (&mut fine[l], &h.backend, &coarse[0].e);
            let g = lv.fused(&h.ops);
            if swept {
                mg::prolong_swept_rbgs::launch(b, &lv.r, e, &mut lv.t, &g)
            } else {
                mg::prolong_rbgs::launch(b, &lv.e, e, &lv.r, &mut lv.t, &g)
            }
        })?;
        let lv = &mut self.levels[l];
        std::mem::swap(&mut lv.e, &mut lv.t);
        if sweeps == 1 {
            return self.half_sweep(l, 1);
        }
        // The rest of the first sweep and the whole second in one pass.
        self.sweep_out_of_place(l, |b, ops, e, r, out, h2inv, (j0, nj)| {
            mg::rbgs_sweep_and_a_half::launch(b, e, r, out, &ops.dirichlet(h2inv, j0, nj))
        })?;
        self.smooth(l, sweeps - 2)
    }

    /// The coarsest level: 4n sweeps of the smoother, or one where one is exact (3 nodes
    /// per axis with every side Dirichlet imposed directly leave a single unknown, which a
    /// Gauss-Seidel sweep solves).
    fn coarse_solve(&mut self, from_zero: bool) -> Result<(), Error> {
        let l = self.levels.len() - 1;
        let dims = self.ops.dims;
        let single_unknown = self.levels[l].n == 3
            && self.options.boundary.sides()[..2 * dims]
                .iter()
                .all(|k| *k == BoundaryKind::Dirichlet);
        let gauss_seidel = matches!(self.options.smoother, Smoother::RedBlack | Smoother::Zebra);
        let sweeps = if single_unknown && gauss_seidel {
            1
        } else {
            4 * self.levels[l].n
        };
        self.smooth_from(l, sweeps, from_zero)
    }

    /// `t = r - A e` on level `l`, restricted by full weighting to level `l + 1`'s `r`.
    fn restrict_residual(&mut self, l: usize) -> Result<(), Error> {
        if self.fused_transfers {
            self.fill_fused(l, |lv| &mut lv.e)?;
            return self.restrict_fused(l, false);
        }
        self.on_level(l, |h| {
            let lv = &mut h.levels[l];
            h.ops
                .residual(&h.backend, &mut lv.e, &lv.r, &mut lv.t, lv.h2inv)
        })?;
        self.on_level(l, |h| {
            let (fine, coarse) = h.levels.split_at_mut(l + 1);
            h.ops.restrict(&h.backend, &mut fine[l].t, &mut coarse[0].r)
        })
    }

    /// `1 / h^2` of level 0's grid, in f64 (the outer iteration's defects are taken there).
    pub fn finest_h2inv(&self) -> f64 {
        let h = 1.0 / (self.levels[0].n - 1) as f64;
        1.0 / (h * h)
    }

    /// Level `l`'s residual restricted by full weighting to level `l + 1`'s `r`, in one
    /// launch of a fused kernel. With `swept`, level `l`'s correction was never stored: it
    /// is one sweep from zero, recomputed from the right-hand side.
    fn restrict_fused(&mut self, l: usize, swept: bool) -> Result<(), Error> {
        self.on_level(l, |h| {
            let (fine, coarse) = h.levels.split_at_mut(l + 1);
            let (lv, b, r) = (&fine[l], &h.backend, &mut coarse[0].r);
            // The kernel's grid is the coarse level's, with the fine level's `1/h^2`.
            let (j0, nj) = coarse[0].rows;
            let g = h.ops.dirichlet(lv.h2inv, j0, nj);
            if swept {
                mg::restrict_swept_residual::launch(b, &lv.r, r, &g)
            } else {
                mg::restrict_residual::launch(b, &lv.e, &lv.r, r, &g)
            }
        })
    }

    /// `e_l += P e_{l+1}`.
    fn prolong(&mut self, l: usize) -> Result<(), Error> {
        self.on_level(l, |h| {
            let (fine, coarse) = h.levels.split_at_mut(l + 1);
            h.ops.prolong(&h.backend, &mut fine[l].e, &mut coarse[0].e)
        })
    }

    /// `sweeps` sweeps of the smoother on level `l`.
    fn smooth(&mut self, l: usize, sweeps: usize) -> Result<(), Error> {
        let smoother = self.options.smoother.clone();
        for _ in 0..sweeps {
            match &smoother {
                Smoother::RedBlack if self.fused_transfers => {
                    self.sweep_out_of_place(l, |b, ops, e, r, out, h2inv, (j0, nj)| {
                        mg::rbgs_sweep::launch(b, e, r, out, &ops.dirichlet(h2inv, j0, nj))
                    })?;
                }
                Smoother::RedBlack => {
                    self.half_sweep(l, 0)?;
                    self.half_sweep(l, 1)?;
                }
                Smoother::Zebra => {
                    for axis in [0, 1] {
                        for colour in [0, 1] {
                            self.on_level(l, |h| {
                                let lv = &mut h.levels[l];
                                let lines = Some(axis);
                                h.ops.gauss_seidel(
                                    &h.backend, lines, &mut lv.e, &lv.r, lv.h2inv, colour,
                                )
                            })?;
                        }
                    }
                }
                Smoother::Jacobi { omega } => self.jacobi(l, *omega)?,
                Smoother::Srj { factors } => {
                    let omega = factors[self.sweep % factors.len()];
                    self.sweep += 1;
                    self.jacobi(l, omega)?;
                }
            }
        }
        Ok(())
    }

    /// One red-black Gauss-Seidel half-sweep over the points of `colour` on level `l`.
    fn half_sweep(&mut self, l: usize, colour: i64) -> Result<(), Error> {
        self.on_level(l, |h| {
            let lv = &mut h.levels[l];
            h.ops
                .gauss_seidel(&h.backend, None, &mut lv.e, &lv.r, lv.h2inv, colour)
        })
    }

    /// One weighted Jacobi sweep (into `t`, then the buffers swap).
    fn jacobi(&mut self, l: usize, omega: f64) -> Result<(), Error> {
        self.sweep_out_of_place(l, |b, ops, e, r, out, h2inv, _| {
            ops.jacobi(b, e, r, out, h2inv, T::from_f64(omega))
        })
    }

    /// Runs `sweep` as work of level `l` ([`Hierarchy::on_level`]) with the backend, the
    /// operator, the level's correction `e`, right-hand side `r`, scratch `t` (the
    /// output), `1 / h^2` and its `rows` (the fused kernels' `j0, nj`); then `t` becomes
    /// the correction (the buffers swap). With fused kernels the ghost planes of `e` at a
    /// rank's cuts are filled first.
    fn sweep_out_of_place(
        &mut self,
        l: usize,
        sweep: impl FnOnce(
            &Backend,
            &Ops,
            &mut Field<T>,
            &Field<T>,
            &mut Field<T>,
            T,
            (i64, i64),
        ) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.fill_fused(l, |lv| &mut lv.e)?;
        self.on_level(l, |h| {
            let lv = &mut h.levels[l];
            sweep(
                &h.backend, &h.ops, &mut lv.e, &lv.r, &mut lv.t, lv.h2inv, lv.rows,
            )
        })?;
        let lv = &mut self.levels[l];
        std::mem::swap(&mut lv.e, &mut lv.t);
        Ok(())
    }

    /// With fused kernels, fills the ghost planes at a rank's cuts of level `l`'s field
    /// that `field` picks, as deep as the fused kernels read (nothing on one rank).
    fn fill_fused(
        &mut self,
        l: usize,
        field: impl FnOnce(&mut Level<T>) -> &mut Field<T>,
    ) -> Result<(), Error> {
        // The gathered level's slab takes its ghost rows from the whole level.
        let gathered = self.gathered.is_some() && l + 1 == self.levels.len();
        if !self.fused_transfers || gathered {
            return Ok(());
        }
        let f = field(&mut self.levels[l]);
        self.ops.fill_cuts(&self.backend, f, FUSED_REACH)
    }
}
