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
/// [`RankLayout::fill_ghosts`] copies the ghosts' values from their owners; the exchange
/// then fills every halo of the rank's own blocks as one rank holding every block would.
/// Halos must be narrower than blocks (a halo reads the next block only).
#[derive(Clone, Debug)]
pub struct RankLayout {
    rank: usize,
    owned: Vec<BlockKey>,
    /// Ghost blocks by owner, in key order.
    ghosts: BTreeMap<usize, Vec<BlockKey>>,
    /// Own blocks other ranks hold as ghosts, by rank, in key order.
    sends: BTreeMap<usize, Vec<BlockKey>>,
}

impl RankLayout {
    /// Rank `rank`'s part when the present blocks `keys` belong to `owners` (one rank per
    /// key, e.g. from [`crate::partition`]), on a grid of `geometry`.
    pub fn new(
        geometry: &Geometry,
        keys: &[BlockKey],
        owners: &[usize],
        rank: usize,
    ) -> RankLayout {
        let owner: HashMap<BlockKey, usize> =
            keys.iter().copied().zip(owners.iter().copied()).collect();
        let owned: Vec<BlockKey> = {
            let mut v: Vec<BlockKey> = keys
                .iter()
                .zip(owners)
                .filter(|&(_, &o)| o == rank)
                .map(|(&k, _)| k)
                .collect();
            v.sort();
            v
        };
        let mut ghosts: BTreeMap<usize, BTreeSet<BlockKey>> = BTreeMap::new();
        let mut sends: BTreeMap<usize, BTreeSet<BlockKey>> = BTreeMap::new();
        for &k in &owned {
            for n in neighbours(geometry, k) {
                match owner.get(&n) {
                    Some(&o) if o != rank => {
                        ghosts.entry(o).or_default().insert(n);
                        sends.entry(o).or_default().insert(k);
                    }
                    _ => {}
                }
            }
        }
        let sorted = |m: BTreeMap<usize, BTreeSet<BlockKey>>| {
            m.into_iter()
                .map(|(r, s)| (r, s.into_iter().collect()))
                .collect()
        };
        RankLayout {
            rank,
            owned,
            ghosts: sorted(ghosts),
            sends: sorted(sends),
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

    /// Every ghost block, in key order per owner.
    pub fn ghosts(&self) -> impl Iterator<Item = (BlockKey, usize)> + '_ {
        self.ghosts
            .iter()
            .flat_map(|(&r, keys)| keys.iter().map(move |&k| (k, r)))
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

    /// Copies the values of every ghost block of `fields` (all on this rank's `grid`)
    /// from its owner, and sends this rank's blocks to the ranks that hold them as ghosts:
    /// one message each way per neighbouring rank, every field's whole slots in it.
    pub fn fill_ghosts<T: Real>(
        &self,
        ranks: &Ranks,
        grid: &BlockGrid,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), LayoutError> {
        let slot = grid.geometry().slot_len();
        let mut sends = Vec::new();
        for (&to, keys) in &self.sends {
            let mut message = Vec::with_capacity(keys.len() * fields.len() * slot);
            for &k in keys {
                for f in fields.iter() {
                    let values = f.slot_values(grid, k)?.ok_or(LayoutError::Missing(k))?;
                    message.extend(values.iter().map(|v| v.as_f64()));
                }
            }
            sends.push((to, message));
        }
        let receives: Vec<(usize, usize)> = self
            .ghosts
            .iter()
            .map(|(&from, keys)| (from, keys.len() * fields.len() * slot))
            .collect();
        let received = ranks.exchange(&sends, &receives)?;
        for ((_, keys), message) in self.ghosts.iter().zip(received) {
            let mut parts = message.chunks_exact(slot);
            for &k in keys {
                for f in fields.iter_mut() {
                    let part = parts.next().ok_or(LayoutError::Short(k))?;
                    let values: Vec<T> = part.iter().map(|&v| T::from_f64(v)).collect();
                    f.set_slot_values(grid, k, &values)?;
                }
            }
        }
        Ok(())
    }
}

/// What went wrong filling ghosts.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// A block of the layout is not on the rank's grid.
    #[error("block {0:?} of this rank's layout is not on its grid: add `RankLayout::local_keys` to the grid")]
    Missing(BlockKey),
    /// A message held fewer values than the layout expects.
    #[error("the message for ghost block {0:?} is short: the ranks' layouts differ")]
    Short(BlockKey),
    /// From the runtime.
    #[error(transparent)]
    Runtime(#[from] Error),
    /// From the ranks.
    #[error(transparent)]
    Ranks(#[from] RanksError),
}

/// The blocks next to `key` (sides and corners) inside the domain of `geometry`.
fn neighbours(geometry: &Geometry, key: BlockKey) -> Vec<BlockKey> {
    let dims = geometry.dims;
    let mut out = Vec::new();
    let range = |a: usize| if a < dims { -1i64..=1 } else { 0..=0 };
    for dz in range(2) {
        for dy in range(1) {
            for dx in range(0) {
                if (dx, dy, dz) == (0, 0, 0) {
                    continue;
                }
                let d = [dx, dy, dz];
                let index: Option<Vec<u32>> = (0..3)
                    .map(|a| {
                        let i = key.index[a] as i64 + d[a];
                        (i >= 0 && (i as usize) < geometry.blocks[a].max(1)).then_some(i as u32)
                    })
                    .collect();
                if let Some(i) = index {
                    out.push(BlockKey {
                        level: key.level,
                        index: [i[0], i[1], i[2]],
                    });
                }
            }
        }
    }
    out
}
