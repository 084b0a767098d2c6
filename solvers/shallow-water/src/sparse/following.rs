//! A sparse run over ranks that follows the water: the present blocks are those a run on
//! one rank would hold (the same choice, made on every rank from every rank's block
//! flags), dealt to the ranks along the Morton curve by the cells they compute. Each
//! change of the present blocks deals them anew, so the ranks stay balanced as the wet
//! area moves: a block that changes owner travels to its new owner (its state and its
//! flood extent), blocks added are dry, and the ghost fills and the inner and outer parts
//! are planned again for the new layout.
//!
//! The choice is the single-rank run's ([`super::regrid`]): the ranks' flags of their own
//! blocks are all-reduced into the flags of every present block, and the same
//! [`wanted_map`] gives the same blocks. The run therefore equals the run on one rank, and
//! so the dense run, bit for bit (`sw-ranks-check`, `src/programs/ranks_check.rs`, under mpirun).

use super::layout::{exchanges, wanted_map};
use super::ranked::Distribution;
use super::SparseShallowWater;
use crate::FloodError;
use std::collections::{HashMap, HashSet};
use stencil_ranks::{partition, Op, RankLayout, Ranks};
use stencil_runtime::blocks::{BlockFlags, BlockKey, Geometry};
use stencil_runtime::{BlockField, BlockList, Real};

/// A rank's moves in a new deal: the values it sends, by rank, and the blocks it takes
/// over, with their old owners.
type Moves = (HashMap<usize, Vec<f64>>, Vec<(usize, BlockKey)>);

/// The state fields a block takes along to a new owner (surface, discharges, velocities),
/// before its flood extent's two.
const STATE_FIELDS: usize = 5;

/// The larger of two depths.
fn deepest<T: Real>(a: T, b: T) -> T {
    if b > a {
        b
    } else {
        a
    }
}

/// The earlier of two arrival times, a negative one meaning never.
fn earliest<T: Real>(a: T, b: T) -> T {
    match (a < T::zero(), b < T::zero()) {
        (true, _) => b,
        (_, true) => a,
        _ if b < a => b,
        _ => a,
    }
}

/// The present blocks of all the ranks and their owners: what a following run deals.
#[derive(Clone, Debug, Default)]
pub(super) struct Dealt {
    /// The present blocks, in key order (x first, as the single-rank choice walks them).
    pub present: Vec<BlockKey>,
    /// The rank of each of `present`.
    pub owners: Vec<usize>,
}

impl Dealt {
    /// `present` (in any order) dealt to the ranks of `ranks` along the Morton curve by
    /// the cells of the domain each block holds.
    pub fn new(geometry: &Geometry, mut present: Vec<BlockKey>, ranks: &Ranks) -> Dealt {
        present.sort();
        present.dedup();
        let weights: Vec<f64> = present
            .iter()
            .map(|&k| {
                let o = geometry.origin(k);
                (0..geometry.dims)
                    .map(|a| geometry.block[a].min(geometry.domain[a] - o[a]) as f64)
                    .product()
            })
            .collect();
        let owners = partition(&present, &weights, ranks.size());
        Dealt { present, owners }
    }

    /// This rank's layout of these blocks on `geometry` (periodic along the axes of
    /// `periodic`).
    pub fn layout(&self, geometry: &Geometry, rank: usize, periodic: [bool; 3]) -> RankLayout {
        RankLayout::with_periodic(geometry, &self.present, &self.owners, rank, periodic)
    }

    /// The owner of block `key`, if present.
    fn owner(&self, key: BlockKey) -> Option<usize> {
        self.present
            .binary_search(&key)
            .ok()
            .map(|i| self.owners[i])
    }
}

impl<T: Real> Distribution<T> {
    /// The flags of every present block (in [`Dealt::present`]'s order) from each rank's
    /// flags of its own blocks `owned` (`flags` in their order): one all-reduce.
    pub fn all_flags(&self, owned: &[BlockKey], flags: &[BlockFlags]) -> Vec<BlockFlags> {
        let dealt = self.dealt();
        let mut words = vec![0.0; dealt.present.len()];
        for (k, f) in owned.iter().zip(flags) {
            if let Ok(i) = dealt.present.binary_search(k) {
                words[i] = f.bits() as f64;
            }
        }
        // One owner per block: the sum is its flags, exactly (below 2^32).
        self.ranks().all_reduce(&mut words, Op::Sum);
        words
            .into_iter()
            .map(|w| BlockFlags::from_bits(w as u32))
            .collect()
    }

    /// Every rank's flood extent (per cell the largest depth and the arrival time, -1 for
    /// never) made the whole run's, on every rank: the largest of the depths and the
    /// earliest of the arrivals. A rank holds a block's history from the time it held it
    /// (a block that changes owner takes its extent along, a block freed leaves it with
    /// the rank that freed it), and what it holds of the time after is no more than the
    /// truth: so the run's extent, the one-rank run's to the bit. Collective.
    pub fn combine_extents(&self, deepest: &mut [f64], arrival: &mut [f64]) {
        self.ranks().all_reduce(deepest, Op::Max);
        for a in arrival.iter_mut().filter(|a| **a < 0.0) {
            *a = f64::INFINITY;
        }
        self.ranks().all_reduce(arrival, Op::Min);
        for a in arrival.iter_mut().filter(|a| a.is_infinite()) {
            *a = -1.0;
        }
    }
}

impl<T: Real> SparseShallowWater<T> {
    /// The present blocks (all ranks') and their flags, for the choice of the blocks
    /// wanted next: this rank's own blocks and `flags` on one rank, every rank's over
    /// several (collective).
    pub(super) fn listed_flags(&self, flags: Vec<BlockFlags>) -> (Vec<BlockKey>, Vec<BlockFlags>) {
        match &self.distribution {
            Some(d) => {
                let all = d.all_flags(self.list.keys(), &flags);
                (d.dealt().present.clone(), all)
            }
            None => (self.list.keys().to_vec(), flags),
        }
    }

    /// The blocks to add and to free after a measure: every rank's flags read as one
    /// run's (see the module's text). The blocks wanted are [`wanted_map`]'s.
    pub(super) fn chosen_change(&self, flags: Vec<BlockFlags>) -> (Vec<BlockKey>, Vec<BlockKey>) {
        let (listed, flags) = self.listed_flags(flags);
        let wanted = wanted_map(&self.blocks, &listed, &flags, &self.boundaries);
        let index = |k: &BlockKey| super::layout::map_index(&self.blocks, *k);
        let mut present = vec![false; wanted.len()];
        for k in &listed {
            present[index(k)] = true;
        }
        let remove = listed
            .iter()
            .filter(|k| !wanted[index(k)])
            .copied()
            .collect();
        let ny = self.blocks.geometry().blocks[1];
        let add = (0..wanted.len())
            .filter(|&k| wanted[k] && !present[k])
            .map(|k| BlockKey::new([(k / ny) as u32, (k % ny) as u32, 0]))
            .collect();
        (add, remove)
    }

    /// Over ranks, the present blocks change by `add` and `remove` (the same on every
    /// rank) and are dealt anew: blocks that change owner travel to their new owner, the
    /// local grid (own blocks and ghosts) follows, and the ghost fills and parts are
    /// planned again. Collective.
    pub(super) fn regrid_over_ranks(
        &mut self,
        add: Vec<BlockKey>,
        remove: Vec<BlockKey>,
    ) -> Result<(), FloodError> {
        let d = self.distribution.as_ref().expect("a run over ranks");
        let (rank, ranks) = (d.ranks().rank(), d.ranks().clone());
        let geometry = *self.blocks.geometry();
        let old = d.dealt().clone();
        let removed: HashSet<BlockKey> = remove.into_iter().collect();
        let present = old
            .present
            .iter()
            .filter(|k| !removed.contains(k))
            .copied()
            .chain(add)
            .collect();
        let new = Dealt::new(&geometry, present, &ranks);
        let layout = new.layout(&geometry, rank, self.periodic());

        // Every rank's local part first: a rank that fails there fails every rank, before
        // any waits for a message.
        let prepared = self.prepare_moves(&old, &new, &layout, rank);
        if !ranks.all(prepared.is_ok()) {
            let elsewhere = stencil_ranks::RanksError::FailedElsewhere {
                during: "the blocks were dealt anew",
            };
            return Err(prepared
                .err()
                .unwrap_or(stencil_ranks::LayoutError::from(elsewhere).into()));
        }
        let (sends, receives) = prepared?;

        // The blocks this rank takes over, from their old owners, in key order per rank.
        let per_slot = geometry.slot_len();
        let fields = self.travelling().len();
        let mut from: Vec<usize> = receives.iter().map(|&(r, _)| r).collect();
        from.sort();
        from.dedup();
        let wanted: Vec<(usize, usize)> = from
            .iter()
            .map(|&r| {
                let blocks = receives.iter().filter(|&&(o, _)| o == r).count();
                (r, blocks * fields * per_slot)
            })
            .collect();
        let mut outgoing: Vec<(usize, Vec<f64>)> = sends.into_iter().collect();
        outgoing.sort_by_key(|(r, _)| *r);
        let arrived = ranks
            .exchange(&outgoing, &wanted)
            .map_err(stencil_ranks::LayoutError::from)?;
        let blocks = &self.blocks;
        let mut fields: Vec<&mut BlockField<T>> = self.progress.now.iter_mut().collect();
        if let Some(extent) = &mut self.extent {
            fields.extend(extent.fields_mut());
        }
        for (&r, values) in from.iter().zip(&arrived) {
            let mut chunks = values.chunks(per_slot);
            for &(_, key) in receives.iter().filter(|&&(o, _)| o == r) {
                for (k, f) in fields.iter_mut().enumerate() {
                    let slot = chunks
                        .next()
                        .ok_or(stencil_ranks::LayoutError::ShortMessage)?;
                    let mut values: Vec<T> = slot.iter().map(|&v| T::from_f64(v)).collect();
                    // The extent's history on this rank from before (a block it freed and
                    // now takes back, restored by `follow`) joins the one that came.
                    if k >= STATE_FIELDS {
                        let here = f.slot_values(blocks, key)?.unwrap_or_default();
                        for (v, h) in values.iter_mut().zip(here) {
                            *v = if k == STATE_FIELDS {
                                deepest(*v, h)
                            } else {
                                earliest(*v, h)
                            };
                        }
                    }
                    f.set_slot_values(blocks, key, &values)?;
                }
            }
        }

        let moved = receives.len();
        let d = self.distribution.as_mut().expect("a run over ranks");
        d.relayout(new, layout);
        d.split(&self.blocks, &self.boundaries)?;
        d.blocks_moved += moved;
        self.list = d.layout.owned_list(&self.blocks)?;
        self.exchanges = exchanges(&self.blocks, &self.boundaries, None)?;
        Ok(())
    }

    /// This rank's part of a new deal before any message: the values of its blocks that
    /// go to other ranks (by rank), the blocks it takes over (old owner, key), and its
    /// local grid moved to `layout` (blocks leaving it hand their flood extent to the
    /// host).
    fn prepare_moves(
        &mut self,
        old: &Dealt,
        new: &Dealt,
        layout: &RankLayout,
        rank: usize,
    ) -> Result<Moves, FloodError> {
        // What leaves this rank's own blocks for another's, and what comes in.
        let mut sends: HashMap<usize, Vec<f64>> = HashMap::new();
        let mut receives: Vec<(usize, BlockKey)> = Vec::new();
        for (&key, &owner) in new.present.iter().zip(&new.owners) {
            match old.owner(key) {
                Some(was) if was == rank && owner != rank => {
                    let message = sends.entry(owner).or_default();
                    for f in self.travelling() {
                        let values = f.slot_values(&self.blocks, key)?.unwrap_or_default();
                        message.extend(values.iter().map(|v| v.as_f64()));
                    }
                }
                Some(was) if was != rank && owner == rank => receives.push((was, key)),
                _ => {}
            }
        }

        // The local grid follows: blocks leaving it hand their flood extent to the host.
        let local_keys = layout.local_keys();
        let local: HashSet<BlockKey> = local_keys.iter().copied().collect();
        let before = BlockList::present(&self.blocks)?;
        let leave: Vec<BlockKey> = before
            .keys()
            .iter()
            .filter(|k| !local.contains(k))
            .copied()
            .collect();
        let enter: Vec<BlockKey> = local_keys
            .into_iter()
            .filter(|&k| !self.blocks.contains(k))
            .collect();
        if let Some(extent) = &mut self.extent {
            extent.retire(&self.blocks, &before, &leave)?;
        }
        let change = self.blocks.update(&enter, &leave)?;
        self.follow(&change)?;
        if let Some(extent) = &mut self.extent {
            extent.follow(&self.blocks, &change)?;
        }

        Ok((sends, receives))
    }

    /// The fields a block takes with it to a new owner: the present state (the stage and
    /// the fluxes are made anew each step; the bed and the dry surface come from the
    /// terrain) and the flood's extent.
    fn travelling(&self) -> Vec<&BlockField<T>> {
        let mut fields: Vec<&BlockField<T>> = self.progress.now.iter().collect();
        if let Some(extent) = &self.extent {
            fields.extend(extent.fields());
        }
        fields
    }

    /// The blocks this rank has taken over from other ranks so far, as the present blocks
    /// were dealt anew (0 on one rank or with every block present).
    pub fn blocks_taken_over(&self) -> usize {
        self.distribution.as_ref().map_or(0, |d| d.blocks_moved)
    }

    /// The size of the blocks (cells along x and y).
    pub fn block_size(&self) -> [usize; 2] {
        let b = self.blocks.geometry().block;
        [b[0], b[1]]
    }

    /// Whether the domain is periodic along each axis.
    pub(super) fn periodic(&self) -> [bool; 3] {
        let b = &self.boundaries;
        [b.periodic(0), b.periodic(1), false]
    }
}

#[cfg(test)]
mod tests {
    use super::{deepest, earliest};

    #[test]
    fn a_merged_extent_keeps_the_largest_depth_and_the_earliest_arrival() {
        assert_eq!(deepest(0.5f64, 2.0), 2.0);
        assert_eq!(deepest(3.0f64, 2.0), 3.0);
        // Negative: never arrived.
        assert_eq!(earliest(-1.0f64, 7.0), 7.0);
        assert_eq!(earliest(4.0f64, -1.0), 4.0);
        assert_eq!(earliest(4.0f64, 7.0), 4.0);
        assert_eq!(earliest(9.0f64, 7.0), 7.0);
        assert_eq!(earliest(-1.0f64, -1.0), -1.0);
    }
}
