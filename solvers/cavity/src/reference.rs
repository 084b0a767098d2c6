//! Reference centre-line velocities (Ghia, Ghia & Shin 1982) and the comparison with a
//! run's profiles.

use crate::output::Profiles;
use crate::CavityError;
use std::path::{Path, PathBuf};

/// Published centre-line velocities: `u(0.5, y)` at points `y` and `v(x, 0.5)` at `x`.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// `(y, u)` along the vertical centre line.
    pub u_vertical: Vec<(f64, f64)>,
    /// `(x, v)` along the horizontal centre line.
    pub v_horizontal: Vec<(f64, f64)>,
    /// Where it was read from.
    pub path: PathBuf,
}

/// How far a run's profiles are from a reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Largest `|u - u_ref|` over the reference points of the vertical line.
    pub u_error: f64,
    /// Largest `|v - v_ref|` over the horizontal line's points.
    pub v_error: f64,
    /// The worst point: its coordinate along its line, the run's and the reference value,
    /// and whether it is on the vertical (`u`) line.
    pub worst: (f64, f64, f64, bool),
}

impl Comparison {
    /// The larger of the two lines' errors.
    pub fn max_error(&self) -> f64 {
        self.u_error.max(self.v_error)
    }
}

impl Reference {
    /// The reference file for `re` in `../shared/data/cavity` (found from the working
    /// folder or from this crate's source folder), if one exists: only Re = 100 is there.
    pub fn find(re: f64) -> Option<PathBuf> {
        let name = format!("ghia1982_re{}.csv", re);
        let roots = [
            PathBuf::from("../shared/data/cavity"),
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/data/cavity"
            )),
        ];
        roots.iter().map(|r| r.join(&name)).find(|p| p.is_file())
    }

    /// Reads a CSV of `line,coord,velocity` rows (`#` comments, one header line), `line`
    /// being `u_vertical` or `v_horizontal`.
    pub fn load(path: &Path) -> Result<Reference, CavityError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CavityError::io("reading reference data", path, e))?;
        let bad = |line: usize, cause: String| CavityError::Reference {
            path: path.into(),
            line,
            cause,
        };
        let mut r = Reference {
            u_vertical: Vec::new(),
            v_horizontal: Vec::new(),
            path: path.into(),
        };
        let rows = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .skip(1);
        for (i, line) in rows {
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            let [name, coord, value] = cols[..] else {
                return Err(bad(
                    i + 1,
                    format!("expected 3 columns, found {}", cols.len()),
                ));
            };
            let number = |s: &str| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| bad(i + 1, format!("`{s}` is not a finite number")))
            };
            let point = (number(coord)?, number(value)?);
            match name {
                "u_vertical" => r.u_vertical.push(point),
                "v_horizontal" => r.v_horizontal.push(point),
                other => {
                    return Err(bad(
                        i + 1,
                        format!("unknown line `{other}` (u_vertical or v_horizontal)"),
                    ))
                }
            }
        }
        if r.u_vertical.is_empty() || r.v_horizontal.is_empty() {
            return Err(bad(0, "no points for one of the centre lines".into()));
        }
        Ok(r)
    }

    /// Compares `profiles` with the reference at its points (the run's profiles
    /// interpolated linearly between nodes).
    pub fn compare(&self, profiles: &Profiles) -> Comparison {
        let mut c = Comparison {
            u_error: 0.0,
            v_error: 0.0,
            worst: (0.0, 0.0, 0.0, true),
        };
        let mut worst = -1.0;
        for (vertical, points) in [(true, &self.u_vertical), (false, &self.v_horizontal)] {
            for &(at, expected) in points.iter() {
                let ours = profiles.interpolate(vertical, at);
                let e = (ours - expected).abs();
                if vertical {
                    c.u_error = c.u_error.max(e);
                } else {
                    c.v_error = c.v_error.max(e);
                }
                if e > worst {
                    worst = e;
                    c.worst = (at, ours, expected, vertical);
                }
            }
        }
        c
    }
}
