//! Scenario files (TOML): the grid, the terrain, the initial water, the boundaries, the
//! physics, what to write and when, and the gauges. Everything is checked when the file
//! is read, before any work: an error names the file and the field (or the line, for a
//! syntax error). `docs/shallow-water.md` documents the format with an example.

use crate::cases::Case;
use crate::{Boundaries, Boundary, FloodError, Grid, Integrator, Physics, Raster, Series};
use crate::{Setup, Terrain, Water};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A point where depth and velocity are recorded as a time series.
#[derive(Clone, Debug, PartialEq)]
pub struct Gauge {
    /// Its name (the CSV file is `gauges/<name>.csv`).
    pub name: String,
    /// Its x.
    pub x: f64,
    /// Its y.
    pub y: f64,
    /// The column of the cell holding it.
    pub i: usize,
    /// The row of that cell.
    pub j: usize,
}

/// What a run writes, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The simulated times (s, increasing, in `(0, end_time]`) of the pictures and VTK
    /// files.
    pub times: Vec<f64>,
    /// PNG pictures of the depth over a hillshade of the terrain.
    pub png: bool,
    /// An animated GIF of those pictures.
    pub gif: bool,
    /// VTK files of the state.
    pub vtk: bool,
    /// ESRI ASCII grids of the maximum depth and the arrival time at the end.
    pub asc: bool,
    /// The gauges' sampling interval (s).
    pub gauge_every: f64,
    /// The depth (m) whose first crossing is a cell's arrival time.
    pub arrival_depth: f64,
    /// The depth (m) shown in the darkest blue; 0 for the largest initial depth.
    pub depth_scale: f64,
}

impl Output {
    /// `frames` evenly spaced output times up to `end_time`, every output on, gauges
    /// sampled a hundred times per run.
    pub fn evenly(end_time: f64, frames: usize) -> Output {
        let n = frames.max(1);
        Output {
            times: (1..=n).map(|k| end_time * k as f64 / n as f64).collect(),
            png: true,
            gif: true,
            vtk: true,
            asc: true,
            gauge_every: end_time / 100.0,
            arrival_depth: 0.05,
            depth_scale: 0.0,
        }
    }
}

/// A complete description of a run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// What it starts from.
    pub setup: Setup,
    /// The simulated time it runs to (s).
    pub end_time: f64,
    /// What it writes.
    pub output: Output,
    /// Where it records time series.
    pub gauges: Vec<Gauge>,
}

impl Scenario {
    /// A built-in case with `frames` evenly spaced outputs and no gauges.
    pub fn from_case(case: Case, frames: usize) -> Scenario {
        Scenario {
            output: Output::evenly(case.end_time, frames),
            name: case.name,
            setup: case.setup,
            end_time: case.end_time,
            gauges: vec![],
        }
    }

    /// Adds gauges at `points` (name, x, y), checking that each lies inside the grid.
    pub fn with_gauges(
        mut self,
        points: impl IntoIterator<Item = (String, f64, f64)>,
    ) -> Result<Scenario, FloodError> {
        let grid = *self.setup.terrain.grid();
        for (name, x, y) in points {
            self.gauges.push(gauge(&grid, name, x, y)?);
        }
        Ok(self)
    }

    /// Reads and checks a scenario file; relative file names in it are relative to it.
    pub fn read(path: &Path) -> Result<Scenario, FloodError> {
        let text = std::fs::read_to_string(path).map_err(|e| FloodError::Input {
            file: path.display().to_string(),
            line: 0,
            message: format!("cannot read it: {e}"),
        })?;
        Scenario::parse(path, &text)
    }

    /// Parses the text of a scenario file (`path` names it in errors and anchors its
    /// relative file names).
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, FloodError> {
        let file: ScenarioFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| {
                text[..s.start.min(text.len())].lines().count().max(1)
            });
            FloodError::Input {
                file: path.display().to_string(),
                line,
                message: e.message().to_string(),
            }
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        file.build(dir).map_err(|e| match e {
            FloodError::Config {
                name,
                value,
                expected,
            } => FloodError::Scenario {
                file: path.display().to_string(),
                field: name,
                message: format!("{value} is invalid: expected {expected}"),
            },
            other => other,
        })
    }
}

/// A gauge at `(x, y)`, which must lie inside `grid`.
fn gauge(grid: &Grid, name: String, x: f64, y: f64) -> Result<Gauge, FloodError> {
    let (i, j) = grid.cell_at(x, y).ok_or_else(|| FloodError::Config {
        name: format!("gauge `{name}`"),
        value: format!("({x}, {y})"),
        expected: format!(
            "a point inside the grid [{}, {}] x [{}, {}]",
            grid.x0,
            grid.x0 + grid.nx as f64 * grid.dx,
            grid.y0,
            grid.y0 + grid.ny as f64 * grid.dy
        ),
    })?;
    Ok(Gauge { name, x, y, i, j })
}

/// A `Config` error for scenario field `name`.
fn invalid(name: &str, value: impl std::fmt::Display, expected: &str) -> FloodError {
    FloodError::Config {
        name: name.into(),
        value: value.to_string(),
        expected: expected.into(),
    }
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
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
    fn build(self, dir: &Path) -> Result<Scenario, FloodError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const BASIN: &str = r#"
name = "basin"
end_time = 10.0
[grid]
nx = 20
ny = 10
dx = 1.0
[terrain]
elevation = 0.0
[water]
depth = 0.5
[[water.region]]
x = [0.0, 5.0]
y = [0.0, 10.0]
depth = 2.0
[boundaries]
east = "open"
west = { discharge = [[0.0, 0.0], [5.0, 1.0]] }
[output]
every = 4.0
[[gauge]]
name = "middle"
x = 10.0
y = 5.0
"#;

    fn parse(text: &str) -> Result<Scenario, FloodError> {
        Scenario::parse(Path::new("test.toml"), text)
    }

    #[test]
    fn a_scenario_builds_its_setup() {
        let s = parse(BASIN).unwrap();
        assert_eq!(s.name, "basin");
        assert_eq!(s.output.times, vec![4.0, 8.0, 10.0]);
        assert_eq!(s.setup.water.surface[0], 2.0);
        assert_eq!(s.setup.water.surface[19], 0.5);
        assert_eq!(s.setup.boundaries.east, Boundary::Open);
        assert_eq!(s.setup.boundaries.west.value_at(2.5), 0.5);
        assert_eq!((s.gauges[0].i, s.gauges[0].j), (10, 5));
    }

    #[test]
    fn bad_scenarios_name_the_field_or_line() {
        let cases = [
            (BASIN.replace("\"open\"", "\"sponge\""), "boundaries.east"),
            (BASIN.replace("depth = 0.5", "depth = -0.5"), "water.depth"),
            (BASIN.replace("x = 10.0", "x = 30.0"), "gauge `middle`"),
            (BASIN.replace("[output]", "[output]\nfps = 3"), "line 19"),
            (
                BASIN.replace("end_time = 10.0", "end_time = \"x\""),
                "line 3",
            ),
            (BASIN.replace("dx = 1.0", ""), "missing field `dx`"),
            (
                BASIN.replace("[water]", "[physics]\ntheta = 3.0\n[water]"),
                "physics.theta",
            ),
        ];
        for (text, expected) in cases {
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(expected), "`{expected}` not in: {e}");
            assert!(e.contains("test.toml"), "the file is not named: {e}");
        }
    }
}
