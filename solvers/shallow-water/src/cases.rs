//! Built-in cases: each a [`Setup`] and the time it runs to.

use crate::analytic::{DamBreak, Thacker};
use crate::{Boundaries, Boundary, FloodError, Grid, Physics, Raster, Setup, Terrain, Water};
use std::path::Path;

/// A ready-to-run case.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its name.
    pub name: String,
    /// What it starts from.
    pub setup: Setup,
    /// The simulated time it runs to (s).
    pub end_time: f64,
}

/// A 1D dam break on `[0, 1]` (`nx` cells, one row, walls): `h_left` left of 0.5,
/// `h_right` (0: dry, Ritter's case; above 0: Stoker's) right of it, until 0.05 s.
pub fn dam_break(nx: usize, h_left: f64, h_right: f64) -> Result<Case, FloodError> {
    let exact = DamBreak {
        g: 9.81,
        x0: 0.5,
        h_left,
        h_right,
    };
    let grid = Grid::new(nx, 1, 1.0 / nx as f64, 1.0 / nx as f64, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |_, _| 0.0)?;
    let water = Water::from_depth(&terrain, |x, _| exact.at(x, 1e-12).h);
    Ok(Case {
        name: "dam-break".into(),
        setup: Setup::new(
            terrain,
            water,
            Boundaries::all(Boundary::Wall),
            Physics::default(),
        ),
        end_time: 0.05,
    })
}

/// A lake at rest over an irregular bed on `n x n` cells of a 10 m square: bumps, two of
/// them islands rising above the still surface at 0.5 m, walls, for 20 s. Nothing may
/// move.
pub fn lake_at_rest(n: usize) -> Result<Case, FloodError> {
    let d = 10.0 / n as f64;
    let grid = Grid::new(n, n, d, d, 0.0, 0.0)?;
    let bump = |x: f64, y: f64, cx: f64, cy: f64, r: f64| {
        (-((x - cx).powi(2) + (y - cy).powi(2)) / (r * r)).exp()
    };
    let terrain = Terrain::from_fn(grid, |x, y| {
        0.1 * (1.3 * x).sin() * (0.9 * y).cos()
            + 0.8 * bump(x, y, 3.0, 3.5, 1.2)
            + 0.9 * bump(x, y, 7.0, 6.5, 1.0)
            + 0.3 * bump(x, y, 6.0, 2.0, 2.0)
    })?;
    let water = Water::from_surface(&terrain, |_, _| 0.5);
    Ok(Case {
        name: "lake-at-rest".into(),
        setup: Setup::new(
            terrain,
            water,
            Boundaries::all(Boundary::Wall),
            Physics::default(),
        ),
        end_time: 20.0,
    })
}

/// Thacker's planar surface in a paraboloid on `n x n` cells (the SWASHES setup), for
/// three periods.
pub fn thacker(n: usize) -> Result<Case, FloodError> {
    let exact = Thacker::swashes();
    let d = exact.l / n as f64;
    let grid = Grid::new(n, n, d, d, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |x, y| exact.bed(x, y))?;
    let mut water = Water::from_depth(&terrain, |x, y| exact.at(x, y, 0.0).h);
    for j in 0..n {
        for i in 0..n {
            let (x, y) = grid.centre(i, j);
            let e = exact.at(x, y, 0.0);
            water.u[j * n + i] = e.u;
            water.v[j * n + i] = e.v;
        }
    }
    Ok(Case {
        name: "thacker".into(),
        setup: Setup::new(
            terrain,
            water,
            Boundaries::all(Boundary::Wall),
            Physics::default(),
        ),
        end_time: 3.0 * exact.period(),
    })
}

/// A radial dam break over a wavy bed on `n x n` cells of a 100 m square, wet everywhere
/// (1 m of water, 2.5 m inside a 20 m circle), walls, Manning 0.03, for 5 s: the dense
/// benchmark case.
pub fn radial(n: usize) -> Result<Case, FloodError> {
    let d = 100.0 / n as f64;
    let grid = Grid::new(n, n, d, d, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |x, y| 0.2 * (0.1 * x).sin() * (0.13 * y).cos())?;
    let water = Water::from_surface(&terrain, |x, y| {
        if (x - 50.0).powi(2) + (y - 50.0).powi(2) < 400.0 {
            2.5
        } else {
            1.0
        }
    });
    let physics = Physics {
        manning: 0.03,
        ..Physics::default()
    };
    Ok(Case {
        name: "radial".into(),
        setup: Setup::new(terrain, water, Boundaries::all(Boundary::Wall), physics),
        end_time: 5.0,
    })
}

/// A circular pond on `n x n` cells of a 100 m square, 26% of the cells wet (1 m deep,
/// 2.5 m inside a 10 m circle), the rest dry, over a wavy bed, Manning 0.03, walls, 5 s:
/// the benchmark case of dry-block skipping.
pub fn pond(n: usize) -> Result<Case, FloodError> {
    let mut case = radial(n)?;
    let terrain = case.setup.terrain.clone();
    // pi r^2 = 0.26 * 100^2
    let r2 = 0.26 * 1e4 / std::f64::consts::PI;
    case.setup.water = Water::from_surface(&terrain, |x, y| {
        let d2 = (x - 50.0).powi(2) + (y - 50.0).powi(2);
        if d2 < 100.0 {
            2.5
        } else if d2 < r2 {
            1.0
        } else {
            -1.0
        }
    });
    case.name = "pond".into();
    Ok(case)
}

/// The Malpasset dam break from `dir` (`topo.asc`, `eta0.asc`; see its README): the
/// bed from the cell-centre samples, the reservoir and the sea at their surfaces, dry
/// elsewhere, Manning 0.033, walls, 4000 s.
pub fn malpasset(dir: &Path) -> Result<Case, FloodError> {
    let topo = Raster::read(&dir.join("topo.asc"))?;
    let eta = Raster::read(&dir.join("eta0.asc"))?;
    if eta.grid != topo.grid {
        return Err(FloodError::Input {
            file: dir.join("eta0.asc").display().to_string(),
            line: 1,
            message: format!(
                "its grid {:?} differs from topo.asc's {:?}",
                eta.grid, topo.grid
            ),
        });
    }
    let terrain = Terrain::from_cell_centres(topo.grid, &topo.values)?;
    let surface = (0..topo.values.len())
        .map(|k| {
            let (i, j) = (k % topo.grid.nx, k / topo.grid.nx);
            if eta.values[k] > topo.values[k] {
                eta.values[k]
            } else {
                terrain.cell(i, j)
            }
        })
        .collect();
    let physics = Physics {
        manning: 0.033,
        ..Physics::default()
    };
    Ok(Case {
        name: "malpasset".into(),
        setup: Setup::new(
            terrain,
            Water::still(surface),
            Boundaries::all(Boundary::Wall),
            physics,
        ),
        end_time: 4000.0,
    })
}

/// Malpasset on cells `factor` times finer than the data's 15 m (`factor` 3: 5 m, 3453 x
/// 1845 cells): the terrain's cell-centre samples interpolated bilinearly at the finer
/// centres, and each finer cell's initial surface that of the data's cell holding its
/// centre, where that lies above the finer bed (else dry).
pub fn malpasset_resampled(dir: &Path, factor: usize) -> Result<Case, FloodError> {
    if factor == 0 {
        return Err(FloodError::Config {
            name: "resampling factor".into(),
            value: "0".into(),
            expected: "a whole number of finer cells per data cell, 1 or more".into(),
        });
    }
    let topo = Raster::read(&dir.join("topo.asc"))?;
    let eta = Raster::read(&dir.join("eta0.asc"))?;
    let mut case = malpasset(dir)?;
    let g = topo.grid;
    let f = factor as f64;
    let fine = Grid::new(g.nx * factor, g.ny * factor, g.dx / f, g.dy / f, g.x0, g.y0)?;
    // The data at continuous cell index (a, b), bilinearly, clamped to the centres.
    let sample = |a: f64, b: f64| {
        let a = a.clamp(0.0, (g.nx - 1) as f64);
        let b = b.clamp(0.0, (g.ny - 1) as f64);
        let (i, j) = (
            (a as usize).min(g.nx.saturating_sub(2)),
            (b as usize).min(g.ny.saturating_sub(2)),
        );
        let (s, t) = (a - i as f64, b - j as f64);
        let z = |i: usize, j: usize| topo.values[j * g.nx + i];
        let (i1, j1) = ((i + 1).min(g.nx - 1), (j + 1).min(g.ny - 1));
        (1.0 - t) * ((1.0 - s) * z(i, j) + s * z(i1, j))
            + t * ((1.0 - s) * z(i, j1) + s * z(i1, j1))
    };
    let mut centres = Vec::with_capacity(fine.cells());
    for j in 0..fine.ny {
        for i in 0..fine.nx {
            let (x, y) = fine.centre(i, j);
            centres.push(sample((x - g.x0) / g.dx - 0.5, (y - g.y0) / g.dy - 0.5));
        }
    }
    let terrain = Terrain::from_cell_centres(fine, &centres)?;
    let surface = (0..fine.cells())
        .map(|k| {
            let (i, j) = (k % fine.nx, k / fine.nx);
            let coarse = (j / factor) * g.nx + i / factor;
            let e = eta.values[coarse];
            if e > topo.values[coarse] && e > centres[k] {
                e
            } else {
                terrain.cell(i, j)
            }
        })
        .collect();
    case.setup.terrain = terrain;
    case.setup.water = Water::still(surface);
    case.name = format!("malpasset at {} m", g.dx / f);
    Ok(case)
}

/// The Malpasset gauges from `dir/gauges.csv` (`kind,id,x,y`): the transformers, the
/// police survey points and the scale-model gauges, as `(kind-id, x, y)`; the dam's end
/// points (in wall cells) are left out. A malformed row is an error naming its line.
pub fn malpasset_gauges(dir: &Path) -> Result<Vec<(String, f64, f64)>, FloodError> {
    let path = dir.join("gauges.csv");
    let bad = |line: usize, message: String| FloodError::Input {
        file: path.display().to_string(),
        line,
        message,
    };
    let text =
        std::fs::read_to_string(&path).map_err(|e| bad(0, format!("cannot read it: {e}")))?;
    let mut gauges = vec![];
    for (k, line) in text.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [kind, id, x, y] = fields[..] else {
            return Err(bad(
                k + 1,
                format!("expected `kind,id,x,y`, found `{line}`"),
            ));
        };
        let number = |s: &str| {
            s.parse::<f64>()
                .map_err(|_| bad(k + 1, format!("`{s}` is not a coordinate")))
        };
        let (x, y) = (number(x)?, number(y)?);
        if kind != "dam" {
            gauges.push((format!("{kind}-{id}"), x, y));
        }
    }
    Ok(gauges)
}
