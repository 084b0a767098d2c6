//! ESRI ASCII grids (`.asc`): a header (`ncols`, `nrows`, `xllcorner` or `xllcenter`,
//! `yllcorner` or `yllcenter`, `cellsize`, optional `NODATA_value`), then `nrows` rows
//! from north to south of `ncols` values from west to east.

use crate::{FloodError, Grid};
use std::path::Path;

/// A raster read from an ESRI ASCII grid: its grid and its values row by row from the
/// south (the order of the solver's fields).
#[derive(Clone, Debug, PartialEq)]
pub struct Raster {
    /// The cells the raster covers (`x0`, `y0`: the outer lower-left corner).
    pub grid: Grid,
    /// One value per cell, row 0 the southernmost.
    pub values: Vec<f64>,
}

fn bad(path: &Path, line: usize, message: String) -> FloodError {
    FloodError::Input {
        file: path.display().to_string(),
        line,
        message,
    }
}

impl Raster {
    /// Reads `path`. A missing or malformed header, a short or long row, a value that is
    /// not a number, a NaN or a `NODATA_value` cell is an error naming the line.
    pub fn read(path: &Path) -> Result<Raster, FloodError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| bad(path, 0, format!("cannot read it: {e}")))?;
        Raster::parse(path, &text)
    }

    /// Writes the raster as an ESRI ASCII grid; `nodata` marks the cells whose value is
    /// NaN (and is declared in the header).
    pub fn write(&self, path: &Path, nodata: f64) -> Result<(), FloodError> {
        use std::fmt::Write as _;
        let g = &self.grid;
        let mut text = String::with_capacity(g.cells() * 10 + 200);
        let _ = writeln!(text, "ncols {}\nnrows {}", g.nx, g.ny);
        let _ = writeln!(text, "xllcorner {}\nyllcorner {}", g.x0, g.y0);
        let _ = writeln!(text, "cellsize {}\nNODATA_value {nodata}", g.dx);
        for j in (0..g.ny).rev() {
            let row = &self.values[j * g.nx..(j + 1) * g.nx];
            for (i, v) in row.iter().enumerate() {
                let v = if v.is_nan() { nodata } else { *v };
                let sep = if i + 1 == g.nx { '\n' } else { ' ' };
                let _ = write!(text, "{v}{sep}");
            }
        }
        std::fs::write(path, text).map_err(|e| FloodError::Output {
            path: path.display().to_string(),
            cause: e.to_string(),
        })
    }

    /// Parses the text of a grid (`path` names it in errors).
    pub fn parse(path: &Path, text: &str) -> Result<Raster, FloodError> {
        let mut lines = text.lines().enumerate().map(|(k, l)| (k + 1, l)).peekable();
        let mut header = std::collections::HashMap::new();
        // Header lines start with a keyword (a letter).
        while let Some(&(n, line)) = lines.peek() {
            let t = line.trim();
            if t.is_empty() {
                lines.next();
                continue;
            }
            let mut parts = t.split_whitespace();
            let first = parts.next().unwrap_or_default();
            // A value row may start with a letter too (`nan`, `inf`): it ends the header.
            if !first.starts_with(|c: char| c.is_ascii_alphabetic()) || first.parse::<f64>().is_ok()
            {
                break;
            }
            let key = first.to_ascii_lowercase();
            let value: f64 = parts
                .next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| bad(path, n, format!("header `{key}` has no numeric value")))?;
            header.insert(key, (value, n));
            lines.next();
        }
        let get = |key: &str| header.get(key).map(|&(v, _)| v);
        let need =
            |key: &str| get(key).ok_or_else(|| bad(path, 1, format!("the header lacks `{key}`")));
        let count = |key: &str| -> Result<usize, FloodError> {
            let v = need(key)?;
            if v.fract() != 0.0 || v < 1.0 {
                return Err(bad(
                    path,
                    header[key].1,
                    format!("`{key}` = {v} is not a positive whole number"),
                ));
            }
            Ok(v as usize)
        };
        let (nx, ny) = (count("ncols")?, count("nrows")?);
        let size = need("cellsize")?;
        let half = 0.5 * size;
        // The lower-left corner along `axis` (`x` or `y`), given or from the centre.
        let corner = |axis: &str| match (
            get(&format!("{axis}llcorner")),
            get(&format!("{axis}llcenter")),
        ) {
            (Some(c), _) => Ok(c),
            (None, Some(c)) => Ok(c - half),
            _ => Err(bad(
                path,
                1,
                format!("the header lacks `{axis}llcorner` (or `{axis}llcenter`)"),
            )),
        };
        let (x0, y0) = (corner("x")?, corner("y")?);
        let grid = Grid::new(nx, ny, size, size, x0, y0)
            .map_err(|e| bad(path, 1, format!("the header describes no valid grid: {e}")))?;
        let nodata = get("nodata_value");
        // Each value takes a character and a separator at least: a header announcing more
        // than the file can hold is refused before the memory is asked for.
        let cells = nx * ny; // `Grid::new` checked it
        if cells > text.len() / 2 + 1 {
            return Err(bad(
                path,
                1,
                format!(
                    "the header announces {nx} x {ny} values, more than the file's {} bytes hold (truncated, or a wrong `ncols` or `nrows`?)",
                    text.len()
                ),
            ));
        }
        let mut values = vec![0.0; cells];
        let mut row = 0;
        for (n, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            if row == ny {
                return Err(bad(
                    path,
                    n,
                    format!("more than the {ny} rows the header announces"),
                ));
            }
            let j = ny - 1 - row;
            let mut i = 0;
            for token in line.split_whitespace() {
                if i == nx {
                    return Err(bad(
                        path,
                        n,
                        format!("row {} has more than {nx} values", row + 1),
                    ));
                }
                let v: f64 = token.parse().map_err(|_| {
                    bad(
                        path,
                        n,
                        format!("value {} (`{token}`) is not a number", i + 1),
                    )
                })?;
                if v.is_infinite() {
                    return Err(bad(
                        path,
                        n,
                        format!("value {} (`{token}`) is not a finite number", i + 1),
                    ));
                }
                if v.is_nan() || Some(v) == nodata {
                    return Err(bad(
                        path,
                        n,
                        format!(
                            "value {} is missing (`{token}`); fill the hole before simulating",
                            i + 1
                        ),
                    ));
                }
                values[j * nx + i] = v;
                i += 1;
            }
            if i < nx {
                return Err(bad(
                    path,
                    n,
                    format!("row {} has {i} values, the header says {nx}", row + 1),
                ));
            }
            row += 1;
        }
        if row < ny {
            return Err(bad(
                path,
                text.lines().count(),
                format!("the file ends after {row} of {ny} rows (truncated?)"),
            ));
        }
        Ok(Raster { grid, values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Raster, FloodError> {
        Raster::parse(Path::new("t.asc"), text)
    }

    const HEADER: &str =
        "ncols 3\nnrows 2\nxllcorner 10\nyllcorner 20\ncellsize 5\nNODATA_value -9999\n";

    #[test]
    fn rows_run_from_north_to_south() {
        let r = parse(&format!("{HEADER}1 2 3\n4 5 6\n")).unwrap();
        assert_eq!(r.values, vec![4.0, 5.0, 6.0, 1.0, 2.0, 3.0]);
        assert_eq!((r.grid.x0, r.grid.y0, r.grid.dx), (10.0, 20.0, 5.0));
    }

    #[test]
    fn a_written_grid_reads_back() {
        let mut r = parse(&format!("{HEADER}1 2.5 3\n4 5 6\n")).unwrap();
        let path = std::env::temp_dir().join(format!("asc-roundtrip-{}.asc", std::process::id()));
        r.write(&path, -9999.0).unwrap();
        assert_eq!(Raster::read(&path).unwrap(), r);
        r.values[1] = f64::NAN;
        r.write(&path, -9999.0).unwrap();
        let e = Raster::read(&path).unwrap_err().to_string();
        assert!(e.contains("line 8") && e.contains("missing"), "{e}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn bad_grids_name_the_line() {
        let cases = [
            (format!("{HEADER}1 2 3\n"), "line 7", "truncated"),
            (format!("{HEADER}1 2 3\n4 5\n"), "line 8", "has 2 values"),
            (format!("{HEADER}1 2 3\n4 x 6\n"), "line 8", "not a number"),
            (format!("{HEADER}1 2 3\n4 -9999 6\n"), "line 8", "missing"),
            (format!("{HEADER}1 2 3\n4 NaN 6\n"), "line 8", "missing"),
            (
                format!("{HEADER}nan 2 3\n4 5 6\n"),
                "line 7",
                "value 1 is missing",
            ),
            (
                format!("{HEADER}1 2 3\ninf 5 6\n"),
                "line 8",
                "not a finite number",
            ),
            (
                "ncols 100000\nnrows 100000\nxllcorner 0\nyllcorner 0\ncellsize 5\n1 2 3\n"
                    .to_string(),
                "line 1",
                "more than the file",
            ),
            (
                format!(
                    "ncols {0}\nnrows {0}\nxllcorner 0\nyllcorner 0\ncellsize 5\n1\n",
                    1u64 << 32
                ),
                "line 1",
                "no valid grid",
            ),
            (
                "ncols 3\nnrows 2\ncellsize 5\n1 2 3\n".to_string(),
                "line 1",
                "xllcorner",
            ),
        ];
        for (text, line, what) in cases {
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(line) && e.contains(what), "{e}");
        }
    }
}
