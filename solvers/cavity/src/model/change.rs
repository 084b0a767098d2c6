//! What a check of the uniform and of the adaptive cavity measures of the vorticity: its
//! change since the last check, from `flow::change`'s sums, the bound a stable run keeps
//! `|w|` within, and the node an instability is reported at.

use super::LID_SPEED;

/// `flow::change`'s sums since the last check, over one launch or several.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Change {
    /// The sum of the squared change of `w`.
    pub moved: f64,
    /// The sum of the squared `w`.
    pub size: f64,
    /// The largest `|w|`.
    pub largest: f64,
}

impl Change {
    /// These sums and those of one more launch over other nodes, `(moved, size, largest)`
    /// as `flow::change` returns them.
    pub fn and(self, (moved, size, largest): (f64, f64, f64)) -> Change {
        Change {
            moved: self.moved + moved,
            size: self.size + size,
            largest: self.largest.max(largest),
        }
    }

    /// The largest `|w|` a stable run reaches on spacing `h`: `100 U / h`.
    pub fn bound(h: f64) -> f64 {
        100.0 * LID_SPEED / h
    }

    /// Whether the sums are finite and `|w|` stays within `bound`.
    pub fn stable(&self, bound: f64) -> bool {
        self.moved.is_finite() && self.size.is_finite() && self.largest <= bound
    }

    /// The relative change of `w` per unit time over `interval` (infinite when no time
    /// passed or `w` is zero).
    pub fn per_time(&self, interval: f64) -> f64 {
        if interval > 0.0 && self.size > 0.0 {
            (self.moved / self.size).sqrt() / interval
        } else {
            f64::INFINITY
        }
    }
}

/// The node of `w` (row by row) an instability is reported at: the first whose value is
/// not finite, else the one of the largest `|w|`.
pub(crate) fn worst_node(w: &[f64]) -> usize {
    w.iter()
        .position(|v| !v.is_finite())
        .or_else(|| (0..w.len()).max_by(|&a, &b| w[a].abs().total_cmp(&w[b].abs())))
        .unwrap_or(0)
}
