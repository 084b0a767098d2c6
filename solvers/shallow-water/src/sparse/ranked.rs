//! A sparse run split over ranks (`mpirun -np N`, see the `stencil-ranks` crate,
//! [`SparseShallowWater::over_ranks`]): every block of the domain present and the layout
//! fixed ([`RankBlocks::Every`]), or the blocks following the water and dealt anew at
//! each change ([`RankBlocks::FollowWater`], `super::following`); the blocks dealt to
//! ranks along the Morton curve; a rank steps its own blocks, its ghosts (its neighbours'
//! blocks next to them) filled before each halo exchange, and the CFL maximum and the
//! survey all-reduced.
//! The steps are decided on the host, or, on devices with every block present, on the
//! devices (`ranked_clock.rs`). A rank's cells equal one rank's bit for bit
//! (`sw-ranks-check`, `src/programs/ranks_check.rs`, under mpirun, `tests/ranks.rs`).
//!
//! On devices the ghosts travel through NCCL ([`GhostExchange`]) on a stream of their
//! own while the points that read no ghost (the first part: the blocks whose halos read
//! none, and the cores of blocks of 1024 x 64 points and more next to other ranks) get
//! their halos filled and their faces computed, or their stage update; the rest (the
//! second part: the other blocks, or the strips of the cut ones, on the ghosts' stream)
//! follows once the ghosts are in (see [`Parts`]). On the CPU the ghosts are filled first.
//! The blocks' size is chosen in `rank_blocks.rs` ([`ranked_block`]).

use super::following::Dealt;
use super::layout::{exchanges, Exchanges};
use super::rank_blocks::{ranked_block, RankBlocks};
use super::SparseShallowWater;
use crate::kernels::kp07::{self, Fluxes, StateFields};
use crate::model::{corner_field, initial_fields, own_stream, BED_HALO};
use crate::model::{Stage, Which};
use crate::Boundaries;
use crate::{FloodError, Setup, Survey};
use std::sync::Arc;
use stencil_ranks::{GhostExchange, Op, RankLayout, Ranks};
use stencil_runtime::{Backend, BlockField, BlockGrid, BlockKey, BlockList, BlockRegion, Real};

/// This rank's part of a run over ranks. (Without MPI `Ranks` is `Send` and `Sync`, and so
/// is a sparse run; with MPI a run stays on the thread that started MPI.)
pub(super) struct Distribution<T> {
    ranks: Arc<Ranks>,
    /// The block size of the run ([`ranked_block`]).
    pub block: [usize; 2],
    /// This rank's blocks and ghosts.
    pub layout: RankLayout,
    /// The ghost fills of the state (surface, velocities) and of the face fluxes, planned
    /// at their first use on the grid's present layout.
    plans: [Option<GhostExchange<T>>; 2],
    /// The rank's points in two parts, for the grid's present layout
    /// ([`Distribution::split`]).
    parts: Option<Parts>,
    /// Whether the present blocks follow the water (else every block is present for good).
    pub follows: bool,
    /// The present blocks of all the ranks and their owners.
    dealt: Dealt,
    /// Blocks this rank took over from another so far (following runs).
    pub blocks_moved: usize,
}

/// A rank's points in two parts: those that read no ghost (computed while the ghosts
/// travel) and the others (computed after), each with its launch lists and its halo
/// exchanges. With blocks of [`CUT_FROM`] margins or more, the blocks next to ghosts are
/// cut ([`RankLayout::overlap_regions`]): their cores join the first part, strips along
/// the sides facing ghosts make the second. Then the first part's exchange fills the
/// halos of every own block (those facing ghosts with values nobody reads before the
/// second part's exchange fills them again); otherwise each part's fills its own blocks'.
/// The second part's exchange (on the ghosts' stream) fills every halo of the cut blocks
/// again, beside the cores' reads on the run's stream: on the sides that face no ghost it
/// stores the values already there (its sources, own blocks, are not written meanwhile),
/// so no read can see another bit.
struct Parts {
    /// Before the ghosts arrive, then after: lists of one extent each, at least one.
    lists: [Vec<BlockList>; 2],
    /// Before, then after.
    exchanges: [Exchanges; 2],
    /// Whether blocks were cut: then on devices the second part runs on the ghosts'
    /// stream as soon as they arrive, beside the first (a few large launches, which that
    /// lets overlap); else on the run's stream after the first, as before the cut
    /// existed: Malpasset at 5 m over two H200s took 44.4 s with the second part on the
    /// ghosts' stream (and the first part's fill before the messages) against 39.7 s
    /// before, but at other commits and machine starts (one rank: 35.2 and 34.1 s); the
    /// order kept here was not timed again.
    cut: bool,
}

/// Blocks of at least this many margins along every axis are cut into a core and strips
/// for the overlap (1024 x 64 points and more: the blocks of a rank's whole part, 8192 x
/// 8192 from [`HUGE_FROM`] cells per rank, are); smaller blocks overlap whole, the inner
/// ones while the ghosts travel.
const CUT_FROM: usize = 8;

/// The environment variable that, set to `whole`, keeps every block whole in the overlap
/// (the blocks next to ghosts wait for them), for timing the cut against it.
pub(crate) const OVERLAP_ENV: &str = "STENCIL_OVERLAP";

/// The widths of the strips cut along the sides of large blocks that face ghosts: along
/// x one thread-block row of the f32 vector launches (32 threads of 4 points; two rows in
/// f64, vectors of 2), along y such a launch's rows twice; at least the grid's halo
/// either way, and multiples of the launch tiles, so that cores and strips are too.
const OVERLAP_MARGIN: [usize; 3] = [128, 8, 1];

/// Which fields' ghosts a fill is for.
#[derive(Clone, Copy)]
pub(super) enum Ghosts {
    /// The surface and the velocities, before the faces.
    State = 0,
    /// The face fluxes, before the advance.
    Faces = 1,
}

impl<T: Real> Distribution<T> {
    /// This rank's part of `dealt` (its `layout`), its ghost fills not planned yet.
    fn new(
        ranks: Arc<Ranks>,
        block: [usize; 2],
        (dealt, layout): (Dealt, RankLayout),
        follows: bool,
    ) -> Distribution<T> {
        Distribution {
            ranks,
            block,
            layout,
            plans: [None, None],
            parts: None,
            follows,
            dealt,
            blocks_moved: 0,
        }
    }

    /// The ranks.
    pub fn ranks(&self) -> &Arc<Ranks> {
        &self.ranks
    }

    /// The present blocks of all the ranks and their owners.
    pub fn dealt(&self) -> &Dealt {
        &self.dealt
    }

    /// Takes `dealt` and this rank's `layout` of it: the ghost fills are planned anew at
    /// their next use, the parts by the next [`Distribution::split`].
    pub fn relayout(&mut self, dealt: Dealt, layout: RankLayout) {
        (self.dealt, self.layout) = (dealt, layout);
        self.plans = [None, None];
        self.parts = None;
    }

    /// Splits this rank's points of `grid` (its present layout) into the two parts (whole
    /// blocks, or cut ones' cores and strips: [`Parts`]), with their lists and halo
    /// exchanges.
    pub fn split(&mut self, grid: &BlockGrid, boundaries: &Boundaries) -> Result<(), FloodError> {
        let outer = self.layout.outer();
        let g = grid.geometry();
        let cut = (0..g.dims).all(|a| g.block[a] >= CUT_FROM * OVERLAP_MARGIN[a])
            && std::env::var(OVERLAP_ENV).as_deref() != Ok("whole");
        let (regions, first) = if cut {
            let regions = self.layout.overlap_regions(g, OVERLAP_MARGIN)?;
            (regions, self.layout.owned().to_vec())
        } else {
            let inner = self.layout.inner();
            let whole = |keys: &[BlockKey]| -> Vec<BlockRegion> {
                keys.iter()
                    .map(|&k| BlockRegion::whole(k, g.block))
                    .collect()
            };
            ([whole(&inner), whole(outer)], inner)
        };
        let lists = |regions: &[BlockRegion]| -> Result<Vec<BlockList>, FloodError> {
            let lists = BlockList::grouped(grid, regions)?;
            // An empty part still launches once (over nothing), as the kept speeds count.
            Ok(if lists.is_empty() {
                vec![BlockList::new(grid, &[])?]
            } else {
                lists
            })
        };
        self.parts = Some(Parts {
            cut,
            lists: [lists(&regions[0])?, lists(&regions[1])?],
            exchanges: [
                exchanges(grid, boundaries, Some(&first))?,
                exchanges(grid, boundaries, Some(outer))?,
            ],
        });
        Ok(())
    }

    /// The stream the second part of a pass runs on once the ghost fill `which` (started
    /// this pass) is in: the messages' own where blocks were cut, else none (the run's
    /// stream, after the first part; see [`Parts`]).
    fn second_stream(&self, which: Ghosts) -> Option<stencil_runtime::Cuda> {
        let cut = self.parts.as_ref().is_some_and(|p| p.cut);
        let plan = self.plans[which as usize].as_ref().filter(|_| cut)?;
        plan.side().cloned()
    }

    /// The launches a part of the stages makes per kernel, both parts together (after
    /// [`Distribution::split`]): the speeds a face pass leaves on a keeping backend.
    pub fn launches(&self) -> usize {
        let p = self.parts.as_ref().expect("split at the start");
        p.lists[0].len() + p.lists[1].len()
    }

    /// The ghost fill `which`, planned at its first use.
    fn plan(
        &mut self,
        which: Ghosts,
        grid: &BlockGrid,
        fields: usize,
    ) -> Result<&mut GhostExchange<T>, FloodError> {
        Ok(match &mut self.plans[which as usize] {
            Some(plan) => plan,
            empty => empty.insert(self.layout.ghost_exchange(&self.ranks, grid, fields)?),
        })
    }

    /// The same part for a new grid (after a restore): the ghost fills are planned again.
    pub fn replanned(self) -> Distribution<T> {
        let follows = self.follows;
        Distribution::new(self.ranks, self.block, (self.dealt, self.layout), follows)
    }

    /// For a following run at its start (or a restore): `present`, the blocks a run on
    /// one rank would start with, dealt to the ranks. Collective only in that every rank
    /// must reach the same `present`.
    pub fn start_with(
        &mut self,
        geometry: &stencil_runtime::blocks::Geometry,
        present: Vec<stencil_runtime::blocks::BlockKey>,
        periodic: [bool; 3],
    ) {
        let dealt = Dealt::new(geometry, present, &self.ranks);
        let layout = dealt.layout(geometry, self.ranks.rank(), periodic);
        self.relayout(dealt, layout);
    }

    /// Fills the ghost blocks of `fields` (the state's or the faces', as `which` says)
    /// from their owners. Every rank calls it at the same point.
    pub fn fill_ghosts(
        &mut self,
        which: Ghosts,
        grid: &BlockGrid,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), FloodError> {
        let ranks = self.ranks.clone();
        Ok(self
            .plan(which, grid, fields.len())?
            .run(&ranks, grid, fields)?)
    }

    /// `value` combined over the ranks by `op`.
    pub fn all(&self, value: f64, op: Op) -> f64 {
        let mut v = [value];
        self.ranks.all_reduce(&mut v, op);
        v[0]
    }

    /// Every rank's cells of the dense `fields` (row by row) made known to every rank,
    /// each cell its owner's value exactly (NaN included: an instability is reported
    /// where it is; see [`Ranks::gather_owned`]).
    pub fn gather(&self, owned: &[bool], fields: &mut [Vec<f64>]) {
        for f in fields.iter_mut() {
            self.ranks.gather_owned(owned, f);
        }
    }

    /// A survey of this rank's blocks made one of all the ranks' blocks.
    pub fn all_survey(&self, s: Survey) -> Survey {
        let mut sum = [s.volume];
        self.ranks.all_reduce(&mut sum, Op::Sum);
        let mut low = [s.min_depth];
        self.ranks.all_reduce(&mut low, Op::Min);
        let mut high = [s.max_depth, s.max_speed];
        self.ranks.all_reduce(&mut high, Op::Max);
        Survey {
            volume: sum[0],
            min_depth: low[0],
            max_depth: high[0],
            max_speed: high[1],
        }
    }
}

impl<T: Real> SparseShallowWater<T> {
    /// `setup` on `backend`, split over `ranks`, its blocks dealt to the ranks along the
    /// Morton curve; this rank holds its own blocks and, as ghosts, the blocks next to
    /// them. With [`RankBlocks::Every`] every block of the domain is present for good;
    /// with [`RankBlocks::FollowWater`] the blocks follow the water as on one rank
    /// ([`SparseShallowWater::new`]), dealt anew by their cells at every change, so that
    /// the ranks stay balanced as the wet area moves (`super::following`). One rank alone
    /// ([`Ranks::single`]) holds every present block.
    pub fn over_ranks(
        backend: &Backend,
        setup: &Setup,
        ranks: Arc<Ranks>,
        blocks: RankBlocks,
    ) -> Result<SparseShallowWater<T>, FloodError> {
        let follows = blocks == RankBlocks::FollowWater;
        let sized = match blocks {
            RankBlocks::EveryOf(b) => Some(b),
            _ => None,
        };
        let backend = &own_stream(backend)?;
        let (surface, q, p) = initial_fields::<T>(setup)?;
        let grid = *setup.terrain.grid();
        let corners = Arc::new(corner_field::<T>(&setup.terrain, &setup.boundaries));
        let block = match (follows, sized) {
            (true, _) => super::BLOCK,
            (false, Some(b)) => b,
            (false, None) => ranked_block(grid.nx * grid.ny, ranks.size(), backend),
        };
        let geometry =
            *BlockGrid::new(&Backend::Cpu, &[grid.nx, grid.ny], &block, BED_HALO)?.geometry();
        // Every block; a following run deals its starting blocks in `from_state`.
        let dealt = Dealt::new(&geometry, geometry.all_keys().collect(), &ranks);
        let b = &setup.boundaries;
        let periodic = [b.periodic(0), b.periodic(1), false];
        let layout = dealt.layout(&geometry, ranks.rank(), periodic);
        let distribution = Distribution::new(ranks, block, (dealt, layout), follows);
        let mut flow = SparseShallowWater::from_state(
            backend,
            grid,
            &setup.boundaries,
            setup.physics,
            corners,
            [&surface, &q, &p],
            Some(distribution),
        )?;
        flow.progress.initial_volume = flow.survey()?.volume;
        Ok(flow)
    }

    /// The cells this rank computes (all of them without ranks), row by row from the
    /// south.
    pub fn owned_cells(&self) -> Vec<usize> {
        let mask = self.owned_mask();
        (0..mask.len()).filter(|&c| mask[c]).collect()
    }

    /// Per cell, row by row, whether this rank computes it.
    pub(super) fn owned_mask(&self) -> Vec<bool> {
        let g = self.grid;
        let geometry = *self.blocks.geometry();
        let owned: std::collections::HashSet<_> = self.list.keys().iter().copied().collect();
        (0..g.nx * g.ny)
            .map(|c| owned.contains(&geometry.key_of([c % g.nx, c / g.nx, 0])))
            .collect()
    }

    /// Dense per-cell `fields` of this rank made every rank's (see [`Distribution::gather`];
    /// nothing to do without ranks). Every rank must call it at the same point. A cell of
    /// a block no rank holds is every rank's: each has its dry value.
    pub(super) fn gathered(&self, mut fields: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
        if let Some(d) = &self.distribution {
            d.gather(&self.gathered_mask(), &mut fields);
        }
        fields
    }

    /// Per cell, row by row, whether this rank gives its value when cells are gathered:
    /// those it computes, and those of blocks no rank holds.
    pub(super) fn gathered_mask(&self) -> Vec<bool> {
        let mut mask = self.owned_mask();
        if let Some(d) = self.distribution.as_ref().filter(|d| d.follows) {
            let (g, geometry) = (self.grid, *self.blocks.geometry());
            for (c, m) in mask.iter_mut().enumerate() {
                let key = geometry.key_of([c % g.nx, c / g.nx, 0]);
                *m |= d.dealt().present.binary_search(&key).is_err();
            }
        }
        mask
    }
}

impl<T: Real> SparseShallowWater<T> {
    /// Seconds the ghost fills of one step take on this rank (two stages, each the
    /// state's and the faces' fill, as a step does them), averaged over `repeats` steps'
    /// worth and waited for: the halo traffic a step would have if nothing overlapped
    /// it. `None` without several ranks. Every rank calls it at the same point.
    pub fn ghost_fill_seconds(&mut self, repeats: usize) -> Result<Option<f64>, FloodError> {
        let Some(d) = self.distribution.as_mut().filter(|d| d.ranks.size() > 1) else {
            return Ok(None);
        };
        let [w, _, _, u, v] = &mut self.progress.now;
        let [a, b, c, e, f, g] = &mut self.fluxes;
        let mut one_step = |d: &mut Distribution<T>| -> Result<(), FloodError> {
            for _stage in 0..2 {
                d.fill_ghosts(Ghosts::State, &self.blocks, &mut [w, u, v])?;
                d.fill_ghosts(Ghosts::Faces, &self.blocks, &mut [a, b, c, e, f, g])?;
            }
            Ok(())
        };
        one_step(d)?;
        self.backend.synchronize()?;
        d.all(0.0, Op::Max);
        let start = std::time::Instant::now();
        for _ in 0..repeats {
            one_step(d)?;
        }
        self.backend.synchronize()?;
        d.all(0.0, Op::Max);
        Ok(Some(start.elapsed().as_secs_f64() / repeats.max(1) as f64))
    }
}

impl<T: Real> SparseShallowWater<T> {
    /// The faces of a stage over ranks: the first part's halos filled, the state's ghosts
    /// sent while the first part's faces are computed, then the second part's halos
    /// filled and its faces computed once the ghosts are in (on the ghosts' stream where
    /// the blocks were cut, see [`Parts`]). Returns the largest of the launches' speeds
    /// (NaN on a backend that keeps them: then each launch left its own, the first part's
    /// first; [`Distribution::launches`] of them). [`SparseShallowWater::start_face_ghosts`]
    /// follows, so that the faces' ghosts travel while
    /// [`SparseShallowWater::ranked_advance`] updates the first part.
    pub(super) fn ranked_faces(
        &mut self,
        on: &Backend,
        which: Which,
        s: &crate::kernels::kp07::Kp07<T>,
    ) -> Result<T, FloodError> {
        let d = self.distribution.as_mut().expect("a run over ranks");
        let ranks = d.ranks.clone();
        let grid = &self.blocks;
        let state = self.progress.pick(which);
        // With cut blocks the first part's fill (which writes the halos facing ghosts too)
        // goes before the messages start, so that the messages' stream, which waits for
        // the work queued so far, fills those halos after it; otherwise after the start,
        // so that the messages leave at once.
        let cut = d.parts.as_ref().expect("split at the start").cut;
        for fill_now in [cut, !cut] {
            let [w, _, _, u, v] = &mut *state;
            if fill_now {
                let parts = d.parts.as_ref().expect("split at the start");
                parts.exchanges[0]
                    .state
                    .run_paired((w, &self.dry), &mut [u, v])?;
            } else {
                d.plan(Ghosts::State, grid, 3)?
                    .start(&ranks, grid, &mut [w, u, v])?;
            }
        }
        let side = d.second_stream(Ghosts::State);
        let parts = d.parts.as_ref().expect("split at the start");
        let mut speed: Option<T> = None;
        for part in 0..2 {
            let on = match (part, &side) {
                (1, Some(side)) => on.on_stream_of(side),
                _ => on.clone(),
            };
            if part == 1 {
                if side.is_none() {
                    started(&mut d.plans, Ghosts::State).finish(grid)?;
                }
                let [w, _, _, u, v] = &mut *state;
                parts.exchanges[1]
                    .state
                    .run_paired_on(&on, (w, &self.dry), &mut [u, v])?;
            }
            for list in &parts.lists[part] {
                let faces = Fluxes::of(self.fluxes.each_mut());
                let fields = StateFields::of(state.each_ref());
                let launched = kp07::faces::launch_blocks(&on, list, fields, &self.bed, faces, s)?;
                // The larger, a NaN (an instability) kept.
                speed = Some(match speed {
                    Some(a) if a.is_nan() || a >= launched => a,
                    _ => launched,
                });
            }
        }
        if side.is_some() {
            started(&mut d.plans, Ghosts::State).finish(grid)?;
        }
        Ok(speed.expect("a launch per part at least"))
    }

    /// Fills the first part's halos of the face fluxes and starts sending the faces'
    /// ghosts (after [`SparseShallowWater::ranked_faces`]).
    pub(super) fn start_face_ghosts(&mut self) -> Result<(), FloodError> {
        let d = self.distribution.as_mut().expect("a run over ranks");
        let ranks = d.ranks.clone();
        let [a, b, c, e, f, g] = &mut self.fluxes;
        // In the order `ranked_faces` fills and starts.
        let cut = d.parts.as_ref().expect("split at the start").cut;
        for fill_now in [cut, !cut] {
            if fill_now {
                let parts = d.parts.as_ref().expect("split at the start");
                parts.exchanges[0].faces.run_many(&mut [a, b, c, e, f, g])?;
            } else {
                d.plan(Ghosts::Faces, &self.blocks, 6)?.start(
                    &ranks,
                    &self.blocks,
                    &mut [a, b, c, e, f, g],
                )?;
            }
        }
        Ok(())
    }

    /// The update of a stage over ranks: the first part while the faces' ghosts travel,
    /// then the second part, its halos filled (on the ghosts' stream where the blocks
    /// were cut, see [`Parts`]).
    pub(super) fn ranked_advance(&mut self, stage: &Stage<T>) -> Result<(), FloodError> {
        let d = self.distribution.as_mut().expect("a run over ranks");
        let grid = &self.blocks;
        let side = d.second_stream(Ghosts::Faces);
        let parts = d.parts.as_ref().expect("split at the start");
        for part in 0..2 {
            let on = match (part, &side) {
                (1, Some(side)) => self.backend.on_stream_of(side),
                _ => self.backend.clone(),
            };
            if part == 1 {
                if side.is_none() {
                    started(&mut d.plans, Ghosts::Faces).finish(grid)?;
                }
                let [a, b, c, e, f, g] = &mut self.fluxes;
                parts.exchanges[1]
                    .faces
                    .run_many_on(&on, &mut [a, b, c, e, f, g])?;
            }
            for list in &parts.lists[part] {
                let on = (&on, list);
                super::advance_blocks(on, &mut self.progress, &self.fluxes, &self.bed, stage)?;
            }
        }
        if side.is_some() {
            started(&mut d.plans, Ghosts::Faces).finish(grid)?;
        }
        Ok(())
    }
}

impl<T: Real> Distribution<T> {
    /// Ends the ghost fills still started (a step that failed between a start and its
    /// finish): the grid's stream waits for the ghosts' stream again. A failure to queue
    /// that wait is not reported: the step's own error is.
    pub(super) fn finish_started(&mut self, grid: &BlockGrid) {
        for plan in self.plans.iter_mut().flatten() {
            plan.finish(grid).ok();
        }
    }
}

/// The ghost fill `which` of `plans`, started earlier in the stage (so planned).
fn started<T: Real>(
    plans: &mut [Option<GhostExchange<T>>; 2],
    which: Ghosts,
) -> &mut GhostExchange<T> {
    plans[which as usize]
        .as_mut()
        .expect("planned when the fill started")
}
