//! [`RankLayout`]: what one rank holds of a partitioned block grid.

use crate::{Ranks, RanksError};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use stencil_runtime::blocks::Geometry;
use stencil_runtime::{BlockField, BlockGrid, BlockKey, BlockList, Error, Real};

/// One rank's part of a block grid whose present blocks are dealt to ranks: the blocks it
/// owns, the *ghosts* (other ranks' blocks next to its own, diagonals included, whose
/// values its halos read) and which of its blocks other ranks hold as ghosts.
///
/// The rank's [`BlockGrid`] holds its own blocks and the ghosts ([`RankLayout::local_keys`]);
/// kernels run over its own blocks ([`RankLayout::owned_list`]). Before a halo exchange,
/// [`RankLayout::fill_ghosts`] copies from the ghosts' owners the points its halos read
/// (strips as wide as the halo along the shared sides and corners); the exchange then
/// fills every halo of the rank's own blocks as one rank holding every block would. Halos
/// must be narrower than blocks (a halo reads the next block only).
#[derive(Clone, Debug)]
pub struct RankLayout {
    rank: usize,
    owned: Vec<BlockKey>,
    /// Ghost blocks by owner, in key order, each with the elements of its slot that this
    /// rank's halos read.
    ghosts: BTreeMap<usize, Vec<(BlockKey, Vec<usize>)>>,
    /// Own blocks other ranks hold as ghosts, by rank, in key order, each with the
    /// elements that rank's halos read.
    sends: BTreeMap<usize, Vec<(BlockKey, Vec<usize>)>>,
    /// Own blocks next to a ghost (whose halos read one), in key order.
    outer: Vec<BlockKey>,
    /// Per own block next to a ghost, the directions (-1, 0 or 1 per axis) in which its
    /// ghosts lie ([`RankLayout::overlap_regions`]).
    toward_ghosts: BTreeMap<BlockKey, BTreeSet<[i8; 3]>>,
}

impl RankLayout {
    /// Rank `rank`'s part when the present blocks `keys` belong to `owners` (one rank per
    /// key, e.g. from [`crate::partition`]), on a grid of `geometry` with no periodic axis.
    pub fn new(
        geometry: &Geometry,
        keys: &[BlockKey],
        owners: &[usize],
        rank: usize,
    ) -> RankLayout {
        RankLayout::with_periodic(geometry, keys, owners, rank, [false; 3])
    }

    /// [`RankLayout::new`] on a grid whose axes marked in `periodic` wrap around: a block
    /// at one end neighbours the block at the other.
    pub fn with_periodic(
        geometry: &Geometry,
        keys: &[BlockKey],
        owners: &[usize],
        rank: usize,
        periodic: [bool; 3],
    ) -> RankLayout {
        let owner: HashMap<BlockKey, usize> =
            keys.iter().copied().zip(owners.iter().copied()).collect();
        let mut owned: Vec<BlockKey> = keys
            .iter()
            .zip(owners)
            .filter(|&(_, &o)| o == rank)
            .map(|(&k, _)| k)
            .collect();
        owned.sort();
        // (block, reader's rank) -> the reader's blocks next to it.
        let mut ghosts: BTreeMap<usize, BTreeMap<BlockKey, Vec<BlockKey>>> = BTreeMap::new();
        let mut sends: BTreeMap<usize, BTreeMap<BlockKey, Vec<BlockKey>>> = BTreeMap::new();
        let mut toward_ghosts: BTreeMap<BlockKey, BTreeSet<[i8; 3]>> = BTreeMap::new();
        for &k in &owned {
            for n in neighbours(geometry, k, periodic) {
                match owner.get(&n) {
                    Some(&o) if o != rank => {
                        ghosts.entry(o).or_default().entry(n).or_default().push(k);
                        sends.entry(o).or_default().entry(k).or_default().push(n);
                        toward_ghosts
                            .entry(k)
                            .or_default()
                            .extend(crate::overlap::directions(geometry, k, n, periodic));
                    }
                    _ => {}
                }
            }
        }
        let outer: Vec<BlockKey> = {
            let readers: BTreeSet<BlockKey> = ghosts
                .values()
                .flat_map(|blocks| blocks.values().flatten().copied())
                .collect();
            readers.into_iter().collect()
        };
        let read = |m: BTreeMap<usize, BTreeMap<BlockKey, Vec<BlockKey>>>| {
            m.into_iter()
                .map(|(r, blocks)| {
                    let list = blocks
                        .into_iter()
                        .map(|(b, readers)| (b, read_elements(geometry, b, &readers, periodic)))
                        .collect();
                    (r, list)
                })
                .collect()
        };
        RankLayout {
            rank,
            owned,
            ghosts: read(ghosts),
            sends: read(sends),
            outer,
            toward_ghosts,
        }
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The blocks this rank owns, in key order.
    pub fn owned(&self) -> &[BlockKey] {
        &self.owned
    }

    /// The blocks this rank owns whose halos read no ghost, in key order: work on them
    /// may run while the ghosts travel ([`crate::GhostExchange::start`]).
    pub fn inner(&self) -> Vec<BlockKey> {
        let outer: BTreeSet<BlockKey> = self.outer.iter().copied().collect();
        self.owned
            .iter()
            .copied()
            .filter(|k| !outer.contains(k))
            .collect()
    }

    /// The blocks this rank owns whose halos read a ghost, in key order: work on them
    /// waits for the ghosts ([`crate::GhostExchange::finish`]).
    pub fn outer(&self) -> &[BlockKey] {
        &self.outer
    }

    /// The directions in which the ghosts next to own block `key` lie (-1, 0 or 1 per
    /// axis; none for a block next to no ghost).
    pub(crate) fn toward_ghosts(&self, key: BlockKey) -> impl Iterator<Item = [i8; 3]> + '_ {
        self.toward_ghosts.get(&key).into_iter().flatten().copied()
    }

    /// Every ghost block, in key order per owner, with its owner.
    pub fn ghosts(&self) -> impl Iterator<Item = (BlockKey, usize)> + '_ {
        self.ghosts
            .iter()
            .flat_map(|(&r, list)| list.iter().map(move |(k, _)| (*k, r)))
    }

    /// The ranks this rank exchanges ghosts with.
    pub fn neighbour_ranks(&self) -> Vec<usize> {
        let all: BTreeSet<usize> = self
            .ghosts
            .keys()
            .chain(self.sends.keys())
            .copied()
            .collect();
        all.into_iter().collect()
    }

    /// Values one field sends per exchange (the receivers' strips).
    pub fn values_sent(&self) -> usize {
        self.sends
            .values()
            .flat_map(|list| list.iter().map(|(_, e)| e.len()))
            .sum()
    }

    /// What the rank's grid holds: its own blocks and the ghosts.
    pub fn local_keys(&self) -> Vec<BlockKey> {
        let mut keys = self.owned.clone();
        keys.extend(self.ghosts().map(|(k, _)| k));
        keys
    }

    /// The list kernels run over on this rank: its own blocks of `grid`.
    pub fn owned_list(&self, grid: &BlockGrid) -> Result<BlockList, Error> {
        BlockList::new(grid, &self.owned)
    }

    /// Copies into the ghost blocks of `fields` (all on this rank's `grid`) the points
    /// this rank's halos read, from their owners, and sends the points of this rank's
    /// blocks that other ranks' halos read: one message each way per neighbouring rank
    /// (per field on devices). It plans the exchange each time: a solver that fills
    /// ghosts every step keeps a [`RankLayout::ghost_exchange`] instead.
    pub fn fill_ghosts<T: Real>(
        &self,
        ranks: &Ranks,
        grid: &BlockGrid,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), LayoutError> {
        self.ghost_exchange(ranks, grid, fields.len())?
            .run(ranks, grid, fields)
    }

    /// Per neighbouring rank that holds ghosts of this rank's blocks, in rank order:
    /// those blocks and the elements its halos read.
    pub(crate) fn send_lists(
        &self,
    ) -> impl Iterator<Item = (usize, Vec<(BlockKey, Vec<usize>)>)> + '_ {
        self.sends.iter().map(|(&r, list)| (r, list.clone()))
    }

    /// Per neighbouring rank whose blocks this rank holds as ghosts, in rank order: those
    /// blocks and the elements this rank's halos read.
    pub(crate) fn ghost_lists(
        &self,
    ) -> impl Iterator<Item = (usize, Vec<(BlockKey, Vec<usize>)>)> + '_ {
        self.ghosts.iter().map(|(&r, list)| (r, list.clone()))
    }
}

/// The elements of block `block`'s slot that the halos of `readers` (blocks next to it)
/// read: its points within the halo's width of a reader's points (or of their images
/// across a periodic axis), in slot order.
fn read_elements(
    geometry: &Geometry,
    block: BlockKey,
    readers: &[BlockKey],
    periodic: [bool; 3],
) -> Vec<usize> {
    let g = geometry;
    let extent = |a: usize| if a < g.dims { g.block[a] } else { 1 };
    let origin = g.origin(block);
    // Each reader's origin, and its images one domain away along periodic axes.
    let shifts = |a: usize| -> Vec<i64> {
        if a < g.dims && periodic[a] {
            vec![-(g.domain[a] as i64), 0, g.domain[a] as i64]
        } else {
            vec![0]
        }
    };
    // Each reader's points (clipped to the domain) as a box, at every image.
    let mut boxes: Vec<([i64; 3], [i64; 3])> = Vec::new();
    for &r in readers {
        let o = g.origin(r).map(|v| v as i64);
        let end: [i64; 3] =
            [0, 1, 2].map(|a| (o[a] + g.block[a] as i64).min(g.domain[a].max(1) as i64));
        for dz in shifts(2) {
            for dy in shifts(1) {
                for dx in shifts(0) {
                    let s = [dx, dy, dz];
                    boxes.push((
                        [0, 1, 2].map(|a| o[a] + s[a]),
                        [0, 1, 2].map(|a| end[a] + s[a]),
                    ));
                }
            }
        }
    }
    let h = g.halo as i64;
    let mut out = Vec::new();
    for z in 0..extent(2) {
        for y in 0..extent(1) {
            for x in 0..extent(0) {
                let p = [origin[0] + x, origin[1] + y, origin[2] + z];
                if (0..g.dims).any(|a| p[a] >= g.domain[a]) {
                    // Past the domain's end: no such point.
                    continue;
                }
                let p = p.map(|v| v as i64);
                let read = boxes
                    .iter()
                    .any(|(lo, hi)| (0..g.dims).all(|a| p[a] + h >= lo[a] && p[a] < hi[a] + h));
                if read {
                    out.push(g.element([x as isize, y as isize, z as isize]));
                }
            }
        }
    }
    out
}

/// What went wrong filling ghosts.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// A message held fewer values than the layout expects.
    #[error("a ghost message is short: the ranks' layouts differ")]
    ShortMessage,
    /// From the runtime.
    #[error(transparent)]
    Runtime(#[from] Error),
    /// From the ranks.
    #[error(transparent)]
    Ranks(#[from] RanksError),
}

/// The blocks whose points lie within the halo's width of `key`'s points (sides and
/// corners, and across the ends of periodic axes: where the domain is not a whole number
/// of blocks the wrap can reach past the next block), not `key` itself. Blocks are
/// clipped to the domain, so the relation is symmetric: `b` is `a`'s neighbour exactly
/// when `a` is `b`'s, as the ghost messages need.
fn neighbours(geometry: &Geometry, key: BlockKey, periodic: [bool; 3]) -> Vec<BlockKey> {
    let g = geometry;
    let near = |a: usize| -> Vec<u32> {
        if a >= g.dims {
            return vec![key.index[a]];
        }
        let (d, b, h) = (g.domain[a] as i64, g.block[a] as i64, g.halo as i64);
        let o = key.index[a] as i64 * b;
        let end = (o + b).min(d);
        let mut set = BTreeSet::new();
        for x in (o - h)..(end + h) {
            let x = if periodic[a] {
                x.rem_euclid(d)
            } else if (0..d).contains(&x) {
                x
            } else {
                continue;
            };
            set.insert((x / b) as u32);
        }
        set.into_iter().collect()
    };
    let (xs, ys, zs) = (near(0), near(1), near(2));
    let mut out = Vec::new();
    for &z in &zs {
        for &y in &ys {
            for &x in &xs {
                let n = BlockKey {
                    level: key.level,
                    index: [x, y, z],
                };
                if n != key {
                    out.push(n);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_blocks_read_no_ghost_and_outer_blocks_do() {
        let g = Geometry::new(&[200, 130], &[32, 16], 2).expect("a geometry");
        let keys: Vec<BlockKey> = g.all_keys().collect();
        let owners = crate::partition(&keys, &vec![1.0; keys.len()], 3);
        let owner: HashMap<BlockKey, usize> = keys.iter().copied().zip(owners.clone()).collect();
        for rank in 0..3 {
            let layout = RankLayout::new(&g, &keys, &owners, rank);
            let (inner, outer) = (layout.inner(), layout.outer().to_vec());
            let mut both: Vec<BlockKey> = inner.iter().chain(&outer).copied().collect();
            both.sort();
            assert_eq!(
                both,
                layout.owned(),
                "rank {rank}: the parts are its blocks"
            );
            assert!(!inner.is_empty() && !outer.is_empty(), "rank {rank}");
            let elsewhere = |k: BlockKey| {
                neighbours(&g, k, [false; 3])
                    .into_iter()
                    .any(|n| owner[&n] != rank)
            };
            assert!(inner.iter().all(|&k| !elsewhere(k)), "rank {rank}: inner");
            assert!(outer.iter().all(|&k| elsewhere(k)), "rank {rank}: outer");
        }
    }

    #[test]
    fn neighbours_are_mutual_and_reach_past_a_thin_last_block() {
        // 97 cells in blocks of 32 with a halo of 2: the last block holds one cell, so a
        // periodic wrap from block 0 reaches block 2 as well as block 3.
        for (dims, periodic) in [
            (vec![97, 64], [true, false, false]),
            (vec![97, 64], [false, false, false]),
            (vec![40, 36, 30], [true, true, true]),
        ] {
            let block: Vec<usize> = if dims.len() == 2 {
                vec![32, 32]
            } else {
                vec![16, 8, 8]
            };
            let g = Geometry::new(&dims, &block, 2).expect("a geometry");
            let keys: Vec<BlockKey> = g.all_keys().collect();
            for &a in &keys {
                for b in neighbours(&g, a, periodic) {
                    assert!(
                        neighbours(&g, b, periodic).contains(&a),
                        "{a:?} -> {b:?} but not back ({dims:?}, {periodic:?})"
                    );
                }
            }
        }
        let g = Geometry::new(&[97, 64], &[32, 32], 2).expect("a geometry");
        let wrapped = neighbours(&g, BlockKey::new([0, 0, 0]), [true, false, false]);
        assert!(wrapped.contains(&BlockKey::new([2, 0, 0])), "{wrapped:?}");
        let plain = neighbours(&g, BlockKey::new([0, 0, 0]), [false; 3]);
        assert_eq!(plain.len(), 3, "{plain:?}");
    }
}
