//! The scenario file as written (TOML sections, deserialised with serde) and how it
//! becomes a checked [`Scenario`]: each section builds its part of the setup, naming the
//! field of any value it refuses.

use super::{gauge, invalid, Output, Scenario};
use crate::{Boundaries, Boundary, FloodError, Grid, Integrator, Physics, Raster, Series};
use crate::{Setup, Terrain, Water};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScenarioFile {
    name: Option<String>,
    end_time: f64,
    grid: Option<GridSection>,
    terrain: TerrainSection,
    #[serde(default)]
    water: WaterSection,
    #[serde(default)]
    physics: PhysicsSection,
    #[serde(default)]
    boundaries: BoundarySection,
    #[serde(default)]
    output: OutputSection,
    #[serde(default, rename = "gauge")]
    gauges: Vec<GaugeSection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GridSection {
    nx: usize,
    ny: usize,
    dx: f64,
    dy: Option<f64>,
    #[serde(default)]
    x0: f64,
    #[serde(default)]
    y0: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TerrainSection {
    file: Option<PathBuf>,
    elevation: Option<f64>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WaterSection {
    surface: Option<f64>,
    depth: Option<f64>,
    surface_file: Option<PathBuf>,
    #[serde(default)]
    u: f64,
    #[serde(default)]
    v: f64,
    #[serde(default, rename = "region")]
    regions: Vec<RegionSection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegionSection {
    x: [f64; 2],
    y: [f64; 2],
    surface: Option<f64>,
    depth: Option<f64>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhysicsSection {
    gravity: Option<f64>,
    manning: Option<f64>,
    theta: Option<f64>,
    courant: Option<f64>,
    dry_depth: Option<f64>,
    integrator: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoundarySection {
    west: Option<toml::Value>,
    east: Option<toml::Value>,
    south: Option<toml::Value>,
    north: Option<toml::Value>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputSection {
    every: Option<f64>,
    times: Option<Vec<f64>>,
    png: Option<bool>,
    gif: Option<bool>,
    vtk: Option<bool>,
    asc: Option<bool>,
    gauge_every: Option<f64>,
    arrival_depth: Option<f64>,
    depth_scale: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GaugeSection {
    name: String,
    x: f64,
    y: f64,
}

impl ScenarioFile {
    pub(super) fn build(self, dir: &Path) -> Result<Scenario, FloodError> {
        if !(self.end_time.is_finite() && self.end_time > 0.0) {
            return Err(invalid("end_time", self.end_time, "a time above 0 s"));
        }
        let terrain = self.terrain.build(dir, self.grid.as_ref())?;
        let grid = *terrain.grid();
        let water = self.water.build(dir, &terrain)?;
        let physics = self.physics.build()?;
        let boundaries = self.boundaries.build()?;
        boundaries.validate()?;
        let output = self.output.build(self.end_time)?;
        let gauges = self
            .gauges
            .into_iter()
            .map(|g| gauge(&grid, g.name, g.x, g.y))
            .collect::<Result<Vec<_>, _>>()?;
        let mut names: Vec<&str> = gauges.iter().map(|g| g.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(invalid("gauge.name", w[0], "a name used by one gauge only"));
        }
        Ok(Scenario {
            name: self.name.unwrap_or_else(|| "scenario".into()),
            setup: Setup::new(terrain, water, boundaries, physics),
            end_time: self.end_time,
            output,
            gauges,
        })
    }
}

impl TerrainSection {
    fn build(&self, dir: &Path, grid: Option<&GridSection>) -> Result<Terrain, FloodError> {
        match (&self.file, self.elevation, grid) {
            (Some(file), None, None) => {
                let raster = Raster::read(&dir.join(file))?;
                Terrain::from_cell_centres(raster.grid, &raster.values)
            }
            (Some(_), None, Some(_)) => Err(invalid(
                "grid",
                "given with terrain.file",
                "no [grid] section: the terrain file sets the grid",
            )),
            (None, Some(z), Some(g)) => {
                let dx = g.dx;
                let grid = Grid::new(g.nx, g.ny, dx, g.dy.unwrap_or(dx), g.x0, g.y0)?;
                if !z.is_finite() {
                    return Err(invalid("terrain.elevation", z, "a finite elevation"));
                }
                Terrain::from_fn(grid, |_, _| z)
            }
            (None, Some(_), None) => Err(invalid(
                "grid",
                "missing",
                "a [grid] section (nx, ny, dx) with terrain.elevation",
            )),
            _ => Err(invalid(
                "terrain",
                "neither or both of `file` and `elevation`",
                "exactly one of `file` (an ESRI ASCII grid) and `elevation` (a flat bed)",
            )),
        }
    }
}

impl WaterSection {
    fn build(&self, dir: &Path, terrain: &Terrain) -> Result<Water, FloodError> {
        let grid = *terrain.grid();
        for (name, v) in [("water.u", self.u), ("water.v", self.v)] {
            if !v.is_finite() {
                return Err(invalid(name, v, "a finite velocity"));
            }
        }
        let mut water = match (self.surface, self.depth, &self.surface_file) {
            (None, None, None) => Water::from_depth(terrain, |_, _| 0.0),
            (Some(eta), None, None) if eta.is_finite() => Water::from_surface(terrain, |_, _| eta),
            (None, Some(h), None) if h.is_finite() && h >= 0.0 => {
                Water::from_depth(terrain, |_, _| h)
            }
            (None, Some(h), None) => {
                return Err(invalid("water.depth", h, "a finite depth >= 0 m"))
            }
            (None, None, Some(file)) => {
                let path = dir.join(file);
                let raster = Raster::read(&path)?;
                if raster.grid != grid {
                    return Err(FloodError::Input {
                        file: path.display().to_string(),
                        line: 1,
                        message: format!(
                            "its grid {:?} differs from the terrain's {:?}",
                            raster.grid, grid
                        ),
                    });
                }
                let surface = (0..grid.cells())
                    .map(|k| raster.values[k].max(terrain.cell(k % grid.nx, k / grid.nx)))
                    .collect();
                Water::still(surface)
            }
            _ => {
                return Err(invalid(
                    "water",
                    "more than one of `surface`, `depth` and `surface_file`",
                    "at most one of them (a finite value)",
                ))
            }
        };
        for (n, r) in self.regions.iter().enumerate() {
            let name = format!("water.region[{n}]");
            let level = |x: f64, y: f64, bed: f64| match (r.surface, r.depth) {
                (Some(eta), None) => Ok(eta.max(bed)),
                (None, Some(h)) if h >= 0.0 => Ok(bed + h),
                (None, Some(h)) => Err(invalid(&format!("{name}.depth"), h, "a depth >= 0 m")),
                _ => Err(invalid(
                    &name,
                    format!("at ({x}, {y})"),
                    "exactly one of `surface` and `depth`",
                )),
            };
            for j in 0..grid.ny {
                for i in 0..grid.nx {
                    let (x, y) = grid.centre(i, j);
                    if (r.x[0]..=r.x[1]).contains(&x) && (r.y[0]..=r.y[1]).contains(&y) {
                        water.surface[j * grid.nx + i] = level(x, y, terrain.cell(i, j))?;
                    }
                }
            }
            if !water.surface.iter().all(|s| s.is_finite()) {
                return Err(invalid(&name, "a non-finite level", "finite values"));
            }
        }
        water.u.fill(self.u);
        water.v.fill(self.v);
        Ok(water)
    }
}

impl PhysicsSection {
    fn build(&self) -> Result<Physics, FloodError> {
        let d = Physics::default();
        let integrator = match self.integrator.as_deref() {
            None | Some("rk2") => Integrator::Rk2,
            Some("euler") => Integrator::Euler,
            Some(other) => {
                return Err(invalid(
                    "physics.integrator",
                    format!("`{other}`"),
                    "`rk2` or `euler`",
                ))
            }
        };
        let physics = Physics {
            gravity: self.gravity.unwrap_or(d.gravity),
            manning: self.manning.unwrap_or(d.manning),
            theta: self.theta.unwrap_or(d.theta),
            courant: self.courant.unwrap_or(d.courant),
            dry_depth: self.dry_depth.unwrap_or(d.dry_depth),
            integrator,
        };
        physics.validate().map_err(|e| match e {
            FloodError::Config {
                name,
                value,
                expected,
            } => invalid(&format!("physics.{name}"), value, &expected),
            other => other,
        })?;
        Ok(physics)
    }
}

impl BoundarySection {
    fn build(&self) -> Result<Boundaries, FloodError> {
        let side = |name: &str, v: &Option<toml::Value>| -> Result<Boundary, FloodError> {
            v.as_ref().map_or(Ok(Boundary::Wall), |v| {
                boundary(&format!("boundaries.{name}"), v)
            })
        };
        Ok(Boundaries {
            west: side("west", &self.west)?,
            east: side("east", &self.east)?,
            south: side("south", &self.south)?,
            north: side("north", &self.north)?,
        })
    }
}

/// What a side may be, for error messages.
const BOUNDARY_KINDS: &str = "\"wall\", \"open\", \"periodic\", { depth = D } or { discharge = Q } (D or Q a number or a hydrograph [[t, value], ...])";

/// One side's condition: a kind name, or a table with a depth or discharge.
fn boundary(name: &str, v: &toml::Value) -> Result<Boundary, FloodError> {
    match v {
        toml::Value::String(s) => {
            Boundary::named(s).ok_or_else(|| invalid(name, format!("\"{s}\""), BOUNDARY_KINDS))
        }
        toml::Value::Table(t) if t.len() == 1 => {
            let (kind, value) = t.iter().next().expect("one entry");
            let series = series(&format!("{name}.{kind}"), value)?;
            match kind.as_str() {
                "depth" => Ok(Boundary::Depth(series)),
                "discharge" => Ok(Boundary::Discharge(series)),
                _ => Err(invalid(name, format!("{{ {kind} = ... }}"), BOUNDARY_KINDS)),
            }
        }
        other => Err(invalid(name, other, BOUNDARY_KINDS)),
    }
}

/// A constant (a number) or a hydrograph (an array of `[time, value]` pairs).
fn series(name: &str, v: &toml::Value) -> Result<Series, FloodError> {
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    if let Some(x) = number(v) {
        return Series::new(name, vec![(0.0, x)]);
    }
    let expected = "a number or an array of [time, value] pairs";
    let rows = v.as_array().ok_or_else(|| invalid(name, v, expected))?;
    let points = rows
        .iter()
        .map(|row| match row.as_array().map(|r| r.as_slice()) {
            Some([t, x]) => match (number(t), number(x)) {
                (Some(t), Some(x)) => Ok((t, x)),
                _ => Err(invalid(name, row, expected)),
            },
            _ => Err(invalid(name, row, expected)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Series::new(name, points)
}

impl OutputSection {
    fn build(&self, end_time: f64) -> Result<Output, FloodError> {
        let mut out = Output::evenly(end_time, 10);
        match (self.every, &self.times) {
            (Some(_), Some(_)) => {
                return Err(invalid("output", "both `every` and `times`", "one of them"))
            }
            (Some(every), None) => {
                if !(every.is_finite() && every > 0.0) {
                    return Err(invalid("output.every", every, "an interval above 0 s"));
                }
                let n = (end_time / every).floor() as usize;
                out.times = (1..=n).map(|k| k as f64 * every).collect();
                if out.times.last().is_none_or(|&t| t < end_time) {
                    out.times.push(end_time);
                }
            }
            (None, Some(times)) => {
                let ok = times.windows(2).all(|w| w[0] < w[1])
                    && times.iter().all(|&t| t > 0.0 && t <= end_time);
                if !ok {
                    return Err(invalid(
                        "output.times",
                        format!("{times:?}"),
                        "increasing times in (0, end_time]",
                    ));
                }
                out.times = times.clone();
            }
            (None, None) => {}
        }
        out.png = self.png.unwrap_or(true);
        out.gif = self.gif.unwrap_or(out.png);
        out.vtk = self.vtk.unwrap_or(true);
        out.asc = self.asc.unwrap_or(true);
        if let Some(g) = self.gauge_every {
            if !(g.is_finite() && g > 0.0) {
                return Err(invalid("output.gauge_every", g, "an interval above 0 s"));
            }
            out.gauge_every = g;
        }
        if let Some(a) = self.arrival_depth {
            if !(a.is_finite() && a > 0.0) {
                return Err(invalid("output.arrival_depth", a, "a depth above 0 m"));
            }
            out.arrival_depth = a;
        }
        if let Some(s) = self.depth_scale {
            if !(s.is_finite() && s >= 0.0) {
                return Err(invalid("output.depth_scale", s, "a depth >= 0 m"));
            }
            out.depth_scale = s;
        }
        Ok(out)
    }
}
