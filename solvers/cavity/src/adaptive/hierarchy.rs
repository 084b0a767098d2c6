//! [`Hierarchy`]: a tree of vertex-centred levels on a block grid, with the wavelet
//! transform over all of them and adaptation from its details.

use super::wavelet::transform::{classify, copy, detail, reconstruct};
use std::collections::HashMap;
use stencil_runtime::blocks::{
    plan_adaptation, Absent, Adaptation, BlockMeasure, HaloExchange, HaloRule, LevelTransfer,
    Predictor, Refinement, Side,
};
use stencil_runtime::{Backend, BlockField, BlockGrid, BlockKey, BlockList, Error, Field, Real};

/// The halo the transform's kernels read (the cubic predictor's `±3`).
pub const HALO: usize = 3;

/// A tree of levels on a vertex-centred block grid of the unit square: level 0 whole,
/// every finer block's parent present. Level `j` has `(n0 - 1) 2^j + 1` points per axis.
///
/// Halos next to an absent block of the same level are predicted from the coarser level;
/// past the walls they hold the cubic extrapolation of the points inside (what the
/// predictors need next to a wall). Plans (halos, restriction, launch lists) are made
/// again whenever the blocks change.
pub struct Hierarchy {
    grid: BlockGrid,
    predictor: Predictor,
    plans: Option<Plans>,
    /// Blocks whose children were removed by an adaptation: if the children come back,
    /// they stay (see [`Hierarchy::adapt`]).
    coarsened: std::collections::HashSet<BlockKey>,
}

/// Which halo [`Hierarchy::exchange_level`] fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelHalo {
    /// The whole halo.
    Full,
    /// One layer (what 5-point stencils read).
    Thin,
    /// One layer, with 0 next to absent blocks and past the walls (for residuals, which
    /// exist only where the level does).
    Zero,
}

/// What is planned for one layout.
struct Plans {
    /// Every level's halos (predicted next to absent blocks, extrapolated past walls).
    halo: HaloExchange,
    /// The same per level.
    level_halos: Vec<HaloExchange>,
    /// The same per level, one layer only (what 5-point stencils read).
    thin_halos: Vec<HaloExchange>,
    /// Per level, one layer of 0 next to absent blocks and past the walls (residuals).
    zero_halos: Vec<HaloExchange>,
    restriction: LevelTransfer,
    /// Per level, its present blocks.
    lists: Vec<BlockList>,
    /// Per level above 0 (index `level - 1`), the injection from the level below.
    injections: Vec<LevelTransfer>,
    /// Per level above 0 (index `level - 1`), the coarsening to the level below.
    coarsenings: Vec<LevelTransfer>,
}

impl Hierarchy {
    /// A hierarchy of `levels` levels over `n0 x n0` points at level 0 (`n0 >= 2`), in
    /// blocks of `block x block` points, with levels `0 .. full` present everywhere and
    /// the finer ones empty.
    pub fn new(
        backend: &Backend,
        n0: usize,
        block: usize,
        levels: u8,
        full: u8,
        predictor: Predictor,
    ) -> Result<Hierarchy, Error> {
        let mut grid = BlockGrid::new(backend, &[n0, n0], &[block, block], HALO)?
            .with_levels(levels, Refinement::Vertex)?;
        let g = *grid.geometry();
        let keys: Vec<BlockKey> = (0..full.clamp(1, levels))
            .flat_map(|l| g.at_level(l).all_keys().collect::<Vec<_>>())
            .collect();
        grid.update(&keys, &[])?;
        Ok(Hierarchy {
            grid,
            predictor,
            plans: None,
            coarsened: Default::default(),
        })
    }

    /// Sets the present blocks to exactly `keys` (a tree: level 0 whole, parents
    /// present); fields of the old layout are no longer of the grid's.
    pub fn set_blocks(&mut self, keys: &[BlockKey]) -> Result<(), Error> {
        let g = *self.grid.geometry();
        let wanted: std::collections::HashSet<BlockKey> = keys.iter().copied().collect();
        let whole = g.all_keys().all(|k| wanted.contains(&k));
        let tree = keys
            .iter()
            .all(|k| k.parent().is_none_or(|p| wanted.contains(&p)));
        if !whole || !tree {
            return Err(Error::InvalidField(
                "the blocks do not make a tree (level 0 whole, every parent present)".into(),
            ));
        }
        let remove: Vec<BlockKey> = self
            .grid
            .keys()
            .into_iter()
            .filter(|k| !wanted.contains(k))
            .collect();
        self.grid.update(keys, &remove)?;
        self.plans = None;
        Ok(())
    }

    /// The block grid.
    pub fn grid(&self) -> &BlockGrid {
        &self.grid
    }

    /// The predictor between levels.
    pub fn predictor(&self) -> Predictor {
        self.predictor
    }

    /// The number of levels.
    pub fn levels(&self) -> u8 {
        self.grid.geometry().levels
    }

    /// Points per axis of level `level`.
    pub fn points(&self, level: u8) -> usize {
        self.grid.geometry().at_level(level).domain[0]
    }

    /// A field with `f(x, y)` at every point of every present block (halos included, at
    /// their positions past the walls too).
    pub fn field<T: Real>(&self, f: impl Fn(f64, f64) -> f64) -> Result<BlockField<T>, Error> {
        let g = *self.grid.geometry();
        BlockField::from_level_fn(&self.grid, |level, p| {
            let h = 1.0 / (g.at_level(level).domain[0] - 1) as f64;
            T::from_f64(f(p[0] as f64 * h, p[1] as f64 * h))
        })
    }

    /// The plans of the present layout, made if the blocks changed.
    fn plans(&mut self) -> Result<&Plans, Error> {
        let stale = match &self.plans {
            Some(p) => !p.halo.is_current(&self.grid),
            None => true,
        };
        if stale {
            let rule = HaloRule {
                sides: [[Side::Extrapolate; 2]; 3],
                absent: Absent::Coarser(self.predictor),
            };
            let zero = HaloRule::uniform(Side::Value(0.0), Absent::Value(0.0));
            let grid = &self.grid;
            let levels = self.levels();
            let per_level = |rule: &HaloRule, width: usize| -> Result<Vec<HaloExchange>, Error> {
                (0..levels)
                    .map(|l| HaloExchange::of_level(grid, rule, l, width))
                    .collect()
            };
            self.plans = Some(Plans {
                halo: HaloExchange::new(grid, &rule)?,
                level_halos: per_level(&rule, HALO)?,
                thin_halos: per_level(&rule, 1)?,
                zero_halos: per_level(&zero, 1)?,
                restriction: LevelTransfer::restriction(grid)?,
                lists: (0..levels)
                    .map(|l| BlockList::level(grid, l))
                    .collect::<Result<_, _>>()?,
                injections: (1..levels)
                    .map(|l| LevelTransfer::injection(grid, l))
                    .collect::<Result<_, _>>()?,
                coarsenings: (1..levels)
                    .map(|l| LevelTransfer::coarsening(grid, l))
                    .collect::<Result<_, _>>()?,
            });
        }
        Ok(self.plans.as_ref().expect("made above"))
    }

    /// The present blocks of `level`.
    pub fn list(&mut self, level: u8) -> Result<&BlockList, Error> {
        let levels = self.levels();
        self.plans()?
            .lists
            .get(level as usize)
            .ok_or_else(|| no_level(level, levels))
    }

    /// Makes the coarse copies equal to the finest values over them, then fills the
    /// halos of every level.
    pub fn restrict_and_exchange<T: Real>(&mut self, u: &mut BlockField<T>) -> Result<(), Error> {
        let plans = self.plans()?;
        plans.restriction.run(u)?;
        plans.halo.run(u)
    }

    /// Fills the halos of the blocks of `level` as `halo` says.
    pub fn exchange_level<T: Real>(
        &mut self,
        level: u8,
        halo: LevelHalo,
        u: &mut BlockField<T>,
    ) -> Result<(), Error> {
        let exchange = self.level_plan(level, Some(level as usize), |p| match halo {
            LevelHalo::Full => &p.level_halos,
            LevelHalo::Thin => &p.thin_halos,
            LevelHalo::Zero => &p.zero_halos,
        })?;
        exchange.run(u)
    }

    /// The even points of `level`'s blocks take level `level - 1`'s values.
    pub fn inject<T: Real>(&mut self, level: u8, u: &mut BlockField<T>) -> Result<(), Error> {
        let below = (level as usize).checked_sub(1);
        self.level_plan(level, below, |p| &p.injections)?.run(u)
    }

    /// The points of level `level - 1` under `level`'s blocks take their values.
    pub fn coarsen<T: Real>(
        &mut self,
        level: u8,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), Error> {
        let below = (level as usize).checked_sub(1);
        self.level_plan(level, below, |p| &p.coarsenings)?
            .run_many(fields)
    }

    /// The plan at `index` (`None`: there is none) of the per-level plans `pick` chooses
    /// (halos indexed by level, transfers from the level below by `level - 1`); an error
    /// for a `level` the tree lacks.
    fn level_plan<P>(
        &mut self,
        level: u8,
        index: Option<usize>,
        pick: impl FnOnce(&Plans) -> &Vec<P>,
    ) -> Result<&P, Error> {
        let levels = self.levels();
        let plans = pick(self.plans()?);
        index
            .and_then(|i| plans.get(i))
            .ok_or_else(|| no_level(level, levels))
    }

    /// The spacing of level `level` on the unit square.
    pub fn spacing(&self, level: u8) -> f64 {
        1.0 / (self.points(level) - 1) as f64
    }

    /// The finest level with a present block.
    pub fn finest_present(&self) -> u8 {
        self.grid.keys().iter().map(|k| k.level).max().unwrap_or(0)
    }

    /// 1 at the points of every block that a block of the next finer level covers, 0
    /// elsewhere (computed on the host for the present layout).
    pub fn covered<T: Real>(&self) -> Result<BlockField<T>, Error> {
        let g = *self.grid.geometry();
        let grid = &self.grid;
        BlockField::from_level_fn(grid, |level, p| {
            let fine = level + 1;
            let inside = (0..2).all(|a| p[a] >= 0 && (p[a] as usize) < g.at_level(level).domain[a]);
            let covered = inside
                && fine < g.levels
                && grid.contains(g.at_level(fine).key_of([
                    2 * p[0] as usize,
                    2 * p[1] as usize,
                    0,
                ]));
            T::from_f64(if covered { 1.0 } else { 0.0 })
        })
    }

    /// Fills the halos of every level (no restriction).
    pub fn exchange<T: Real>(&mut self, u: &mut BlockField<T>) -> Result<(), Error> {
        self.plans()?.halo.run(u)
    }

    /// The forward transform: after restricting `u` and filling its halos, `d` holds
    /// on every block of level `j >= 1` the details of `u` against level `j - 1`'s
    /// prediction (0 at even points), and on level 0 the values of `u`.
    pub fn forward<T: Real>(
        &mut self,
        u: &mut BlockField<T>,
        d: &mut BlockField<T>,
    ) -> Result<(), Error> {
        self.restrict_and_exchange(u)?;
        let backend = self.grid.backend().clone();
        let cubic = self.predictor == Predictor::Cubic;
        let plans = self.plans()?;
        copy::launch_blocks(&backend, &plans.lists[0], u, d)?;
        for list in plans.lists.iter().skip(1).filter(|l| !l.is_empty()) {
            detail::launch_blocks(&backend, list, u, d, cubic)?;
        }
        Ok(())
    }

    /// The inverse transform: `u` from `d` as [`Hierarchy::forward`] gives it, level by
    /// level from level 0 (`work` is a field of the layout for the intermediate results).
    pub fn inverse<T: Real>(
        &mut self,
        d: &BlockField<T>,
        u: &mut BlockField<T>,
        work: &mut BlockField<T>,
    ) -> Result<(), Error> {
        let backend = self.grid.backend().clone();
        let cubic = self.predictor == Predictor::Cubic;
        let plans = self.plans()?;
        copy::launch_blocks(&backend, &plans.lists[0], d, u)?;
        for (l, list) in plans.lists.iter().enumerate().skip(1) {
            if list.is_empty() {
                continue;
            }
            plans.injections[l - 1].run(u)?;
            plans.halo.run(u)?;
            reconstruct::launch_blocks(&backend, list, u, d, work, cubic)?;
            copy::launch_blocks(&backend, list, work, u)?;
        }
        Ok(())
    }

    /// What the details `d` (from [`Hierarchy::forward`]) say of each block of level
    /// 1 and above: whether some exceed `eps`, and `coarsening * eps`.
    pub fn measure<T: Real>(
        &mut self,
        d: &BlockField<T>,
        eps: f64,
        coarsening: f64,
    ) -> Result<HashMap<BlockKey, BlockMeasure>, Error> {
        let backend = self.grid.backend().clone();
        let mut significant = BlockField::<T>::zeroed(&self.grid)?;
        let mut kept = BlockField::<T>::zeroed(&self.grid)?;
        let plans = self.plans()?;
        let mut out = HashMap::new();
        for list in plans.lists.iter().skip(1).filter(|l| !l.is_empty()) {
            classify::launch_blocks(
                &backend,
                list,
                d,
                &mut significant,
                &mut kept,
                T::from_f64(eps),
                T::from_f64(coarsening),
            )?;
            let s = significant.flags(list, 0)?;
            let k = kept.flags(list, 0)?;
            for ((key, s), k) in list.keys().iter().zip(s).zip(k) {
                out.insert(
                    *key,
                    BlockMeasure {
                        significant: s.any(),
                        above_coarsening: k.any(),
                    },
                );
            }
        }
        Ok(out)
    }

    /// Adapts the tree to `measures` ([`plan_adaptation`]): `fields` follow the new
    /// layout, their new blocks predicted from the coarser level (coarser first). A
    /// family of blocks that was removed once and has come back is not removed again.
    pub fn adapt<T: Real>(
        &mut self,
        measures: &HashMap<BlockKey, BlockMeasure>,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<Adaptation, Error> {
        let keys = self.grid.keys();
        // A family removed once and back again stays: its parent's details straddle the
        // thresholds because the parent's values change with the family's presence (the
        // coarse level alone resolves the flow less well), and the grid would flip at
        // every adaptation and the flow never settle.
        let mut measures = measures.clone();
        for parent in &self.coarsened {
            if parent.children(2).iter().any(|c| self.grid.contains(*c)) {
                measures.entry(*parent).or_default().above_coarsening = true;
            }
        }
        let plan = plan_adaptation(self.grid.geometry(), &keys, &measures);
        if plan.is_empty() {
            return Ok(plan);
        }
        self.coarsened
            .extend(plan.remove.iter().filter_map(|k| k.parent()));
        let change = self.grid.update(&plan.add, &plan.remove)?;
        for f in fields.iter_mut() {
            f.follow_zeroed(&self.grid, &change)?;
        }
        self.plans = None;
        // New blocks, a level at a time: each predicted from blocks present before it.
        let levels = self.levels();
        for level in 1..levels {
            let added: Vec<BlockKey> = plan
                .add
                .iter()
                .copied()
                .filter(|k| k.level == level)
                .collect();
            if added.is_empty() {
                continue;
            }
            let predict = LevelTransfer::prediction(&self.grid, &added, self.predictor)?;
            predict.run_many(fields)?;
        }
        Ok(plan)
    }

    /// `u` on the uniform grid of `level`, composed on the host: level 0's values, then
    /// level by level the prediction from the level below (the inverse transform with
    /// zero details), overwritten by the level's present blocks.
    pub fn uniform<T: Real>(&self, u: &BlockField<T>, level: u8) -> Result<Field<T>, Error> {
        let mut dense = u.level_to_dense(&self.grid, 0, 0, T::nan())?.to_host()?;
        for l in 1..=level {
            let (nc, n) = (self.points(l - 1), self.points(l));
            let coarse = dense;
            let weights: Vec<Vec<(usize, f64)>> =
                (0..n).map(|q| self.predictor.weights(q, nc)).collect();
            let values = u.level_to_dense(&self.grid, l, 0, T::zero())?.to_host()?;
            let lg = self.grid.geometry().at_level(l);
            dense = Field::from_fn(&[n, n], 0, |p| {
                let (i, j) = (p[0] as usize, p[1] as usize);
                if self.grid.contains(lg.key_of([i, j, 0])) {
                    return values.get(p).unwrap_or(T::nan());
                }
                let mut v = 0.0;
                for &(cj, wj) in &weights[j] {
                    for &(ci, wi) in &weights[i] {
                        let c = coarse
                            .get([ci as isize, cj as isize, 0])
                            .unwrap_or(T::nan());
                        v += wi * wj * c.as_f64();
                    }
                }
                T::from_f64(v)
            });
        }
        Ok(dense)
    }

    /// The points of the composite grid (each point once, at the finest level whose
    /// block holds it) against the points of the whole finest level: the fraction of the
    /// uniform finest grid that is present.
    pub fn present_fraction(&self) -> f64 {
        let g = *self.grid.geometry();
        let mut points = 0usize;
        for key in self.grid.keys() {
            let lg = g.at_level(key.level);
            let o = lg.origin(key);
            let fine = (key.level + 1 < g.levels).then(|| g.at_level(key.level + 1));
            for j in o[1]..(o[1] + lg.block[1]).min(lg.domain[1]) {
                for i in o[0]..(o[0] + lg.block[0]).min(lg.domain[0]) {
                    let covered =
                        fine.is_some_and(|f| self.grid.contains(f.key_of([2 * i, 2 * j, 0])));
                    points += usize::from(!covered);
                }
            }
        }
        let n = self.points(g.levels - 1);
        points as f64 / (n * n) as f64
    }
}

/// The error for a level a transfer or a list does not have.
fn no_level(level: u8, levels: u8) -> Error {
    Error::InvalidField(format!(
        "level {level} has no such transfer or list: the tree has levels 0 to {} (transfers between levels start at 1)",
        levels - 1
    ))
}
