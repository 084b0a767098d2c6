//! The condition on each side of the rectangle, chosen at run time.

use crate::FloodError;

/// A value given as a time series (a hydrograph): linear between the points, constant
/// before the first and after the last.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    points: Vec<(f64, f64)>,
}

impl Series {
    /// A value that never changes.
    pub fn constant(value: f64) -> Series {
        Series {
            points: vec![(0.0, value)],
        }
    }

    /// A series of `(time, value)` points; the times must increase strictly and every
    /// number be finite. `what` names the series in errors.
    pub fn new(what: &str, points: Vec<(f64, f64)>) -> Result<Series, FloodError> {
        let bad = |expected: String| FloodError::Config {
            name: what.to_string(),
            value: format!("{points:?}"),
            expected,
        };
        if points.is_empty() {
            return Err(bad("at least one (time, value) point".into()));
        }
        if let Some(k) = points
            .iter()
            .position(|(t, v)| !t.is_finite() || !v.is_finite())
        {
            return Err(bad(format!("finite times and values (point {k} is not)")));
        }
        if let Some(k) = points.windows(2).position(|w| w[1].0 <= w[0].0) {
            return Err(bad(format!(
                "strictly increasing times (point {} is not after point {k})",
                k + 1
            )));
        }
        Ok(Series { points })
    }

    /// The value at time `t`.
    pub fn at(&self, t: f64) -> f64 {
        let p = &self.points;
        let k = p.partition_point(|&(s, _)| s <= t);
        if k == 0 {
            return p[0].1;
        }
        if k == p.len() {
            return p[k - 1].1;
        }
        let ((t0, v0), (t1, v1)) = (p[k - 1], p[k]);
        v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    }

    /// Whether the value is the same at every time.
    pub fn is_constant(&self) -> bool {
        self.points.iter().all(|p| p.1 == self.points[0].1)
    }

    /// The smallest value anywhere in the series.
    pub fn min(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min)
    }
}

/// The condition on one side of the domain.
#[derive(Clone, Debug, PartialEq)]
pub enum Boundary {
    /// A reflecting (slip) wall: no flow through the side.
    Wall,
    /// The depth just outside the side is imposed (m); the discharge is extrapolated.
    Depth(Series),
    /// The discharge per unit width into the domain is imposed (m^2/s; negative draws
    /// water out); the surface is extrapolated.
    Discharge(Series),
    /// An absorbing (open, zero-gradient) outlet: waves leave without reflection.
    Open,
    /// The opposite side's cells continue beyond this one. Both sides of an axis must be
    /// periodic.
    Periodic,
}

impl Boundary {
    /// The kind code the kernels read (see [`crate::kernels`]).
    pub fn kind(&self) -> i64 {
        match self {
            Boundary::Wall => 0,
            Boundary::Depth(_) => 1,
            Boundary::Discharge(_) => 2,
            Boundary::Open => 3,
            Boundary::Periodic => 4,
        }
    }

    /// The side's value at time `t` (0 where the kind has none).
    pub fn value_at(&self, t: f64) -> f64 {
        match self {
            Boundary::Depth(s) | Boundary::Discharge(s) => s.at(t),
            _ => 0.0,
        }
    }

    /// Whether the side's value is the same at every time (a wall, an outlet, a constant
    /// depth or discharge): then a step needs no time from the host.
    pub fn is_steady(&self) -> bool {
        match self {
            Boundary::Depth(s) | Boundary::Discharge(s) => s.is_constant(),
            _ => true,
        }
    }

    /// Parses a kind name as written in scenario files and on the command line: `wall`,
    /// `open`, `periodic` (the valued kinds are built with their series).
    pub fn named(name: &str) -> Option<Boundary> {
        match name {
            "wall" => Some(Boundary::Wall),
            "open" => Some(Boundary::Open),
            "periodic" => Some(Boundary::Periodic),
            _ => None,
        }
    }
}

/// The four sides' conditions.
#[derive(Clone, Debug, PartialEq)]
pub struct Boundaries {
    /// `x = x0`.
    pub west: Boundary,
    /// `x = x0 + nx dx`.
    pub east: Boundary,
    /// `y = y0`.
    pub south: Boundary,
    /// `y = y0 + ny dy`.
    pub north: Boundary,
}

impl Boundaries {
    /// The same condition on every side.
    pub fn all(b: Boundary) -> Boundaries {
        Boundaries {
            west: b.clone(),
            east: b.clone(),
            south: b.clone(),
            north: b,
        }
    }

    /// Whether the x (axis 0) or y (axis 1) direction is periodic.
    pub fn periodic(&self, axis: usize) -> bool {
        let (lo, hi) = self.pair(axis);
        *lo == Boundary::Periodic && *hi == Boundary::Periodic
    }

    fn pair(&self, axis: usize) -> (&Boundary, &Boundary) {
        if axis == 0 {
            (&self.west, &self.east)
        } else {
            (&self.south, &self.north)
        }
    }

    /// Whether every side is [`Boundary::is_steady`].
    pub fn steady(&self) -> bool {
        [&self.west, &self.east, &self.south, &self.north]
            .iter()
            .all(|b| b.is_steady())
    }

    /// Whether no water crosses any side (every side a wall or periodic): the volume is
    /// then conserved.
    pub fn closed(&self) -> bool {
        [&self.west, &self.east, &self.south, &self.north]
            .iter()
            .all(|b| matches!(b, Boundary::Wall | Boundary::Periodic))
    }

    /// Checks that periodic sides come in pairs and imposed depths are not negative.
    pub fn validate(&self) -> Result<(), FloodError> {
        for (axis, names) in [(0, ("west", "east")), (1, ("south", "north"))] {
            let (lo, hi) = self.pair(axis);
            if (*lo == Boundary::Periodic) != (*hi == Boundary::Periodic) {
                return Err(FloodError::Config {
                    name: format!("boundaries.{}/{}", names.0, names.1),
                    value: format!("{lo:?} / {hi:?}"),
                    expected: "both sides of an axis periodic, or neither".into(),
                });
            }
        }
        for (name, b) in [
            ("west", &self.west),
            ("east", &self.east),
            ("south", &self.south),
            ("north", &self.north),
        ] {
            if let Boundary::Depth(s) = b {
                if s.min() < 0.0 {
                    return Err(FloodError::Config {
                        name: format!("boundaries.{name}"),
                        value: format!("{s:?}"),
                        expected: "a depth series with no negative value".into(),
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_interpolates_and_holds_its_ends() {
        let s = Series::new("inflow", vec![(0.0, 1.0), (10.0, 3.0), (20.0, 3.0)]).unwrap();
        assert_eq!(s.at(-5.0), 1.0);
        assert_eq!(s.at(5.0), 2.0);
        assert_eq!(s.at(15.0), 3.0);
        assert_eq!(s.at(99.0), 3.0);
        assert!(Series::new("inflow", vec![(0.0, 1.0), (0.0, 2.0)]).is_err());
        assert!(Series::new("inflow", vec![]).is_err());
    }

    #[test]
    fn periodic_sides_come_in_pairs() {
        let mut b = Boundaries::all(Boundary::Wall);
        b.west = Boundary::Periodic;
        let e = b.validate().unwrap_err().to_string();
        assert!(e.contains("west/east"), "{e}");
        b.east = Boundary::Periodic;
        assert!(b.validate().is_ok() && b.periodic(0) && !b.periodic(1));
    }
}
