//! The sizes of a block grid: domain, blocks, halo, levels, and how a block's points lie
//! in its slot.

use super::grid::BlockKey;
use crate::Error;

/// Rows of a slot start their block at, and have a length of, a multiple of this many
/// elements (16 bytes of f32, 32 of f64), so that device launches over blocks may read
/// and write rows with vector accesses, as they do on dense device fields.
pub const ROW_ALIGN: usize = 4;

/// How a level's points lie on the next coarser level's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refinement {
    /// Points are vertices: point `i` of a level lies on point `2i` of the next finer one,
    /// and a domain of `n` points becomes `2(n - 1) + 1` (the lid-driven cavity's nodes,
    /// interpolating wavelets).
    Vertex,
    /// Points are cells: cell `i` of a level is cells `2i` and `2i + 1` of the next finer
    /// one, and `n` cells become `2n`.
    Cell,
}

/// The sizes of a block grid (axes beyond its dimension have extent 1 and no halo).
///
/// A grid has one or more levels; level 0 has the grid's own spacing and each further
/// level halves it. Every level is tiled by blocks of the same size, so block `b` of level
/// `j` covers the same part of the domain as blocks `2b` and `2b + 1` (per axis) of level
/// `j + 1`. The fields `domain` and `blocks` are those of the level in `level` (a grid's
/// own geometry is level 0's); [`Geometry::at_level`] gives another level's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// 1, 2 or 3.
    pub dims: usize,
    /// Points of the domain per axis.
    pub domain: [usize; 3],
    /// Points of a block per axis.
    pub block: [usize; 3],
    /// Points stored around each block on each used axis.
    pub halo: usize,
    /// Blocks per axis covering the domain (the last ones may stick out of it).
    pub blocks: [usize; 3],
    /// The number of levels (at least 1).
    pub levels: u8,
    /// How levels nest.
    pub refinement: Refinement,
    /// The level these sizes are of (0 unless made by [`Geometry::at_level`]).
    pub level: u8,
}

impl Geometry {
    /// Checks and records the sizes.
    pub fn new(domain: &[usize], block: &[usize], halo: usize) -> Result<Geometry, Error> {
        let dims = domain.len();
        if !(1..=3).contains(&dims) || block.len() != dims {
            return Err(Error::InvalidField(format!(
                "a block grid needs 1 to 3 axes and a block size per axis; got a domain of {domain:?} and blocks of {block:?}"
            )));
        }
        if domain.contains(&0) || block.contains(&0) {
            return Err(Error::InvalidField(format!(
                "a block grid's domain ({domain:?}) and blocks ({block:?}) need at least one point per axis"
            )));
        }
        if block.iter().any(|&b| b < halo) {
            return Err(Error::InvalidField(format!(
                "blocks of {block:?} points are narrower than their halo of {halo}: a halo is filled from the next block only; use larger blocks or a smaller halo"
            )));
        }
        let mut g = Geometry {
            dims,
            domain: [1; 3],
            block: [1; 3],
            halo,
            blocks: [1; 3],
            levels: 1,
            refinement: Refinement::Cell,
            level: 0,
        };
        for a in 0..dims {
            g.domain[a] = domain[a];
            g.block[a] = block[a];
            g.blocks[a] = domain[a].div_ceil(block[a]);
        }
        if g.slot_len()
            .checked_mul(g.blocks.iter().product())
            .is_none()
            || g.slot_len() > u32::MAX as usize
        {
            return Err(Error::InvalidField(format!(
                "a block grid of {domain:?} points in blocks of {block:?} is too large"
            )));
        }
        Ok(g)
    }

    /// These sizes with `levels` levels nesting by `refinement` (the sizes are level 0's).
    pub fn with_levels(mut self, levels: u8, refinement: Refinement) -> Result<Geometry, Error> {
        if !(1..=16).contains(&levels) {
            return Err(Error::InvalidField(format!(
                "a block grid has 1 to 16 levels; {levels} asked for"
            )));
        }
        if refinement == Refinement::Vertex && self.domain[..self.dims].contains(&1) {
            return Err(Error::InvalidField(
                "a vertex-centred grid with levels needs at least 2 points per axis".into(),
            ));
        }
        self.levels = levels;
        self.refinement = refinement;
        let finest = self.at_level(levels - 1);
        if finest
            .slot_len()
            .checked_mul(finest.blocks.iter().product())
            .is_none()
        {
            return Err(Error::InvalidField(format!(
                "a block grid of {:?} points with {levels} levels is too large",
                &self.domain[..self.dims]
            )));
        }
        Ok(self)
    }

    /// The sizes of level `level` (its domain and blocks; the block size, halo and slot
    /// layout are every level's). Level 0's are the grid's own.
    pub fn at_level(&self, level: u8) -> Geometry {
        let mut g = *self;
        let (from, to) = (1usize << self.level, 1usize << level.min(16));
        for a in 0..self.dims {
            g.domain[a] = match self.refinement {
                Refinement::Vertex => (self.domain[a] - 1) / from * to + 1,
                Refinement::Cell => self.domain[a] / from * to,
            };
            g.blocks[a] = g.domain[a].div_ceil(self.block[a]);
        }
        g.level = level;
        g
    }

    /// The halo on axis `a` (0 on unused axes).
    pub fn halo_on(&self, a: usize) -> usize {
        if a < self.dims {
            self.halo
        } else {
            0
        }
    }

    /// Elements of a slot's row before the block's first point: the halo, rounded up to
    /// a multiple of [`ROW_ALIGN`] so that every row's first point is aligned for the
    /// device's vector accesses.
    pub fn row_lead(&self) -> usize {
        self.halo.div_ceil(ROW_ALIGN) * ROW_ALIGN
    }

    /// Elements per axis of a slot: the block and its halo (along axis 0 the row is
    /// padded to a multiple of [`ROW_ALIGN`], its block starting at
    /// [`Geometry::row_lead`]).
    pub fn padded(&self) -> [usize; 3] {
        let row = (self.row_lead() + self.block[0] + self.halo).div_ceil(ROW_ALIGN) * ROW_ALIGN;
        [
            row,
            self.block[1] + 2 * self.halo_on(1),
            self.block[2] + 2 * self.halo_on(2),
        ]
    }

    /// Element strides of axes 1 and 2 inside a slot.
    pub fn strides(&self) -> [usize; 2] {
        let p = self.padded();
        [p[0], p[0] * p[1]]
    }

    /// Elements per slot.
    pub fn slot_len(&self) -> usize {
        self.padded().iter().product()
    }

    /// The element of a slot holding the block's point (0, 0, 0).
    pub fn interior_offset(&self) -> usize {
        let [sy, sz] = self.strides();
        self.row_lead() + self.halo_on(1) * sy + self.halo_on(2) * sz
    }

    /// The element of a slot holding the block's point `p` (halo points have an index
    /// below 0 or at or past the block's extent).
    pub fn element(&self, p: [isize; 3]) -> usize {
        let [sy, sz] = self.strides();
        (self.interior_offset() as isize + p[0] + p[1] * sy as isize + p[2] * sz as isize) as usize
    }

    /// The number of directions from a block to its neighbours and itself: `3^dims`.
    pub(crate) fn directions(&self) -> usize {
        3usize.pow(self.dims as u32)
    }

    /// The step (-1, 0 or 1 per used axis, 0 on the others) to the neighbour in
    /// direction `dir` (below [`Geometry::directions`]), axis 0 varying fastest.
    pub(crate) fn direction(&self, dir: usize) -> [i64; 3] {
        let mut step = [0; 3];
        let mut rest = dir;
        for d in step.iter_mut().take(self.dims) {
            *d = (rest % 3) as i64 - 1;
            rest /= 3;
        }
        step
    }

    /// The global index of block `key`'s point (0, 0, 0).
    pub fn origin(&self, key: BlockKey) -> [usize; 3] {
        [0, 1, 2].map(|a| key.index[a] as usize * self.block[a])
    }

    /// The block of this geometry's level holding the level's point `p`.
    pub fn key_of(&self, p: [usize; 3]) -> BlockKey {
        BlockKey {
            level: self.level,
            index: [0, 1, 2].map(|a| (p[a] / self.block[a]) as u32),
        }
    }

    /// Every block of this geometry's level, x fastest.
    pub fn all_keys(&self) -> impl Iterator<Item = BlockKey> {
        let b = self.blocks;
        let level = self.level;
        (0..b[2]).flat_map(move |k| {
            (0..b[1]).flat_map(move |j| {
                (0..b[0]).map(move |i| BlockKey {
                    level,
                    index: [i as u32, j as u32, k as u32],
                })
            })
        })
    }

    /// Checks that `key` names a block of the domain at a level this grid has.
    pub fn check_key(&self, key: BlockKey) -> Result<(), Error> {
        if key.level >= self.levels {
            return Err(Error::InvalidField(format!(
                "block {key:?} is of level {}: this grid has {} level(s), 0 to {}",
                key.level,
                self.levels,
                self.levels - 1
            )));
        }
        let g = self.at_level(key.level);
        for a in 0..3 {
            if key.index[a] as usize >= g.blocks[a] {
                return Err(Error::InvalidField(format!(
                    "block {key:?} lies outside level {}'s domain of {:?} points in blocks of {:?} ({:?} blocks per axis)",
                    key.level,
                    &g.domain[..g.dims],
                    &g.block[..g.dims],
                    &g.blocks[..g.dims]
                )));
            }
        }
        Ok(())
    }
}
