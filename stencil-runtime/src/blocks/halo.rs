//! [`HaloExchange`]: filling every present block's halo in one pass.
//!
//! An exchange is planned once per layout and rule: for every halo point of every present
//! block (and every point of a block that lies past the domain's edge), where its value
//! comes from. Inside the domain that is the point of the
//! neighbouring block that holds it; past the domain's edges, the side's rule
//! ([`Side`]); where the neighbouring block is absent, the grid's rule for absent blocks
//! ([`Absent`]). Each halo point becomes an entry `(destination, source, operation)` with
//! the operation `value = scale * source + add` (or a value of the entry's own, for
//! [`Absent::Values`]); sources are always interior points, so
//! the entries are independent and run in one launch (on the CPU, in parallel).
//!
//! Later layers extend the plan rather than the launch: a remote neighbour (another rank)
//! becomes entries whose source is a receive buffer, a coarser neighbour (adaptive grids)
//! entries with several weighted sources.

use super::field::BlockField;
use super::grid::{BlockGrid, Owner};
use crate::cuda::memory::DeviceBuffer;
use crate::{Backend, Error, Precision, Real};
use rayon::prelude::*;
use std::sync::Arc;

/// What a halo point past one side of the domain holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    /// The point of the opposite side (the domain repeats).
    Periodic,
    /// The mirror image of the point across the side (cell-centred: the first point past
    /// the side mirrors the last one before it), times `sign` (-1 for the velocity normal
    /// to a wall).
    Mirror(f64),
    /// The nearest point inside the domain (zero gradient: an outlet).
    Clamp,
    /// A fixed value.
    Value(f64),
}

/// What a halo point holds where the neighbouring block inside the domain is absent.
#[derive(Clone)]
pub enum Absent {
    /// The nearest point of the block itself (zero gradient).
    Clamp,
    /// A fixed value (for water at rest: zero discharge).
    Value(f64),
    /// A value per point of the domain, given its global index (for water: the dry
    /// surface, which is the bed's height there). Evaluated when the exchange is planned.
    Values(Arc<dyn Fn([usize; 3]) -> f64 + Send + Sync>),
}

impl std::fmt::Debug for Absent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Absent::Clamp => write!(f, "Clamp"),
            Absent::Value(v) => write!(f, "Value({v})"),
            Absent::Values(_) => write!(f, "Values(..)"),
        }
    }
}

/// How one field's halos are filled: a rule per side of each axis (low, high) and one
/// for absent neighbours.
#[derive(Clone, Debug)]
pub struct HaloRule {
    /// Per axis, the low and the high side (entries of unused axes are ignored).
    pub sides: [[Side; 2]; 3],
    /// Where a neighbouring block is absent.
    pub absent: Absent,
}

impl HaloRule {
    /// The same rule on every side.
    pub fn uniform(side: Side, absent: Absent) -> HaloRule {
        HaloRule {
            sides: [[side; 2]; 3],
            absent,
        }
    }
}

/// No source: the entry's value is its operation's `add`.
const NO_SOURCE: u32 = u32::MAX;

/// The operation of an entry whose value is its own (`Absent::Values`): the entry's
/// element of the per-entry values.
const OWN_VALUE: u32 = u32::MAX;

/// The plan of one halo exchange on one layout of a grid (see the module's text).
#[derive(Debug)]
pub struct HaloExchange {
    grid: u64,
    generation: u64,
    /// Three per halo point: destination, source, operation.
    entries: Vec<u32>,
    /// `(scale, add)` per operation.
    ops: Vec<(f64, f64)>,
    /// One value per entry, for entries of operation [`OWN_VALUE`] (empty if none).
    own: Vec<f64>,
    /// The entries on the device, for a CUDA grid.
    device_entries: Option<DeviceBuffer>,
    /// The operations on the device, in f32 and in f64.
    device_ops: Option<[DeviceBuffer; 2]>,
    /// The per-entry values on the device, in f32 and in f64 (if any entry has one).
    device_own: Option<[DeviceBuffer; 2]>,
}

impl HaloExchange {
    /// Plans the exchange of `rule` on `grid`'s present layout. Fails if a neighbouring
    /// block is owned by another rank (not exchanged yet).
    pub fn new(grid: &BlockGrid, rule: &HaloRule) -> Result<HaloExchange, Error> {
        let g = *grid.geometry();
        let mut entries = Vec::new();
        let mut own: Vec<(usize, f64)> = Vec::new();
        let mut ops: Vec<(f64, f64)> = Vec::new();
        let mut op = |scale: f64, add: f64| -> u32 {
            let key = (scale, add);
            match ops
                .iter()
                .position(|o| o.0.to_bits() == key.0.to_bits() && o.1.to_bits() == key.1.to_bits())
            {
                Some(i) => i as u32,
                None => {
                    ops.push(key);
                    (ops.len() - 1) as u32
                }
            }
        };
        let h = [0, 1, 2].map(|a| g.halo_on(a) as isize);
        let len = g.slot_len();
        for (slot, info) in grid.blocks() {
            let o = g.origin(info.key);
            let base = slot * len;
            for k in -h[2]..g.block[2] as isize + h[2] {
                for j in -h[1]..g.block[1] as isize + h[1] {
                    for i in -h[0]..g.block[0] as isize + h[0] {
                        let p = [i, j, k];
                        let global = [0, 1, 2].map(|a| o[a] as isize + p[a]);
                        // The block's own points inside the domain are its values; the
                        // rest of the slot (its halo, and the points of a block that
                        // sticks out of the domain past the domain's edge) is filled.
                        let kept = (0..3).all(|a| {
                            p[a] >= 0
                                && p[a] < g.block[a] as isize
                                && global[a] < g.domain[a] as isize
                        });
                        if kept {
                            continue;
                        }
                        let dst = (base + g.element(p)) as u32;
                        let mut own_value = None;
                        let (src, scale, add) = match resolve(&g, rule, global) {
                            Resolved::Value(v) => (NO_SOURCE, 0.0, v),
                            Resolved::Point(q, scale) => {
                                let q = q.map(|x| x as usize);
                                let key = g.key_of(q);
                                match grid.slot(key) {
                                    Some(s) => {
                                        let qo = g.origin(key);
                                        let local = [0, 1, 2].map(|a| (q[a] - qo[a]) as isize);
                                        ((s * len + g.element(local)) as u32, scale, 0.0)
                                    }
                                    None if grid.contains(key) => {
                                        let owner = grid
                                            .remote()
                                            .iter()
                                            .find(|b| b.key == key)
                                            .map_or(Owner::Here, |b| b.owner);
                                        return Err(Error::InvalidField(format!(
                                            "block {:?} borders block {key:?}, owned by {owner:?}: halos across owners are not exchanged yet",
                                            info.key
                                        )));
                                    }
                                    None => match &rule.absent {
                                        Absent::Value(v) => (NO_SOURCE, 0.0, *v),
                                        Absent::Values(f) => {
                                            own_value = Some(f(q));
                                            (NO_SOURCE, 0.0, 0.0)
                                        }
                                        Absent::Clamp => {
                                            let c = [0, 1, 2]
                                                .map(|a| p[a].clamp(0, g.block[a] as isize - 1));
                                            ((base + g.element(c)) as u32, 1.0, 0.0)
                                        }
                                    },
                                }
                            }
                        };
                        let op = match own_value {
                            Some(v) => {
                                own.push((entries.len() / 3, v));
                                OWN_VALUE
                            }
                            None => op(scale, add),
                        };
                        entries.extend([dst, src, op]);
                    }
                }
            }
        }
        // Per-entry values, where any entry has one.
        let own: Vec<f64> = if own.is_empty() {
            Vec::new()
        } else {
            let mut all = vec![0.0; entries.len() / 3];
            for (e, v) in own {
                all[e] = v;
            }
            all
        };
        let device_own = match grid.backend() {
            Backend::Cuda(c) if !own.is_empty() => {
                let f32s: Vec<f32> = own.iter().map(|&v| v as f32).collect();
                Some([
                    DeviceBuffer::from_slice(c.stream(), &f32s, "a halo exchange")?,
                    DeviceBuffer::from_slice(c.stream(), &own, "a halo exchange")?,
                ])
            }
            _ => None,
        };
        let (device_entries, device_ops) = match grid.backend() {
            Backend::Cpu => (None, None),
            Backend::Cuda(c) => {
                let s = c.stream();
                let f32s: Vec<f32> = ops
                    .iter()
                    .flat_map(|&(a, b)| [a as f32, b as f32])
                    .collect();
                let f64s: Vec<f64> = ops.iter().flat_map(|&(a, b)| [a, b]).collect();
                (
                    Some(DeviceBuffer::from_slice(s, &entries, "a halo exchange")?),
                    Some([
                        DeviceBuffer::from_slice(s, &f32s, "a halo exchange")?,
                        DeviceBuffer::from_slice(s, &f64s, "a halo exchange")?,
                    ]),
                )
            }
        };
        Ok(HaloExchange {
            grid: grid.id(),
            generation: grid.generation(),
            entries,
            ops,
            own,
            device_entries,
            device_ops,
            device_own,
        })
    }

    /// The number of halo points the exchange fills.
    pub fn len(&self) -> usize {
        self.entries.len() / 3
    }

    /// Whether it fills none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the plan was made for the grid's present layout.
    pub fn is_current(&self, grid: &BlockGrid) -> bool {
        self.grid == grid.id() && self.generation == grid.generation()
    }

    /// Fills `field`'s halos (one launch on a device; in parallel on the CPU).
    pub fn run<T: Real>(&self, field: &mut BlockField<T>) -> Result<(), Error> {
        field.check_layout("halo exchange", "field", self.grid, self.generation)?;
        if let Some(arena) = field.host_arena_mut() {
            let ops: Vec<(T, T)> = self
                .ops
                .iter()
                .map(|&(a, b)| (T::from_f64(a), T::from_f64(b)))
                .collect();
            let own: Vec<T> = self.own.iter().map(|&v| T::from_f64(v)).collect();
            let base = SendPtr(arena.as_mut_ptr());
            let len = arena.len();
            self.entries
                .par_chunks(3 * CPU_CHUNK)
                .enumerate()
                .for_each(|(c, chunk)| {
                    let base = &base;
                    for (k, e) in chunk.chunks_exact(3).enumerate() {
                        let (dst, src, op) = (e[0] as usize, e[1], e[2]);
                        let (scale, add) = if op == OWN_VALUE {
                            (T::zero(), own[c * CPU_CHUNK + k])
                        } else {
                            ops[op as usize]
                        };
                        assert!(dst < len && (src == NO_SOURCE || (src as usize) < len));
                        // SAFETY: every destination is a halo point named once, every source
                        // an interior point: no two entries write the same element and no
                        // entry reads an element another writes.
                        unsafe {
                            let v = if src == NO_SOURCE {
                                add
                            } else {
                                scale * *base.0.add(src as usize) + add
                            };
                            *base.0.add(dst) = v;
                        }
                    }
                });
            return Ok(());
        }
        let (Some(entries), Some(ops), Some(arena)) =
            (&self.device_entries, &self.device_ops, field.device_arena())
        else {
            return Err(Error::InvalidField(
                "the halo exchange was planned on another backend than the field's".into(),
            ));
        };
        let Backend::Cuda(cuda) = field.backend() else {
            unreachable!("a device arena lives on a CUDA backend")
        };
        let k = match T::PRECISION {
            Precision::F32 => 0,
            Precision::F64 => 1,
        };
        let own = self.device_own.as_ref().map_or(0, |o| o[k].ptr);
        // SAFETY: the plan was made for the field's layout (checked above): its entries
        // name elements of the field's arena and operations of the table.
        unsafe {
            crate::cuda::queue_halo_exchange(
                cuda,
                T::PRECISION,
                self.len(),
                entries.ptr,
                ops[k].ptr,
                own,
                arena,
            )
        }
    }
}

/// Entries per task on the CPU.
const CPU_CHUNK: usize = 4096;

/// A pointer shared by the tasks of an exchange.
struct SendPtr<T>(*mut T);
// SAFETY: the tasks write disjoint elements (see `HaloExchange::run`).
unsafe impl<T> Sync for SendPtr<T> {}

/// Where a halo point's value comes from.
enum Resolved {
    /// A point inside the domain, times a scale.
    Point([isize; 3], f64),
    /// A fixed value.
    Value(f64),
}

/// Maps a global point past the domain's sides to its source by the sides' rules, axis by
/// axis (a corner point takes both axes' rules; a fixed value on any axis wins).
fn resolve(g: &super::Geometry, rule: &HaloRule, mut p: [isize; 3]) -> Resolved {
    let mut scale = 1.0;
    for (a, (&sides, &n)) in rule.sides.iter().zip(&g.domain).enumerate().take(g.dims) {
        let n = n as isize;
        let side = if p[a] < 0 {
            sides[0]
        } else if p[a] >= n {
            sides[1]
        } else {
            continue;
        };
        match side {
            Side::Periodic => p[a] = p[a].rem_euclid(n),
            Side::Mirror(sign) => {
                p[a] = if p[a] < 0 {
                    -1 - p[a]
                } else {
                    2 * n - 1 - p[a]
                };
                p[a] = p[a].clamp(0, n - 1);
                scale *= sign;
            }
            Side::Clamp => p[a] = p[a].clamp(0, n - 1),
            Side::Value(v) => return Resolved::Value(v),
        }
    }
    Resolved::Point(p, scale)
}
