//! [`plan_adaptation`]: which blocks a tree of levels gains and loses, from what each
//! block's values say of it.
//!
//! The grid is a *tree*: level 0 is whole, and every present block of a finer level has
//! its parent present (the coarse copy, which restriction keeps consistent). A solver
//! measures each block ([`BlockMeasure`]: whether its details, the misses of the coarser
//! level's prediction, exceed the threshold eps, or a fraction of it) and this module
//! turns that into blocks to add and remove:
//!
//! 1. **Significant** blocks (some detail above eps) are kept, and so is the *safety
//!    zone* around them: their neighbours of the same level (added if absent) and their
//!    children one level finer (added, up to the finest level), so that the flow cannot
//!    outrun the grid before the next adaptation.
//! 2. **Balance**: for every present block of level `j >= 1`, the blocks of level
//!    `j - 1` next to its parent are present, so that a halo next to an absent
//!    neighbour can be predicted from the coarser level and neighbouring leaves differ by
//!    at most one level. Blocks are added (and their ancestors) until this holds.
//! 3. **Coarsening**: a family (the children of one block) is removed when none of its
//!    blocks is wanted by the rules above, neither they nor their parent have details
//!    above the coarsening fraction of eps, none has children, and removing it breaks no
//!    balance. One level goes per adaptation.

use super::geometry::Geometry;
use super::grid::BlockKey;
use std::collections::{BTreeSet, HashMap, HashSet};

/// What the values of one block say of it at an adaptation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockMeasure {
    /// Some detail of the block exceeds eps.
    pub significant: bool,
    /// Some detail exceeds the coarsening fraction of eps (the block is not to go).
    pub above_coarsening: bool,
}

/// The change an adaptation asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Adaptation {
    /// Blocks to add, coarser levels first (a block's parent before it).
    pub add: Vec<BlockKey>,
    /// Blocks to remove.
    pub remove: Vec<BlockKey>,
}

impl Adaptation {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty()
    }
}

/// Plans an adaptation of the tree `present` (keys of a grid of geometry `g`, level 0
/// whole) from the measures of its blocks (a block without one counts as neither
/// significant nor above the coarsening fraction).
pub fn plan_adaptation(
    g: &Geometry,
    present: &[BlockKey],
    measures: &HashMap<BlockKey, BlockMeasure>,
) -> Adaptation {
    let finest = g.levels - 1;
    let mut wanted: BTreeSet<BlockKey> = BTreeSet::new();
    for &key in present {
        let m = measures.get(&key).copied().unwrap_or_default();
        if key.level == 0 || m.significant {
            wanted.insert(key);
        }
        if m.significant {
            wanted.extend(neighbours(g, key));
            if key.level < finest {
                wanted.extend(key.children(g.dims).into_iter().filter(|c| inside(g, *c)));
            }
        }
    }
    // The blocks after additions: present ones, wanted ones, their ancestors, and what
    // balance asks of all of them.
    let mut after: HashSet<BlockKey> = present.iter().copied().collect();
    let mut work: Vec<BlockKey> = wanted.iter().copied().collect();
    work.extend(present.iter().copied());
    while let Some(key) = work.pop() {
        for need in requirements(g, key) {
            if after.insert(need) {
                work.push(need);
            }
        }
        if after.insert(key) {
            work.push(key);
        }
    }
    let present_set: HashSet<BlockKey> = present.iter().copied().collect();
    let mut add: Vec<BlockKey> = after.difference(&present_set).copied().collect();
    add.sort();
    // Coarsening: whole families of leaves that nothing wants.
    let mut remove = Vec::new();
    let mut families: BTreeSet<BlockKey> = BTreeSet::new();
    for &key in present.iter().filter(|k| k.level > 0) {
        if let Some(parent) = key.parent() {
            families.insert(parent);
        }
    }
    for parent in families {
        let family: Vec<BlockKey> = parent
            .children(g.dims)
            .into_iter()
            .filter(|c| after.contains(c))
            .collect();
        // A family this adaptation adds to stays (a key is never added and removed).
        if family.iter().any(|c| !present_set.contains(c)) {
            continue;
        }
        let removable = family.iter().all(|c| {
            let m = measures.get(c).copied().unwrap_or_default();
            !wanted.contains(c)
                && !m.above_coarsening
                && !c.children(g.dims).iter().any(|gc| after.contains(gc))
        });
        // The parent's details too: once its children go, the parent evolves alone, and
        // a parent whose (restricted) details are near eps would be refined again at
        // once; the margin down to the coarsening fraction keeps the grid from
        // oscillating.
        let parent_quiet = !measures
            .get(&parent)
            .copied()
            .unwrap_or_default()
            .above_coarsening;
        if !removable || !parent_quiet || family.is_empty() {
            continue;
        }
        let mut trial = after.clone();
        for c in &family {
            trial.remove(c);
        }
        // Removing the family must leave every remaining block's requirements present.
        let still_balanced = trial
            .iter()
            .filter(|k| k.level == parent.level + 1 || k.level == parent.level + 2)
            .all(|k| requirements(g, *k).iter().all(|r| trial.contains(r)));
        if still_balanced {
            after = trial;
            remove.extend(family);
        }
    }
    remove.sort();
    Adaptation { add, remove }
}

/// What block `key` needs present: its parent, the blocks of the parent's level next to
/// the parent, and its *slivers*: the neighbours above it along the axes that stick out
/// of the level's domain (on a vertex-centred level of `2^k + 1` points the last point
/// of each axis is a block of its own; a block is not complete without its wall).
fn requirements(g: &Geometry, key: BlockKey) -> Vec<BlockKey> {
    let mut out = match key.parent() {
        None => Vec::new(),
        Some(parent) => {
            let mut out = neighbours(g, parent);
            out.push(parent);
            out
        }
    };
    let lg = g.at_level(key.level);
    let sticks_out = |k: &BlockKey| {
        let o = lg.origin(*k);
        (0..g.dims).any(|a| o[a] + lg.block[a] > lg.domain[a])
    };
    out.extend(
        neighbours(g, key)
            .into_iter()
            .filter(|n| (0..g.dims).all(|a| n.index[a] >= key.index[a]) && sticks_out(n)),
    );
    out
}

/// The blocks of `key`'s level next to it (sides and corners) inside the level's domain.
pub fn neighbours(g: &Geometry, key: BlockKey) -> Vec<BlockKey> {
    let lg = g.at_level(key.level);
    let mut out = Vec::new();
    for dir in 0..g.directions() {
        let step = g.direction(dir);
        let mut index = key.index;
        let mut inside = true;
        for (a, x) in index.iter_mut().enumerate().take(g.dims) {
            let at = *x as i64 + step[a];
            inside &= (0..lg.blocks[a] as i64).contains(&at);
            *x = at as u32;
        }
        if inside && step != [0; 3] {
            out.push(BlockKey {
                level: key.level,
                index,
            });
        }
    }
    out
}

/// Whether `key` lies inside its level's domain.
fn inside(g: &Geometry, key: BlockKey) -> bool {
    g.check_key(key).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::Refinement;

    fn geometry() -> Geometry {
        Geometry::new(&[33, 33], &[8, 8], 3)
            .unwrap()
            .with_levels(4, Refinement::Vertex)
            .unwrap()
    }

    fn level0(g: &Geometry) -> Vec<BlockKey> {
        g.all_keys().collect()
    }

    /// Every present block's requirements are present, and every block's parent.
    fn balanced(g: &Geometry, keys: &HashSet<BlockKey>) -> bool {
        keys.iter()
            .all(|k| requirements(g, *k).iter().all(|r| keys.contains(r)))
    }

    /// The measure of a block whose details are significant.
    const LOUD: BlockMeasure = BlockMeasure {
        significant: true,
        above_coarsening: true,
    };

    fn apply(present: &[BlockKey], a: &Adaptation) -> Vec<BlockKey> {
        let mut s: BTreeSet<BlockKey> = present.iter().copied().collect();
        s.extend(a.add.iter().copied());
        for r in &a.remove {
            s.remove(r);
        }
        s.into_iter().collect()
    }

    #[test]
    fn a_significant_block_refines_with_its_safety_zone_and_balance() {
        let g = geometry();
        let present = level0(&g);
        let corner = BlockKey::at(0, [4, 4, 0]); // the one-point blocks past 32
        let hot = BlockKey::at(0, [2, 1, 0]);
        assert!(present.contains(&corner) && present.contains(&hot));
        let measures = HashMap::from([(hot, LOUD)]);
        let a = plan_adaptation(&g, &present, &measures);
        assert!(a.remove.is_empty());
        // The hot block's children are added; level 0 is whole, so its neighbours are
        // there already.
        for c in hot.children(2) {
            assert!(a.add.contains(&c), "{c:?} missing from {:?}", a.add);
        }
        assert_eq!(a.add.len(), 4);
        let after: HashSet<BlockKey> = apply(&present, &a).into_iter().collect();
        assert!(balanced(&g, &after));

        // A significant block of level 1 brings its level-1 neighbours and its children,
        // and balance brings the level-1 blocks around its parent.
        let present = apply(&present, &a);
        let fine = BlockKey::at(1, [4, 2, 0]);
        let measures = HashMap::from([(fine, LOUD)]);
        let b = plan_adaptation(&g, &present, &measures);
        let after: HashSet<BlockKey> = apply(&present, &b).into_iter().collect();
        assert!(balanced(&g, &after));
        for n in neighbours(&g, fine) {
            assert!(after.contains(&n), "safety zone: {n:?}");
        }
        for c in fine.children(2) {
            assert!(after.contains(&c), "child {c:?}");
        }
        // The rest of the hot block's family, not measured this time, is the fine
        // block's safety zone: it stays.
        assert!(b.remove.is_empty());
        assert!(after.contains(&BlockKey::at(1, [5, 3, 0])));
    }

    #[test]
    fn quiet_families_coarsen_one_level_at_a_time() {
        let g = geometry();
        let mut present = level0(&g);
        let hot = BlockKey::at(0, [1, 1, 0]);
        // Refine twice around the hot spot.
        for _ in 0..2 {
            let mut m = HashMap::new();
            for k in &present {
                if k.level < 2 && k.index[..2].iter().all(|&i| i >> k.level == 1) {
                    m.insert(*k, LOUD);
                }
            }
            let a = plan_adaptation(&g, &present, &m);
            present = apply(&present, &a);
            let set: HashSet<_> = present.iter().copied().collect();
            assert!(balanced(&g, &set));
        }
        assert!(present.iter().any(|k| k.level == 2));
        // Then all quiet: the finest families go first, the next level at the next call.
        let a = plan_adaptation(&g, &present, &HashMap::new());
        assert!(a.add.is_empty());
        assert!(!a.remove.is_empty());
        assert!(a.remove.iter().all(|k| k.level == 2), "{:?}", a.remove);
        present = apply(&present, &a);
        let set: HashSet<_> = present.iter().copied().collect();
        assert!(balanced(&g, &set));
        let b = plan_adaptation(&g, &present, &HashMap::new());
        assert!(b.remove.iter().all(|k| k.level == 1) && !b.remove.is_empty());
        present = apply(&present, &b);
        assert!(present.iter().all(|k| k.level == 0));
        assert_eq!(present.len(), level0(&g).len());
        // Level 0 stays whole.
        assert!(plan_adaptation(&g, &present, &HashMap::new()).is_empty());
        // A family with one block above the coarsening fraction stays.
        let m = HashMap::from([(hot, LOUD)]);
        present = apply(&present, &plan_adaptation(&g, &present, &m));
        let child = hot.children(2)[3];
        let quiet_but_above = BlockMeasure {
            significant: false,
            above_coarsening: true,
        };
        let m = HashMap::from([(child, quiet_but_above)]);
        let d = plan_adaptation(&g, &present, &m);
        assert!(d.remove.is_empty(), "{:?}", d.remove);
    }
}
