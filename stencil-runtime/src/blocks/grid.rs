//! [`BlockGrid`]: which blocks of a domain exist, and where each one's values lie.

use super::geometry::{Geometry, Refinement};
use crate::{Backend, Error};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// A block's name: its refinement level (0: the grid's own spacing) and its index along
/// each axis at that level (block `index` covers points `index * block` onwards).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockKey {
    /// The refinement level; each level halves the spacing.
    pub level: u8,
    /// The block's index along x, y, z (0 on unused axes).
    pub index: [u32; 3],
}

impl BlockKey {
    /// Block `index` of level 0.
    pub fn new(index: [u32; 3]) -> BlockKey {
        BlockKey { level: 0, index }
    }

    /// Block `index` of level `level`.
    pub fn at(level: u8, index: [u32; 3]) -> BlockKey {
        BlockKey { level, index }
    }

    /// The block of the next coarser level covering this one (`None` at level 0).
    pub fn parent(&self) -> Option<BlockKey> {
        let level = self.level.checked_sub(1)?;
        Some(BlockKey {
            level,
            index: self.index.map(|i| i / 2),
        })
    }

    /// The blocks of the next finer level covering this one (2, 4 or 8 for 1, 2 or 3
    /// axes), x fastest. Some may lie past the finer level's domain where the domain is
    /// not a whole number of blocks (see [`super::Geometry::check_key`]).
    pub fn children(&self, dims: usize) -> Vec<BlockKey> {
        let level = self.level + 1;
        (0..1usize << dims)
            .map(|c| BlockKey {
                level,
                index: [0, 1, 2].map(|a| {
                    let bit = if a < dims { ((c >> a) & 1) as u32 } else { 0 };
                    self.index[a] * 2 + bit
                }),
            })
            .collect()
    }
}

/// Who holds a block's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// This process, on the grid's backend.
    Here,
    /// Another rank of a distributed run (not stored here).
    Rank(u32),
}

/// One present block: its name and owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockInfo {
    /// The block's name.
    pub key: BlockKey,
    /// Who holds its values.
    pub owner: Owner,
}

/// How the slots of a grid changed in one [`BlockGrid::update`]: what every
/// [`super::BlockField`] of the grid must do to follow (see `BlockField::follow`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relayout {
    /// The grid's generation before the change.
    pub from: u64,
    /// The grid's generation after it.
    pub to: u64,
    /// The number of slots after the change.
    pub capacity: usize,
    /// Blocks kept, as (old slot, new slot); the same slot when a block stays put.
    pub kept: Vec<(usize, usize)>,
    /// The slots of blocks added by the change (their values are to be filled).
    pub added: Vec<usize>,
}

/// A domain tiled by blocks of fixed size, of which only the *present* ones hold values.
///
/// The grid is the layout: it names the present blocks and gives each a slot in the
/// arena of every [`super::BlockField`] on it (a field's values of the block in slot `s`
/// start at `s` times the slot length, halo included). Blocks are added and removed with
/// [`BlockGrid::update`]; fields follow the change with `BlockField::follow`. A
/// generation number tells a field made for an older layout from a current one.
#[derive(Debug)]
pub struct BlockGrid {
    id: u64,
    generation: u64,
    geometry: Geometry,
    backend: Backend,
    /// Slot -> the block in it (`None`: free).
    slots: Vec<Option<BlockInfo>>,
    /// Present block -> its slot (blocks of other owners have none).
    index: KeyMap<Option<usize>>,
    /// Blocks of other owners, in the order they were added.
    remote: Vec<BlockInfo>,
}

/// Grids get distinct ids so that a field of one cannot be launched with another.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl BlockGrid {
    /// An empty grid on `backend` over a domain of `domain` points (1 to 3 axes), tiled by
    /// blocks of `block` points (as many axes), each stored with `halo` points around it.
    pub fn new(
        backend: &Backend,
        domain: &[usize],
        block: &[usize],
        halo: usize,
    ) -> Result<BlockGrid, Error> {
        Ok(BlockGrid {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            generation: 0,
            geometry: Geometry::new(domain, block, halo)?,
            backend: backend.clone(),
            slots: Vec::new(),
            index: KeyMap::default(),
            remote: Vec::new(),
        })
    }

    /// This (empty) grid with `levels` levels nesting by `refinement`: blocks of level `j`
    /// have spacing `2^-j` of level 0's (see [`Geometry`]).
    pub fn with_levels(mut self, levels: u8, refinement: Refinement) -> Result<BlockGrid, Error> {
        if !self.index.is_empty() {
            return Err(Error::InvalidField(
                "the levels of a block grid are set before blocks are added".into(),
            ));
        }
        self.geometry = self.geometry.with_levels(levels, refinement)?;
        Ok(self)
    }

    /// The keys of level `level` present here, in slot order.
    pub fn level_keys(&self, level: u8) -> Vec<BlockKey> {
        self.blocks()
            .map(|(_, b)| b.key)
            .filter(|k| k.level == level)
            .collect()
    }

    /// A grid with every block of the domain present (a dense domain cut into blocks).
    pub fn full(
        backend: &Backend,
        domain: &[usize],
        block: &[usize],
        halo: usize,
    ) -> Result<BlockGrid, Error> {
        let mut grid = BlockGrid::new(backend, domain, block, halo)?;
        let all: Vec<BlockKey> = grid.geometry.all_keys().collect();
        grid.update(&all, &[])?;
        Ok(grid)
    }

    /// The grid's identity (distinct for every grid made in this process).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The layout's generation: it changes whenever blocks change slots.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Sizes: domain, block, halo and the slot layout.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The backend the grid's fields live on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The number of slots (present blocks plus free slots) a field of the grid holds.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The number of blocks present here.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether no block is present here.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether block `key` is present (here or with another owner).
    pub fn contains(&self, key: BlockKey) -> bool {
        self.index.contains_key(&key)
    }

    /// The slot of block `key`, if it is present here.
    pub fn slot(&self, key: BlockKey) -> Option<usize> {
        self.index.get(&key).copied().flatten()
    }

    /// The arena element (of any field of the grid) holding point `q` of level `level`,
    /// if the block holding it is present here (`q` inside the level's domain).
    pub fn element_of(&self, level: u8, q: [usize; 3]) -> Option<usize> {
        let g = self.geometry.at_level(level);
        let key = g.key_of(q);
        let slot = self.slot(key)?;
        let o = g.origin(key);
        Some(slot * g.slot_len() + g.element([0, 1, 2].map(|a| (q[a] - o[a]) as isize)))
    }

    /// The blocks present here, with their slots, in slot order.
    pub fn blocks(&self) -> impl Iterator<Item = (usize, BlockInfo)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(s, b)| b.map(|b| (s, b)))
    }

    /// The present keys here, sorted.
    pub fn keys(&self) -> Vec<BlockKey> {
        let mut keys: Vec<BlockKey> = self.blocks().map(|(_, b)| b.key).collect();
        keys.sort();
        keys
    }

    /// Blocks present with other owners.
    pub fn remote(&self) -> &[BlockInfo] {
        &self.remote
    }

    /// Adds the blocks `add` (owned here) and removes `remove`, then gives back free
    /// slots when fewer than half are in use. Keys already present (to add) or absent
    /// (to remove) are ignored. Returns how slots changed, for the fields to follow.
    pub fn update(&mut self, add: &[BlockKey], remove: &[BlockKey]) -> Result<Relayout, Error> {
        for &key in add.iter().chain(remove) {
            self.geometry.check_key(key)?;
        }
        let from = self.generation;
        let old_capacity = self.slots.len();
        let removed: HashSet<BlockKey> = remove.iter().copied().collect();
        for key in remove {
            if let Some(Some(slot)) = self.index.remove(key) {
                self.slots[slot] = None;
            }
        }
        self.remote.retain(|b| !removed.contains(&b.key));
        let mut added = Vec::new();
        let mut free = (0..self.slots.len()).filter(|&s| self.slots[s].is_none());
        let mut fresh = Vec::new();
        for &key in add {
            if self.index.contains_key(&key) {
                continue;
            }
            let slot = free.next().unwrap_or(old_capacity + fresh.len());
            if slot >= old_capacity {
                fresh.push(slot);
            }
            self.index.insert(key, Some(slot));
            added.push((slot, key));
        }
        drop(free);
        self.slots
            .resize(grown_capacity(old_capacity, fresh.len()), None);
        for &(slot, key) in &added {
            self.slots[slot] = Some(BlockInfo {
                key,
                owner: Owner::Here,
            });
        }
        let new_slots: HashSet<usize> = added.iter().map(|&(s, _)| s).collect();
        let mut kept: Vec<(usize, usize)> = (0..old_capacity)
            .filter(|&s| self.slots[s].is_some() && !new_slots.contains(&s))
            .map(|s| (s, s))
            .collect();
        let mut added: Vec<usize> = added.into_iter().map(|(s, _)| s).collect();
        self.compact(&mut kept, &mut added);
        let relayout = Relayout {
            from,
            to: from + 1,
            capacity: self.slots.len(),
            kept,
            added,
        };
        self.generation += 1;
        Ok(relayout)
    }

    /// Records blocks present with another owner (for halo exchange across ranks; their
    /// values are not stored here).
    pub fn add_remote(&mut self, blocks: &[BlockInfo]) -> Result<(), Error> {
        for b in blocks {
            self.geometry.check_key(b.key)?;
            if let Owner::Here = b.owner {
                return Err(Error::InvalidField(format!(
                    "block {:?} is owned here: add it with BlockGrid::update",
                    b.key
                )));
            }
            if self.index.insert(b.key, None).is_none() {
                self.remote.push(*b);
            }
        }
        Ok(())
    }

    /// When fewer than half the slots are in use, moves the blocks of the highest slots
    /// into the lowest free ones and gives back the rest (memory follows the present
    /// blocks). Rewrites `kept` and `added` to the new slots.
    fn compact(&mut self, kept: &mut [(usize, usize)], added: &mut [usize]) {
        let used = self.len();
        if self.slots.len() <= 2 * used.max(MIN_SLOTS) {
            return;
        }
        let mut moves: HashMap<usize, usize> = HashMap::new();
        let mut low = 0;
        let mut high = self.slots.len();
        loop {
            while low < self.slots.len() && self.slots[low].is_some() {
                low += 1;
            }
            while high > 0 && self.slots[high - 1].is_none() {
                high -= 1;
            }
            if low + 1 > high || low >= used {
                break;
            }
            let block = self.slots[high - 1].take();
            self.slots[low] = block;
            moves.insert(high - 1, low);
        }
        self.slots.truncate(used);
        for slot in self.index.values_mut().flatten() {
            if let Some(&to) = moves.get(slot) {
                *slot = to;
            }
        }
        for (_, to) in kept.iter_mut() {
            *to = moves.get(to).copied().unwrap_or(*to);
        }
        for s in added.iter_mut() {
            *s = moves.get(s).copied().unwrap_or(*s);
        }
    }
}

/// A map from block keys, hashed cheaply: plans and lists look up every block's
/// neighbours, where the standard hasher's cost shows.
type KeyMap<V> = HashMap<BlockKey, V, BuildHasherDefault<KeyHasher>>;

/// A multiply-rotate hash of each 32-bit word (the mix of rustc's FxHash): enough for keys
/// that are small integers, and several times faster than SipHash.
#[derive(Default)]
struct KeyHasher(u64);

impl KeyHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(4) {
            let mut word = [0u8; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from(u32::from_le_bytes(word)));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Grids keep at least this many slots before giving memory back.
const MIN_SLOTS: usize = 4;

/// A grid that grows keeps this fraction (1 / n) of its slots free for the blocks added
/// next, so that a run adding a block or two at a time moves its fields' memory only
/// every so often (each move is a new allocation and a copy per field).
const GROWTH_SLACK: usize = 32;

/// The slots after `fresh` new ones are needed beyond `old`: exactly that for a grid's
/// first blocks, with [`GROWTH_SLACK`] room after that.
fn grown_capacity(old: usize, fresh: usize) -> usize {
    let needed = old + fresh;
    if old == 0 || fresh == 0 {
        return needed;
    }
    needed + needed / GROWTH_SLACK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32, j: u32) -> BlockKey {
        BlockKey::new([i, j, 0])
    }

    /// The keys of the `n` x `n` blocks of a 2D grid's corner, axis 1 varying fastest.
    fn square(n: u32) -> Vec<BlockKey> {
        (0..n)
            .flat_map(|i| (0..n).map(move |j| key(i, j)))
            .collect()
    }

    #[test]
    fn slots_are_reused_and_memory_follows_the_present_blocks() {
        let mut g = BlockGrid::new(&Backend::Cpu, &[64, 64], &[8, 8], 1).unwrap();
        let all = square(8);
        let r = g.update(&all, &[]).unwrap();
        assert_eq!((r.capacity, r.added.len(), r.kept.len()), (64, 64, 0));
        // Removing most blocks compacts: the kept blocks move into low slots.
        let r = g.update(&[], &all[4..]).unwrap();
        assert_eq!(g.len(), 4);
        assert_eq!(r.capacity, 4);
        assert_eq!(r.kept, vec![(0, 0), (1, 1), (2, 2), (3, 3)]);
        // A removal that leaves more than half in use keeps the slots; the next block
        // added takes the freed one.
        g.update(&[], &[all[1]]).unwrap();
        assert_eq!(g.capacity(), 4);
        let r = g.update(&[all[40]], &[]).unwrap();
        assert_eq!((r.added.as_slice(), g.capacity()), (&[1][..], 4));
        assert_eq!(g.slot(all[40]), Some(1));
        assert_eq!(r.from + 1, r.to);
    }

    #[test]
    fn a_growing_grid_keeps_a_little_room() {
        let mut g = BlockGrid::new(&Backend::Cpu, &[512, 512], &[8, 8], 1).unwrap();
        let all = square(64);
        g.update(&all[..64], &[]).unwrap();
        assert_eq!(g.capacity(), 64);
        // One more block: 65 needed, 67 kept; the next two fit without growing.
        let r = g.update(&all[64..65], &[]).unwrap();
        assert_eq!((r.capacity, r.added.as_slice()), (67, &[64][..]));
        let r = g.update(&all[65..67], &[]).unwrap();
        assert_eq!((r.capacity, r.added.as_slice()), (67, &[65, 66][..]));
        assert!(r.kept.iter().all(|&(from, to)| from == to));
    }

    #[test]
    fn compaction_moves_high_slots_down_and_tells_the_fields() {
        let mut g = BlockGrid::new(&Backend::Cpu, &[80, 8], &[8, 8], 1).unwrap();
        let all: Vec<BlockKey> = (0..10).map(|i| key(i, 0)).collect();
        g.update(&all, &[]).unwrap();
        // Keep 0, 7, 9: slots 7 and 9 move to 1 and 2.
        let gone: Vec<BlockKey> = [1, 2, 3, 4, 5, 6, 8].iter().map(|&i| all[i]).collect();
        let r = g.update(&[], &gone).unwrap();
        assert_eq!(r.capacity, 3);
        let mut kept = r.kept.clone();
        kept.sort();
        assert_eq!(kept, vec![(0, 0), (7, 2), (9, 1)]);
        assert_eq!(g.slot(all[9]), Some(1));
        assert_eq!(g.slot(all[7]), Some(2));
    }

    #[test]
    fn keys_outside_the_domain_are_refused() {
        let mut g = BlockGrid::new(&Backend::Cpu, &[20, 20], &[8, 8], 1).unwrap();
        let e = g.update(&[key(3, 0)], &[]).unwrap_err().to_string();
        assert!(e.contains("outside"), "{e}");
    }
}
