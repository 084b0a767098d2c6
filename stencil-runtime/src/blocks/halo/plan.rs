//! Planning a halo exchange: the template of one block's halo points, the table of the
//! structured blocks' neighbours, and the per-point entries of the other blocks (see
//! [`super::HaloExchange`]).

use super::{Absent, HaloRule, HaloWidths, Side};
use crate::blocks::grid::{BlockGrid, BlockKey, Owner};
use crate::blocks::predict::{extrapolation, Predictor};
use crate::blocks::{Geometry, Refinement};
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
    /// Points of several sources (extrapolation past a side, prediction from a coarser
    /// level): three per point, its destination, its first source in
    /// [`Plan::sources`] and their number.
    pub weighted: Vec<u32>,
    /// The sources of the weighted points: element and weight.
    pub sources: Vec<(u32, f64)>,
}

impl Plan {
    /// The plan of `rule` on `grid`'s present layout, filling `widths[a]` (below, above)
    /// layers of halo along each axis `a`.
    /// Only the blocks `only` accepts are filled if it is given.
    pub fn new(
        grid: &BlockGrid,
        rule: &HaloRule,
        widths: HaloWidths,
        only: Option<&dyn Fn(BlockKey) -> bool>,
    ) -> Result<Plan, Error> {
        let g = *grid.geometry();
        let mut plan = Plan {
            template: template(&g, widths),
            stride: 1 + g.directions(),
            slot_len: g.slot_len(),
            ..Plan::default()
        };
        (plan.mode, plan.absent_op) = match rule.absent {
            Absent::Clamp => (Mode::Clamp, 0),
            Absent::Companion => (Mode::Companion, plan.op(0.0, 0.0)),
            Absent::Value(v) => (Mode::Value, plan.op(0.0, v)),
            Absent::Values(_) | Absent::Coarser(_) => (Mode::Value, 0),
        };
        if matches!(rule.absent, Absent::Coarser(_)) && g.refinement != Refinement::Vertex {
            return Err(Error::InvalidField(
                "halos predicted from a coarser level need a vertex-centred grid (Refinement::Vertex)".into(),
            ));
        }
        let mut own: Vec<(usize, f64)> = Vec::new();
        for (slot, info) in grid.blocks() {
            if only.is_some_and(|accepts| !accepts(info.key)) {
                continue;
            }
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

    /// A plan of no halo: the points `(destination, source)` copied, and the points
    /// `(destination, sources)` summed (every source a point no destination names).
    pub fn transfers(
        grid: &BlockGrid,
        copies: &[(u32, u32)],
        sums: &[(u32, Vec<(u32, f64)>)],
    ) -> Plan {
        let g = *grid.geometry();
        let mut plan = Plan {
            stride: 1 + g.directions(),
            slot_len: g.slot_len(),
            ..Plan::default()
        };
        let copy = plan.op(1.0, 0.0);
        for &(dst, src) in copies {
            plan.entries.extend([dst, src, copy]);
        }
        for (dst, terms) in sums {
            plan.weighted
                .extend([*dst, plan.sources.len() as u32, terms.len() as u32]);
            plan.sources.extend(terms);
        }
        plan
    }

    /// One past the largest arena element the plan names (destinations and sources): an
    /// arena at least this long can be filled without a check per point.
    pub fn reach(&self) -> usize {
        let template = self
            .template
            .chunks_exact(4)
            .map(|t| t[0].max(t[2]).max(t[3]) as usize)
            .max();
        let slots = self.table.iter().copied().filter(|&s| s >= 0).max();
        let structured = match (template, slots) {
            (Some(t), Some(s)) => s as usize * self.slot_len + t + 1,
            _ => 0,
        };
        let entries = self
            .entries
            .chunks_exact(3)
            .map(|e| if e[1] == NO_SOURCE { e[0] } else { e[0].max(e[1]) } as usize + 1)
            .max()
            .unwrap_or(0);
        let weighted = self
            .weighted
            .chunks_exact(3)
            .map(|e| e[0] as usize + 1)
            .chain(self.sources.iter().map(|&(s, _)| s as usize + 1))
            .max()
            .unwrap_or(0);
        structured.max(entries).max(weighted)
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
        let g = grid.geometry().at_level(key.level);
        let (lo, hi) = extents(&g, widths);
        let o = g.origin(key);
        let base = slot * g.slot_len();
        let mut finder = Finder::new(grid, key);
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
                    let source = match resolve(&g, rule, global) {
                        Resolved::Value(v) => Source::Value(v),
                        Resolved::Points(points) => {
                            // The block's nearest own point inside the domain (its points
                            // past the edge are filled by this same exchange).
                            let near = [0, 1, 2].map(|a| {
                                let inside = g.block[a].min(g.domain[a] - o[a]) as isize;
                                p[a].clamp(0, inside - 1)
                            });
                            let clamp = (base + g.element(near)) as u32;
                            finder.sources(rule, &points, clamp)?
                        }
                    };
                    match source {
                        Source::Value(v) => {
                            let op = self.op(0.0, v);
                            self.entries.extend([dst, NO_SOURCE, op]);
                        }
                        Source::Own(v) => {
                            own.push((self.entries.len() / 3, v));
                            self.entries.extend([dst, NO_SOURCE, OWN_VALUE]);
                        }
                        Source::Companion => self.entries.extend([dst, NO_SOURCE, COMPANION]),
                        Source::Points(points) if points.len() == 1 => {
                            let op = self.op(points[0].1, 0.0);
                            self.entries.extend([dst, points[0].0, op]);
                        }
                        Source::Points(points) => {
                            let first = self.sources.len() as u32;
                            self.weighted.extend([dst, first, points.len() as u32]);
                            self.sources.extend(points);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Where the value of one point to fill comes from.
enum Source {
    /// A fixed value.
    Value(f64),
    /// A value of the entry's own ([`Absent::Values`]).
    Own(f64),
    /// The companion field's value at the point.
    Companion,
    /// A weighted sum of elements of the arena (one element: a scaled copy).
    Points(Vec<(u32, f64)>),
}

/// Finds the elements holding points of a block's level and, where their block is
/// absent, what the rule for absent blocks gives.
struct Finder<'a> {
    grid: &'a BlockGrid,
    key: BlockKey,
    /// The last block looked up: neighbouring points come in runs of the same block.
    last: Option<(BlockKey, Option<usize>)>,
}

impl<'a> Finder<'a> {
    fn new(grid: &'a BlockGrid, key: BlockKey) -> Finder<'a> {
        Finder {
            grid,
            key,
            last: None,
        }
    }

    /// The slot of block `key` here, if present.
    fn slot(&mut self, key: BlockKey) -> Option<usize> {
        match self.last {
            Some((k, s)) if k == key => s,
            _ => {
                let s = self.grid.slot(key);
                self.last = Some((key, s));
                s
            }
        }
    }

    /// The element holding point `q` of level `level` (inside its domain) if its block
    /// is present here, `Ok(None)` if it is absent; an error if another rank holds it.
    fn element(&mut self, level: u8, q: [usize; 3]) -> Result<Option<u32>, Error> {
        let g = self.grid.geometry().at_level(level);
        let nkey = g.key_of(q);
        match self.slot(nkey) {
            Some(s) => {
                let qo = g.origin(nkey);
                let local = [0, 1, 2].map(|a| (q[a] - qo[a]) as isize);
                Ok(Some((s * g.slot_len() + g.element(local)) as u32))
            }
            None if self.grid.contains(nkey) => Err(remote(self.grid, self.key, nkey)),
            None => Ok(None),
        }
    }

    /// The source of a point that is the weighted sum of `points` of the block's level
    /// (inside the domain); `clamp` is the element of the block's nearest own point.
    fn sources(
        &mut self,
        rule: &HaloRule,
        points: &[([isize; 3], f64)],
        clamp: u32,
    ) -> Result<Source, Error> {
        let level = self.key.level;
        let mut out = Vec::with_capacity(points.len());
        for &(q, w) in points {
            let q = q.map(|x| x as usize);
            if let Some(e) = self.element(level, q)? {
                out.push((e, w));
                continue;
            }
            let single = points.len() == 1;
            match &rule.absent {
                Absent::Clamp => out.push((clamp, w)),
                Absent::Coarser(predictor) => {
                    for (c, wc) in self.coarser(*predictor, q)? {
                        out.push((c, w * wc));
                    }
                }
                Absent::Value(v) if single => return Ok(Source::Value(*v)),
                Absent::Values(f) if single => return Ok(Source::Own(f(q))),
                Absent::Companion if single => return Ok(Source::Companion),
                _ => {
                    return Err(Error::InvalidField(format!(
                        "block {:?}: a side that extrapolates reads point {q:?}, whose block is absent; with Side::Extrapolate use Absent::Clamp or Absent::Coarser",
                        self.key
                    )))
                }
            }
        }
        Ok(Source::Points(out))
    }

    /// The elements and weights predicting point `q` of the block's level from the next
    /// coarser level, whose blocks there must be present.
    fn coarser(&mut self, predictor: Predictor, q: [usize; 3]) -> Result<Vec<(u32, f64)>, Error> {
        let key = self.key;
        let Some(level) = key.level.checked_sub(1) else {
            return Err(Error::InvalidField(format!(
                "block {key:?} of level 0 has an absent neighbour at {q:?}: level 0 has no coarser level to predict from; keep level 0's blocks next to present ones present"
            )));
        };
        let coarse = self.grid.geometry().at_level(level);
        let terms = predictor.point_weights(q, coarse.domain, coarse.dims);
        let mut out = Vec::with_capacity(terms.len());
        for (c, w) in terms {
            match self.element(level, c)? {
                Some(e) => out.push((e, w)),
                None => {
                    return Err(Error::InvalidField(format!(
                        "block {key:?}: the point {q:?} of an absent neighbour is predicted from level {level}'s point {c:?}, whose block {:?} is absent too; keep neighbouring blocks within one level of each other",
                        coarse.key_of(c)
                    )))
                }
            }
        }
        Ok(out)
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
/// entries: it or a neighbour sticks out of the domain, a neighbour lies past a side that
/// mirrors or clamps (or is periodic over a domain that is not whole blocks), or a
/// neighbour is absent under [`Absent::Values`] or [`Absent::Coarser`].
fn neighbours(
    grid: &BlockGrid,
    rule: &HaloRule,
    key: BlockKey,
    side_value: &mut impl FnMut(f64) -> u32,
) -> Result<Option<Vec<i32>>, Error> {
    let g = grid.geometry().at_level(key.level);
    let o = g.origin(key);
    if (0..g.dims).any(|a| o[a] + g.block[a] > g.domain[a]) {
        return Ok(None);
    }
    let mut row = vec![-1; g.directions()];
    'directions: for (dir, slot) in row.iter_mut().enumerate() {
        let step = g.direction(dir);
        let mut index = key.index;
        let mut wraps_past = None;
        for (a, coordinate) in index.iter_mut().enumerate().take(g.dims) {
            let n = g.blocks[a] as i64;
            let mut at = *coordinate as i64 + step[a];
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
        // A neighbour that sticks out of the domain thinner than the halo holds points
        // past its edge where this block's halo reads it, and this same exchange fills
        // them: they are no source. The block takes per-point entries, which resolve
        // those points by the side's rule.
        let no = g.origin(neighbour);
        if (0..g.dims).any(|a| no[a] + g.block[a] > g.domain[a] && g.domain[a] - no[a] < g.halo) {
            return Ok(None);
        }
        match grid.slot(neighbour) {
            Some(s) => *slot = s as i32,
            None if grid.contains(neighbour) => return Err(remote(grid, key, neighbour)),
            None if matches!(rule.absent, Absent::Values(_) | Absent::Coarser(_)) => {
                return Ok(None)
            }
            None => {}
        }
    }
    Ok(Some(row))
}

/// Where a halo point's value comes from.
enum Resolved {
    /// A weighted sum of points inside the domain.
    Points(Vec<([isize; 3], f64)>),
    /// A fixed value.
    Value(f64),
}

/// Maps a global point past the domain's sides to its sources by the sides' rules, axis
/// by axis (a corner point takes both axes' rules; a fixed value on any axis wins).
fn resolve(g: &Geometry, rule: &HaloRule, p: [isize; 3]) -> Resolved {
    let mut points = vec![(p, 1.0)];
    for (a, (&sides, &n)) in rule.sides.iter().zip(&g.domain).enumerate().take(g.dims) {
        let n = n as isize;
        let side = if p[a] < 0 {
            sides[0]
        } else if p[a] >= n {
            sides[1]
        } else {
            continue;
        };
        for (q, w) in points.iter_mut() {
            match side {
                Side::Periodic => q[a] = q[a].rem_euclid(n),
                Side::Mirror(sign) => {
                    q[a] = if q[a] < 0 {
                        -1 - q[a]
                    } else {
                        2 * n - 1 - q[a]
                    };
                    q[a] = q[a].clamp(0, n - 1);
                    *w *= sign;
                }
                Side::Clamp => q[a] = q[a].clamp(0, n - 1),
                Side::Value(v) => return Resolved::Value(v),
                Side::Extrapolate => {}
            }
        }
        if side == Side::Extrapolate {
            let nodes = extrapolation(p[a], n as usize);
            points = points
                .iter()
                .flat_map(|&(q, w)| {
                    nodes.iter().map(move |&(x, wx)| {
                        let mut q = q;
                        q[a] = x as isize;
                        (q, w * wx)
                    })
                })
                .collect();
        }
    }
    Resolved::Points(points)
}
