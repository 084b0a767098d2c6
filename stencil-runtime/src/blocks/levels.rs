//! [`LevelTransfer`]: moving values between the levels of a vertex-centred block grid.
//!
//! On a grid of several levels a region may be covered by blocks of several levels at
//! once: a refined block keeps its coarse copy (the tree of blocks is kept, so each level
//! is a grid of its own for multigrid and for the wavelet transform). These transfers
//! move values between levels, each one launch:
//!
//! - [`LevelTransfer::restriction`]: every point of a block that a finer present block
//!   also covers takes the value of the finest one there (injection: point `c` of a level
//!   is point `2c` of the next; interpolating wavelets keep the coarse values as they
//!   are);
//! - [`LevelTransfer::prediction`]: the points of given blocks (blocks just added by a
//!   refinement) take the prediction from the next coarser level ([`Predictor`]), as the
//!   inverse wavelet transform with zero details gives;
//! - [`LevelTransfer::injection`]: the even points of a level's blocks take the coarser
//!   level's values (the inverse transform's first step), and
//!   [`LevelTransfer::coarsening`] the other way (one level of restriction).

use super::grid::{BlockGrid, BlockKey};
use super::halo::HaloExchange;
use super::predict::Predictor;
use super::{BlockField, Refinement};
use crate::{Error, Real};

/// A planned transfer between levels, for one layout of a grid (see the module's text).
#[derive(Debug)]
pub struct LevelTransfer {
    exchange: HaloExchange,
}

impl LevelTransfer {
    /// Restriction on `grid`'s present layout: every point of a present block that a
    /// finer present block also covers takes the finest such block's value.
    pub fn restriction(grid: &BlockGrid) -> Result<LevelTransfer, Error> {
        let g = vertex_levels(grid, "restriction")?;
        let mut copies = Vec::new();
        for (slot, info) in grid.blocks() {
            let key = info.key;
            let lg = g.at_level(key.level);
            let o = lg.origin(key);
            for_each_own_point(&lg, o, |p| {
                let global = [0, 1, 2].map(|a| o[a] + p[a] as usize);
                // The finest present block over this point.
                let finest = (key.level + 1..g.levels).rev().find_map(|level| {
                    let scale = 1usize << (level - key.level);
                    grid.element_of(level, global.map(|x| x * scale))
                });
                if let Some(src) = finest {
                    copies.push(((slot * g.slot_len() + g.element(p)) as u32, src as u32));
                }
            });
        }
        Ok(LevelTransfer {
            exchange: HaloExchange::transfers(grid, &copies, &[])?,
        })
    }

    /// The even points of every present block of level `level` (above 0) take the values
    /// of the coarser level's points they lie on (the first step of an inverse wavelet
    /// transform); points whose coarse block is absent keep theirs.
    pub fn injection(grid: &BlockGrid, level: u8) -> Result<LevelTransfer, Error> {
        let copies = even_pairs(grid, level, "injection")?;
        Ok(LevelTransfer {
            exchange: HaloExchange::transfers(grid, &copies, &[])?,
        })
    }

    /// The points of level `level - 1` that blocks of level `level` cover take those
    /// blocks' values there (the even points'): one level of [`LevelTransfer::restriction`],
    /// for a multigrid cycle that goes down a level at a time.
    pub fn coarsening(grid: &BlockGrid, level: u8) -> Result<LevelTransfer, Error> {
        let pairs = even_pairs(grid, level, "coarsening")?;
        let copies: Vec<(u32, u32)> = pairs.iter().map(|&(fine, coarse)| (coarse, fine)).collect();
        Ok(LevelTransfer {
            exchange: HaloExchange::transfers(grid, &copies, &[])?,
        })
    }

    /// Every point of the blocks `keys` (present, all of one level above 0, each named
    /// once, their coarser neighbours present) predicted from the next coarser level by
    /// `predictor` (a prediction has several sources per point: on a device, the
    /// exchange's second launch).
    pub fn prediction(
        grid: &BlockGrid,
        keys: &[BlockKey],
        predictor: Predictor,
    ) -> Result<LevelTransfer, Error> {
        let g = vertex_levels(grid, "prediction")?;
        // Blocks of one level, each once: a block's sources (the coarser level's points)
        // are then never another's destinations in the same pass.
        let level = keys.first().map_or(0, |k| k.level);
        let distinct: std::collections::HashSet<&BlockKey> = keys.iter().collect();
        if keys.iter().any(|k| k.level != level) || distinct.len() != keys.len() {
            return Err(Error::InvalidField(
                "a prediction fills blocks of one level, each named once: make one per level, coarser levels first".into(),
            ));
        }
        let mut sums = Vec::new();
        for &key in keys {
            let (Some(slot), Some(level)) = (grid.slot(key), key.level.checked_sub(1)) else {
                return Err(Error::InvalidField(format!(
                    "block {key:?} is to be predicted from a coarser level: it must be present here and of a level above 0"
                )));
            };
            let lg = g.at_level(key.level);
            let coarse = g.at_level(level);
            let o = lg.origin(key);
            let mut failure = None;
            for_each_own_point(&lg, o, |p| {
                let q = [0, 1, 2].map(|a| o[a] + p[a] as usize);
                let mut terms = Vec::new();
                for (c, w) in predictor.point_weights(q, coarse.domain, g.dims) {
                    match grid.element_of(level, c) {
                        Some(e) => terms.push((e as u32, w)),
                        None => failure = Some(coarse.key_of(c)),
                    }
                }
                sums.push(((slot * g.slot_len() + g.element(p)) as u32, terms));
            });
            if let Some(ckey) = failure {
                return Err(Error::InvalidField(format!(
                    "block {key:?} is predicted from block {ckey:?} of level {level}, which is absent: add the coarser blocks first"
                )));
            }
        }
        Ok(LevelTransfer {
            exchange: HaloExchange::transfers(grid, &[], &sums)?,
        })
    }

    /// Whether the transfer was planned for the grid's present layout.
    pub fn is_current(&self, grid: &BlockGrid) -> bool {
        self.exchange.is_current(grid)
    }

    /// The points the transfer sets.
    pub fn len(&self) -> usize {
        self.exchange.len()
    }

    /// Whether it sets none.
    pub fn is_empty(&self) -> bool {
        self.exchange.is_empty()
    }

    /// Runs the transfer on `field` (a field of the planned layout).
    pub fn run<T: Real>(&self, field: &mut BlockField<T>) -> Result<(), Error> {
        self.exchange.run(field)
    }

    /// Runs the transfer on several fields of the planned layout.
    pub fn run_many<T: Real>(&self, fields: &mut [&mut BlockField<T>]) -> Result<(), Error> {
        self.exchange.run_many(fields)
    }
}

/// The elements of the even points of the blocks of level `level` (above 0) paired with
/// those of the coarser level's points they lie on, where that level's block is present.
fn even_pairs(grid: &BlockGrid, level: u8, what: &str) -> Result<Vec<(u32, u32)>, Error> {
    let g = vertex_levels(grid, what)?;
    let Some(coarse_level) = level.checked_sub(1) else {
        return Err(Error::InvalidField(format!(
            "a {what} pairs a level with the one below it: level 0 has none"
        )));
    };
    let lg = g.at_level(level);
    let mut pairs = Vec::new();
    for (slot, info) in grid.blocks().filter(|(_, b)| b.key.level == level) {
        let o = lg.origin(info.key);
        for_each_own_point(&lg, o, |p| {
            let q = [0, 1, 2].map(|a| o[a] + p[a] as usize);
            if (0..g.dims).any(|a| q[a] % 2 == 1) {
                return;
            }
            if let Some(c) = grid.element_of(coarse_level, q.map(|x| x / 2)) {
                pairs.push(((slot * g.slot_len() + g.element(p)) as u32, c as u32));
            }
        });
    }
    Ok(pairs)
}

/// The grid's geometry, or an error unless its levels are vertex-centred.
fn vertex_levels(grid: &BlockGrid, what: &str) -> Result<super::Geometry, Error> {
    let g = *grid.geometry();
    if g.refinement != Refinement::Vertex {
        return Err(Error::InvalidField(format!(
            "a {what} between levels needs a vertex-centred grid (BlockGrid::with_levels(.., Refinement::Vertex))"
        )));
    }
    Ok(g)
}

/// Calls `f` with every point of a block at `origin` (a point of level geometry `lg`)
/// that lies inside the level's domain, as a point of the block.
fn for_each_own_point(lg: &super::Geometry, origin: [usize; 3], mut f: impl FnMut([isize; 3])) {
    let n = [0, 1, 2].map(|a| lg.block[a].min(lg.domain[a].saturating_sub(origin[a])));
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                f([i as isize, j as isize, k as isize]);
            }
        }
    }
}
