//! Which blocks a sparse run keeps, and how their halos are filled where a neighbour is
//! absent (see the parent module's text).

use crate::model::kernel_cell_bed;
use crate::{Boundaries, Boundary, FloodError, Grid};
use std::sync::Arc;
use stencil_runtime::blocks::{
    Absent, BlockFlags, BlockGrid, BlockKey, Geometry, HaloExchange, HaloRule, Side,
};
use stencil_runtime::{Field, Real};

/// How each kind of field's halos are filled, as wide as the kernels read them (of every
/// present block, or of some: [`exchanges`]).
pub(super) struct Exchanges {
    /// The surface and the velocities (two layers, one launch): where a block is absent,
    /// the dry surface and zero velocities.
    pub state: HaloExchange,
    /// The face fluxes (one layer, east and north: a cell reads the faces of its east and
    /// north neighbours): zero where a block is absent.
    pub faces: HaloExchange,
}

/// The dry surface of cell `(i, j)`: its bed as the kernels compute it.
pub(super) fn dry_surface<T: Real>(corners: &Field<T>, i: usize, j: usize) -> f64 {
    let c = |di: usize, dj: usize| {
        corners
            .get([(i + di) as isize, (j + dj) as isize, 0])
            .unwrap_or(T::zero())
    };
    kernel_cell_bed(c(0, 0), c(1, 0), c(0, 1), c(1, 1))
}

/// The blocks with a cell for which `wet(i, j)` holds (not dry).
pub(super) fn wet_blocks(blocks: &BlockGrid, wet: impl Fn(usize, usize) -> bool) -> Vec<BlockKey> {
    let g = *blocks.geometry();
    g.all_keys()
        .filter(|&key| {
            let o = g.origin(key);
            (o[1]..(o[1] + g.block[1]).min(g.domain[1]))
                .any(|j| (o[0]..(o[0] + g.block[0]).min(g.domain[0])).any(|i| wet(i, j)))
        })
        .collect()
}

/// The blocks of `listed` flagged as not dry, the neighbours their water may reach
/// (across periodic sides too; see the module's text), and the blocks along sides that
/// feed water in, sorted (see [`wanted_map`]).
pub(super) fn wanted_blocks(
    blocks: &BlockGrid,
    listed: &[BlockKey],
    flags: &[BlockFlags],
    sides: &Boundaries,
) -> Vec<BlockKey> {
    let map = wanted_map(blocks, listed, flags, sides);
    let ny = blocks.geometry().blocks[1];
    map.iter()
        .enumerate()
        .filter(|(_, &m)| m)
        .map(|(k, _)| BlockKey::new([(k / ny) as u32, (k % ny) as u32, 0]))
        .collect()
}

/// Where a 2D block lies in a map of the domain's blocks (x index first, so the map
/// reads in key order).
pub(super) fn map_index(blocks: &BlockGrid, key: BlockKey) -> usize {
    key.index[0] as usize * blocks.geometry().blocks[1] + key.index[1] as usize
}

/// [`wanted_blocks`] as a map of the domain's blocks ([`map_index`]): linear in the
/// blocks, no sort and no hashing, as the host decides every few steps while the device
/// runs.
pub(super) fn wanted_map(
    blocks: &BlockGrid,
    listed: &[BlockKey],
    flags: &[BlockFlags],
    sides: &Boundaries,
) -> Vec<bool> {
    let g = *blocks.geometry();
    let n = [g.blocks[0] as i64, g.blocks[1] as i64];
    let mut marked = vec![false; g.blocks[0] * g.blocks[1]];
    let mut mark = |i: i64, j: i64| marked[(i * n[1] + j) as usize] = true;
    for (key, f) in listed.iter().zip(flags).filter(|(_, f)| f.any()) {
        for dj in -1..=1i64 {
            for di in -1..=1i64 {
                let reaches = |d: i64, axis: usize| d == 0 || f.near(axis, usize::from(d > 0));
                if !(reaches(di, 0) && reaches(dj, 1)) {
                    continue;
                }
                let mut at = [key.index[0] as i64 + di, key.index[1] as i64 + dj];
                for a in 0..2 {
                    if sides.periodic(a) {
                        at[a] = at[a].rem_euclid(n[a]);
                    }
                }
                if (0..2).all(|a| (0..n[a]).contains(&at[a])) {
                    mark(at[0], at[1]);
                }
            }
        }
    }
    for key in feeding_blocks(&g, sides) {
        mark(key.index[0] as i64, key.index[1] as i64);
    }
    marked
}

/// The blocks along sides that feed water in (fixed depth or discharge), walked along
/// the sides only.
fn feeding_blocks<'a>(
    g: &'a Geometry,
    sides: &'a Boundaries,
) -> impl Iterator<Item = BlockKey> + 'a {
    let n = [g.blocks[0] as u32, g.blocks[1] as u32];
    let feeds = |b: &Boundary| matches!(b, Boundary::Depth(_) | Boundary::Discharge(_));
    let column = move |i: u32, on: bool| (0..n[1]).filter(move |_| on).map(move |j| [i, j]);
    let row = move |j: u32, on: bool| (0..n[0]).filter(move |_| on).map(move |i| [i, j]);
    column(0, feeds(&sides.west))
        .chain(column(n[0] - 1, feeds(&sides.east)))
        .chain(row(0, feeds(&sides.south)))
        .chain(row(n[1] - 1, feeds(&sides.north)))
        .map(|[i, j]| BlockKey::new([i, j, 0]))
}

/// The dry surface at a point of a slot (what the surface's halo holds where a block is
/// absent): the bed's height inside the domain, across periodic sides the image's, zero
/// past other sides (where the side rules fill the halo instead).
pub(super) fn dry_at<T: Real>(
    corners: &Arc<Field<T>>,
    grid: Grid,
    sides: &Boundaries,
) -> impl Fn([isize; 3]) -> T + Clone {
    let corners = corners.clone();
    let n = [grid.nx as isize, grid.ny as isize];
    let periodic = [sides.periodic(0), sides.periodic(1)];
    move |p: [isize; 3]| {
        let mut q = [p[0], p[1]];
        for a in 0..2 {
            if periodic[a] {
                q[a] = q[a].rem_euclid(n[a]);
            }
            if !(0..n[a]).contains(&q[a]) {
                return T::zero();
            }
        }
        T::from_f64(dry_surface(&corners, q[0] as usize, q[1] as usize))
    }
}

/// The halo exchanges of the present layout: outside the domain what the dense fields
/// hold there (the periodic images along periodic axes, else zero), in absent blocks the
/// dry state.
pub(super) fn exchanges(
    blocks: &BlockGrid,
    boundaries: &Boundaries,
    only: Option<&[BlockKey]>,
) -> Result<Exchanges, FloodError> {
    let side = |axis: usize| {
        if boundaries.periodic(axis) {
            [Side::Periodic; 2]
        } else {
            [Side::Value(0.0); 2]
        }
    };
    let sides = [side(0), side(1), [Side::Value(0.0); 2]];
    let surface = HaloRule {
        sides,
        absent: Absent::Companion,
    };
    let zero = HaloRule {
        sides,
        absent: Absent::Value(0.0),
    };
    let plan = |rule: &HaloRule, widths| match only {
        Some(keys) => HaloExchange::of_blocks(blocks, rule, widths, keys),
        None => HaloExchange::with_widths(blocks, rule, widths),
    };
    Ok(Exchanges {
        state: plan(&surface, [[2, 2]; 3])?,
        faces: plan(&zero, [[0, 1], [0, 1], [0, 0]])?,
    })
}
