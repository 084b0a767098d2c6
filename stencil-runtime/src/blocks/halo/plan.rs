//! Planning a halo exchange: the template of one block's halo points, the table of the
//! structured blocks' neighbours, and the per-point entries of the other blocks (see
//! [`super::HaloExchange`]).

use super::{Absent, HaloRule, HaloWidths, Side};
use crate::blocks::grid::{BlockGrid, BlockKey, Owner};
use crate::blocks::Geometry;
use crate::Error;

/// No source: the entry's value is its operation's `add`.
pub(super) const NO_SOURCE: u32 = u32::MAX;

/// The operation of an entry whose value is its own (`Absent::Values`): the entry's
/// element of the per-entry values.
pub(super) const OWN_VALUE: u32 = u32::MAX;

/// The operation of an entry whose value is the companion field's at its destination
/// (`Absent::Companion`).
pub(super) const COMPANION: u32 = u32::MAX - 1;

/// How a structured block fills a point whose neighbour is absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Mode {
    /// A value: the `add` of operation `absent`.
    #[default]
    Value = 0,
    /// The block's own nearest point.
    Clamp = 1,
    /// The companion field's value at the point.
    Companion = 2,
}

/// The host side of a plan.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Four per halo point of one block: its element, the direction of its neighbour,
    /// its element there, the element of the block's nearest own point.
    pub template: Vec<u32>,
    /// Per structured block, [`Plan::stride`] values: its slot, then its neighbours'
    /// slots by direction (-1: absent; `-2 - op` past a side of fixed value: operation
    /// `op`'s `add`).
    pub table: Vec<i32>,
    /// Values per row of [`Plan::table`]: one plus `3^dims`.
    pub stride: usize,
    /// The elements of a slot.
    pub slot_len: usize,
    /// Three per point of the other blocks: destination, source, operation.
    pub entries: Vec<u32>,
    /// `(scale, add)` per operation.
    pub ops: Vec<(f64, f64)>,
    /// One value per entry, for entries of operation [`OWN_VALUE`] (empty if none).
    pub own: Vec<f64>,
    /// How structured blocks fill points of absent neighbours.
    pub mode: Mode,
    /// The operation whose `add` those points take in [`Mode::Value`] (in
    /// [`Mode::Companion`], for fields exchanged without a companion: zero).
    pub absent_op: u32,
}

impl Plan {
    /// The plan of `rule` on `grid`'s present layout, filling `widths[a]` (below, above)
    /// layers of halo along each axis `a`.
    pub fn new(grid: &BlockGrid, rule: &HaloRule, widths: HaloWidths) -> Result<Plan, Error> {
        let g = *grid.geometry();
        let mut plan = Plan {
            template: template(&g, widths),
            stride: 1 + 3usize.pow(g.dims as u32),
            slot_len: g.slot_len(),
            ..Plan::default()
        };
        (plan.mode, plan.absent_op) = match rule.absent {
            Absent::Clamp => (Mode::Clamp, 0),
            Absent::Companion => (Mode::Companion, plan.op(0.0, 0.0)),
            Absent::Value(v) => (Mode::Value, plan.op(0.0, v)),
            Absent::Values(_) => (Mode::Value, 0),
        };
        let mut own: Vec<(usize, f64)> = Vec::new();
        for (slot, info) in grid.blocks() {
            let mut side_value = |v: f64| plan.op(0.0, v);
            match neighbours(grid, rule, info.key, &mut side_value)? {
                Some(row) => {
                    plan.table.push(slot as i32);
                    plan.table.extend(row);
                }
                None => plan.block_points(grid, rule, widths, slot, info.key, &mut own)?,
            }
        }
        if !own.is_empty() {
            plan.own = vec![0.0; plan.entries.len() / 3];
            for (e, v) in own {
                plan.own[e] = v;
            }
        }
        Ok(plan)
    }

    /// The index of operation `(scale, add)`, added if new.
    fn op(&mut self, scale: f64, add: f64) -> u32 {
        let same =
            |o: &(f64, f64)| o.0.to_bits() == scale.to_bits() && o.1.to_bits() == add.to_bits();
        match self.ops.iter().position(same) {
            Some(i) => i as u32,
            None => {
                self.ops.push((scale, add));
                (self.ops.len() - 1) as u32
            }
        }
    }

    /// The structured blocks.
    pub fn structured_blocks(&self) -> usize {
        self.table.len() / self.stride
    }

    /// The points of the template.
    pub fn template_points(&self) -> usize {
        self.template.len() / 4
    }

    /// Entries of one block that is not structured: every slot point within `widths` of
    /// the block that is not one of its own points inside the domain.
    fn block_points(
        &mut self,
        grid: &BlockGrid,
        rule: &HaloRule,
        widths: HaloWidths,
        slot: usize,
        key: BlockKey,
        own: &mut Vec<(usize, f64)>,
    ) -> Result<(), Error> {
        let g = *grid.geometry();
        let (lo, hi) = extents(&g, widths);
        let len = g.slot_len();
        let o = g.origin(key);
        let base = slot * len;
        // Neighbouring points come in runs of the same block: look each block up once.
        let mut last: Option<(BlockKey, Option<usize>)> = None;
        for k in -lo[2]..g.block[2] as isize + hi[2] {
            for j in -lo[1]..g.block[1] as isize + hi[1] {
                for i in -lo[0]..g.block[0] as isize + hi[0] {
                    let p = [i, j, k];
                    let global = [0, 1, 2].map(|a| o[a] as isize + p[a]);
                    // The block's own points inside the domain are its values; the rest
                    // (its halo, and the points of a block that sticks out of the domain
                    // past the domain's edge) is filled.
                    let kept = (0..3).all(|a| {
                        p[a] >= 0 && p[a] < g.block[a] as isize && global[a] < g.domain[a] as isize
                    });
                    if kept {
                        continue;
                    }
                    let dst = (base + g.element(p)) as u32;
                    let (src, op) = match resolve(&g, rule, global) {
                        Resolved::Value(v) => (NO_SOURCE, self.op(0.0, v)),
                        Resolved::Point(q, scale) => {
                            let q = q.map(|x| x as usize);
                            let nkey = g.key_of(q);
                            let slot_of = match last {
                                Some((k, s)) if k == nkey => s,
                                _ => grid.slot(nkey),
                            };
                            last = Some((nkey, slot_of));
                            match slot_of {
                                Some(s) => {
                                    let qo = g.origin(nkey);
                                    let local = [0, 1, 2].map(|a| (q[a] - qo[a]) as isize);
                                    ((s * len + g.element(local)) as u32, self.op(scale, 0.0))
                                }
                                None if grid.contains(nkey) => {
                                    return Err(remote(grid, key, nkey));
                                }
                                None => match &rule.absent {
                                    Absent::Value(v) => (NO_SOURCE, self.op(0.0, *v)),
                                    Absent::Values(f) => {
                                        own.push((self.entries.len() / 3, f(q)));
                                        (NO_SOURCE, OWN_VALUE)
                                    }
                                    Absent::Companion => (NO_SOURCE, COMPANION),
                                    Absent::Clamp => {
                                        let c = [0, 1, 2]
                                            .map(|a| p[a].clamp(0, g.block[a] as isize - 1));
                                        ((base + g.element(c)) as u32, self.op(1.0, 0.0))
                                    }
                                },
                            }
                        }
                    };
                    self.entries.extend([dst, src, op]);
                }
            }
        }
        Ok(())
    }
}

/// The error for a neighbour owned by another rank.
fn remote(grid: &BlockGrid, key: BlockKey, neighbour: BlockKey) -> Error {
    let owner = grid
        .remote()
        .iter()
        .find(|b| b.key == neighbour)
        .map_or(Owner::Here, |b| b.owner);
    Error::InvalidField(format!(
        "block {key:?} borders block {neighbour:?}, owned by {owner:?}: halos across owners are not exchanged yet"
    ))
}

/// The layers filled below and above a block along each axis: `widths`, at most the
/// grid's halo.
fn extents(g: &Geometry, widths: HaloWidths) -> ([isize; 3], [isize; 3]) {
    let w = |a: usize, side: usize| g.halo_on(a).min(widths[a][side]) as isize;
    ([0, 1, 2].map(|a| w(a, 0)), [0, 1, 2].map(|a| w(a, 1)))
}

/// The halo points of one block within `widths`, four values each (see
/// [`Plan::template`]).
fn template(g: &Geometry, widths: HaloWidths) -> Vec<u32> {
    let (lo, hi) = extents(g, widths);
    let b = g.block.map(|x| x as isize);
    let mut out = Vec::new();
    for k in -lo[2]..b[2] + hi[2] {
        for j in -lo[1]..b[1] + hi[1] {
            for i in -lo[0]..b[0] + hi[0] {
                let p = [i, j, k];
                let d = [0, 1, 2].map(|a| {
                    if p[a] < 0 {
                        0
                    } else if p[a] < b[a] {
                        1
                    } else {
                        2
                    }
                });
                if d == [1, 1, 1] {
                    continue;
                }
                let dir: usize = (0..g.dims).map(|a| d[a] * 3usize.pow(a as u32)).sum();
                let src = [0, 1, 2].map(|a| p[a] - (d[a] as isize - 1) * b[a]);
                let near = [0, 1, 2].map(|a| p[a].clamp(0, b[a] - 1));
                out.extend([g.element(p), dir, g.element(src), g.element(near)].map(|x| x as u32));
            }
        }
    }
    out
}

/// A structured block's neighbours' slots by direction (-1: absent, `-2 - op` past a side
/// of fixed value, `op` from `side_value`), or `None` if the block needs per-point
/// entries: it sticks out of the domain, a neighbour lies past a side that mirrors or
/// clamps (or is periodic over a domain that is not whole blocks), or a neighbour is
/// absent under [`Absent::Values`].
fn neighbours(
    grid: &BlockGrid,
    rule: &HaloRule,
    key: BlockKey,
    side_value: &mut impl FnMut(f64) -> u32,
) -> Result<Option<Vec<i32>>, Error> {
    let g = *grid.geometry();
    let o = g.origin(key);
    if (0..g.dims).any(|a| o[a] + g.block[a] > g.domain[a]) {
        return Ok(None);
    }
    let count = 3usize.pow(g.dims as u32);
    let mut row = vec![-1; count];
    'directions: for (dir, slot) in row.iter_mut().enumerate() {
        let mut index = key.index;
        let mut rest = dir;
        let mut wraps_past = None;
        for (a, coordinate) in index.iter_mut().enumerate().take(g.dims) {
            let d = (rest % 3) as i64 - 1;
            rest /= 3;
            let n = g.blocks[a] as i64;
            let mut at = *coordinate as i64 + d;
            if !(0..n).contains(&at) {
                // As `resolve`: a fixed value on any axis wins, periodic sides wrap.
                match rule.sides[a][usize::from(at >= n)] {
                    Side::Value(v) => {
                        *slot = -2 - side_value(v) as i32;
                        continue 'directions;
                    }
                    Side::Periodic if g.domain[a].is_multiple_of(g.block[a]) => {
                        at = at.rem_euclid(n);
                    }
                    _ => wraps_past = Some(a),
                }
            }
            *coordinate = at as u32;
        }
        if wraps_past.is_some() {
            return Ok(None);
        }
        let neighbour = BlockKey {
            level: key.level,
            index,
        };
        match grid.slot(neighbour) {
            Some(s) => *slot = s as i32,
            None if grid.contains(neighbour) => return Err(remote(grid, key, neighbour)),
            None if matches!(rule.absent, Absent::Values(_)) => return Ok(None),
            None => {}
        }
    }
    Ok(Some(row))
}

/// Where a halo point's value comes from.
enum Resolved {
    /// A point inside the domain, times a scale.
    Point([isize; 3], f64),
    /// A fixed value.
    Value(f64),
}

/// Maps a global point past the domain's sides to its source by the sides' rules, axis by
/// axis (a corner point takes both axes' rules; a fixed value on any axis wins).
fn resolve(g: &Geometry, rule: &HaloRule, mut p: [isize; 3]) -> Resolved {
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
