//! Scenario files (TOML): the grid, the terrain, the initial water, the boundaries, the
//! physics, what to write and when, and the gauges. Everything is checked when the file
//! is read, before any work: an error names the file and the field (or the line, for a
//! syntax error). `docs/shallow-water.md` documents the format with an example.

mod file;

use crate::cases::Case;
use crate::{FloodError, Grid, Setup};
use file::ScenarioFile;
use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Boundary;

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
