//! The fields a run starts from and reports with: the initial state from a setup, the
//! bed's corners, per-cell values as host fields, and where a run went unstable.

use super::{CellFields, Setup, BED_HALO, HALO};
use crate::{Boundaries, FloodError, Grid, Terrain};
use stencil_runtime::{Blowup, Field, Real};

/// The instability of a run on `grid` after `steps` steps at `time` whose depth and
/// velocities are `(h, u, v)`: the first cell (row by row from the south) whose values are
/// not finite or whose depth is negative, else the fastest.
pub(crate) fn instability(
    grid: &Grid,
    steps: u64,
    time: f64,
    (h, u, v): &CellFields,
) -> FloodError {
    let bad = |k: usize| !(h[k].is_finite() && u[k].is_finite() && v[k].is_finite()) || h[k] < 0.0;
    let k = (0..h.len()).find(|&k| bad(k)).unwrap_or_else(|| {
        (0..h.len())
            .max_by(|&a, &b| (u[a].abs() + v[a].abs()).total_cmp(&(u[b].abs() + v[b].abs())))
            .unwrap_or(0)
    });
    let (i, j) = (k % grid.nx, k / grid.nx);
    let (x, y) = grid.centre(i, j);
    FloodError::Unstable {
        at: Blowup {
            step: steps,
            time,
            i,
            j,
            x,
            y,
        },
        depth: h.get(k).copied().unwrap_or(f64::NAN),
        u: u.get(k).copied().unwrap_or(f64::NAN),
        v: v.get(k).copied().unwrap_or(f64::NAN),
    }
}

/// The velocity along an axis of water of depth `h` with discharge `discharge` along it:
/// 0 at or below the dry depth `dry`.
pub(crate) fn velocity(discharge: f64, h: f64, dry: f64) -> f64 {
    if h > dry {
        discharge / h
    } else {
        0.0
    }
}

/// The depth and velocities `(h, u, v)` per cell from the depths `h` and the discharges
/// `q` (along x) and `p` (along y), velocities 0 at or below the dry depth `dry`.
pub(crate) fn with_velocities(h: Vec<f64>, q: &[f64], p: &[f64], dry: f64) -> CellFields {
    let div = |a: &[f64]| -> Vec<f64> {
        a.iter()
            .zip(&h)
            .map(|(&a, &h)| velocity(a, h, dry))
            .collect()
    };
    let (u, v) = (div(q), div(p));
    (h, u, v)
}

/// A host field of `grid`'s cells (halo `halo`, zero there) holding `values`, one per
/// cell row by row from the south; an error naming `what` for another count.
pub(crate) fn cell_field<T: Real>(
    grid: &Grid,
    what: &str,
    values: &[f64],
    halo: usize,
) -> Result<Field<T>, FloodError> {
    grid.check_cells(what, values.len())?;
    let (nx, ny) = (grid.nx as isize, grid.ny as isize);
    Ok(Field::from_fn(&[grid.nx, grid.ny], halo, |[i, j, _]| {
        if (0..nx).contains(&i) && (0..ny).contains(&j) {
            T::from_f64(values[(j * nx + i) as usize])
        } else {
            T::zero()
        }
    }))
}

/// The conserved variables on the host: surface, discharge along x, discharge along y.
pub(crate) type Conserved<T> = (Field<T>, Field<T>, Field<T>);

/// Checks a setup and makes its initial surface and discharges (host fields of halo
/// [`HALO`], zero in the halo): the surface no lower than each cell's bed as the kernels
/// compute it.
pub(crate) fn initial_fields<T: Real>(setup: &Setup) -> Result<Conserved<T>, FloodError> {
    setup.physics.validate()?;
    setup.boundaries.validate()?;
    let grid = *setup.terrain.grid();
    let water = &setup.water;
    for (name, v) in water.named_fields() {
        grid.check_cells(&format!("initial water {name}"), v.len())?;
        if let Some(k) = v.iter().position(|x| !x.is_finite()) {
            return Err(FloodError::Config {
                name: format!("initial water {name}"),
                value: format!("{} in cell ({}, {})", v[k], k % grid.nx, k / grid.nx),
                expected: "finite values".into(),
            });
        }
    }
    for axis in 0..2 {
        let n = [grid.nx, grid.ny][axis];
        if setup.boundaries.periodic(axis) && n < HALO {
            return Err(FloodError::Config {
                name: "grid".into(),
                value: format!("{} x {}", grid.nx, grid.ny),
                expected: format!("at least {HALO} cells along a periodic axis"),
            });
        }
    }
    let extent = [grid.nx, grid.ny];
    let terrain = &setup.terrain;
    let cell = |i: isize, j: isize| -> Option<usize> {
        let inside = (0..grid.nx as isize).contains(&i) && (0..grid.ny as isize).contains(&j);
        inside.then(|| j as usize * grid.nx + i as usize)
    };
    let depth = |k: usize| (water.surface[k] - terrain.cell(k % grid.nx, k / grid.nx)).max(0.0);
    // The surface no lower than the cell's bed as the kernels compute it (in `T`, in
    // their order), so that a dry cell starts with a depth of exactly 0.
    let corner = |i: usize, j: usize| T::from_f64(terrain.corner(i, j));
    let kernel_bed = |i: usize, j: usize| {
        T::from_f64(0.25)
            * (corner(i, j) + corner(i + 1, j) + corner(i, j + 1) + corner(i + 1, j + 1))
    };
    let surface = Field::from_fn(&extent, HALO, |[i, j, _]| match cell(i, j) {
        Some(k) => {
            let (i, j) = (k % grid.nx, k / grid.nx);
            if water.surface[k] > terrain.cell(i, j) {
                Real::max(T::from_f64(water.surface[k]), kernel_bed(i, j))
            } else {
                kernel_bed(i, j)
            }
        }
        None => T::zero(),
    });
    let q = Field::from_fn(&extent, HALO, |[i, j, _]| {
        T::from_f64(cell(i, j).map_or(0.0, |k| depth(k) * water.u[k]))
    });
    let p = Field::from_fn(&extent, HALO, |[i, j, _]| {
        T::from_f64(cell(i, j).map_or(0.0, |k| depth(k) * water.v[k]))
    });
    Ok((surface, q, p))
}

/// A cell's mean bed from its corners, in `T` and in the order the kernels' `cell_bed`
/// computes it: a dry cell's depth is then exactly 0 on the host too.
pub(crate) fn kernel_cell_bed<T: Real>(sw: T, se: T, nw: T, ne: T) -> f64 {
    (T::from_f64(0.25) * (sw + se + nw + ne)).as_f64()
}

/// The bed's corners as a field of the cells' extent: `(i, j)` holds the south-west
/// corner of cell `(i, j)`; the halo holds the last row and column of corners and beyond
/// (the periodic images along a periodic axis, the nearest corner elsewhere).
pub(crate) fn corner_field<T: Real>(terrain: &Terrain, boundaries: &Boundaries) -> Field<T> {
    let g = terrain.grid();
    let index = |k: isize, n: usize, periodic: bool| -> usize {
        if periodic {
            k.rem_euclid(n as isize) as usize
        } else {
            k.clamp(0, n as isize) as usize
        }
    };
    let (px, py) = (boundaries.periodic(0), boundaries.periodic(1));
    Field::from_fn(&[g.nx, g.ny], BED_HALO, |[i, j, _]| {
        T::from_f64(terrain.corner(index(i, g.nx, px), index(j, g.ny, py)))
    })
}
