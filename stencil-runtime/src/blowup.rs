//! [`Blowup`]: when and where a simulation on a grid went unstable, for the error that
//! stops it.

use std::fmt;

/// When and where a run went unstable: the step and simulated time it was found at, and
/// the grid point (a node or a cell, `(i, j)` from the south-west corner) with its
/// coordinates.
///
/// Shown as `step 40 (t = 0.123456), (12, 30) at (x, y) = (0.3750, 0.9375)`; the
/// coordinates take the format's precision (`{:.3}`), four decimals when it gives none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blowup {
    /// The step after which it was found.
    pub step: u64,
    /// Simulated time then.
    pub time: f64,
    /// The point's index along x.
    pub i: usize,
    /// Its index along y.
    pub j: usize,
    /// Its x.
    pub x: f64,
    /// Its y.
    pub y: f64,
}

impl fmt::Display for Blowup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Blowup {
            step,
            time,
            i,
            j,
            x,
            y,
        } = *self;
        let p = f.precision().unwrap_or(4);
        write!(
            f,
            "step {step} (t = {time:.6}), ({i}, {j}) at (x, y) = ({x:.p$}, {y:.p$})"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Blowup;

    #[test]
    fn shows_the_step_time_and_place() {
        let b = Blowup {
            step: 40,
            time: 0.123_456_7,
            i: 12,
            j: 30,
            x: 0.375,
            y: 0.9375,
        };
        assert_eq!(
            b.to_string(),
            "step 40 (t = 0.123457), (12, 30) at (x, y) = (0.3750, 0.9375)"
        );
        assert_eq!(
            format!("{b:.1}"),
            "step 40 (t = 0.123457), (12, 30) at (x, y) = (0.4, 0.9)"
        );
    }
}
