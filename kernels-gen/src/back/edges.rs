//! Edge tests decided away from the edges.
//!
//! Kernels handle the domain's edges with tests on the point's index (`i == 0`,
//! `i == n - 1`, `i <= 1`, ...). A CPU row runs the points near the low and the high edge
//! along axis 0 and those between in separate loops (`stencil_runtime::cpu::split_row`);
//! in the middle loop every index `i` lies in `[EDGE_MARGIN, n - 1 - EDGE_MARGIN]`, and the
//! tests this module decides are emitted there as constants, so that the code they guard
//! folds away and what depends only on the row (a diagonal, its reciprocal) is hoisted
//! out of the loop.
//!
//! Kernels that weigh by the parity of an index (`index(0) % 2 == 1`: a prolongation's
//! weights) have those tests decided too ([`decided_by_parity`]): along axis 0 the middle
//! points run in pairs, an even point then an odd one; along axes 1 and 2 rows of even and
//! of odd index run separate copies of the loop (`back::rust::middle`).

use crate::ir::{Binary, Comparison, Kernel, Node, NodeId};

/// The distance from either edge along axis 0 of every point of the middle loop (the
/// generated code hands it to `split_row`).
pub const EDGE_MARGIN: i64 = 2;

/// The bounds of `i - x` for indices `i` along `axis` at least [`EDGE_MARGIN`] from both
/// ends, for an operand `x` that is a constant `c` (`i - c >= EDGE_MARGIN - c`) or `n - c`
/// (`i - (n - c) <= c - 1 - EDGE_MARGIN`), with `n` the extent along `axis`.
fn difference_bounds(k: &Kernel, x: NodeId, axis: u8) -> Option<(Option<i64>, Option<i64>)> {
    let extent_minus = |c: i64| Some((None, Some(c - 1 - EDGE_MARGIN)));
    match k.nodes[x as usize] {
        Node::IntConst(c) => Some((Some(EDGE_MARGIN - c), None)),
        Node::Extent(a) if a == axis => extent_minus(0),
        Node::Binary(Binary::Sub, a, b) => match (&k.nodes[a as usize], &k.nodes[b as usize]) {
            (&Node::Extent(e), &Node::IntConst(c)) if e == axis => extent_minus(c),
            _ => None,
        },
        _ => None,
    }
}

/// The value of `d op 0` for every `d` in `[lo, hi]` (an absent bound is unbounded), if
/// it is the same for all.
fn decide(op: Comparison, lo: Option<i64>, hi: Option<i64>) -> Option<bool> {
    let above = lo.is_some_and(|l| l > 0); // d > 0 throughout
    let below = hi.is_some_and(|h| h < 0); // d < 0 throughout
    let at_least = lo.is_some_and(|l| l >= 0);
    let at_most = hi.is_some_and(|h| h <= 0);
    match op {
        Comparison::Eq if above || below => Some(false),
        Comparison::Ne if above || below => Some(true),
        Comparison::Lt if below => Some(true),
        Comparison::Lt if at_least => Some(false),
        Comparison::Le if at_most => Some(true),
        Comparison::Le if above => Some(false),
        Comparison::Gt if above => Some(true),
        Comparison::Gt if at_most => Some(false),
        Comparison::Ge if at_least => Some(true),
        Comparison::Ge if below => Some(false),
        _ => None,
    }
}

/// The comparisons among `live` that compare the index along axis 0 with a constant or
/// with the extent minus a constant and have the same value at every point of the middle
/// loop, with that value.
pub fn decided_in_middle(k: &Kernel, live: &[NodeId]) -> Vec<(NodeId, bool)> {
    decided_along(k, live, 0)
}

/// The comparisons among `live` of the index along axis 1 or 2 with a constant or with
/// the extent minus a constant that have the same value on every row whose indices along
/// both axes lie at least [`EDGE_MARGIN`] from their ends (an interior row), with that
/// value: the CPU runs such rows' middle points with these decided too.
pub fn decided_in_interior_rows(k: &Kernel, live: &[NodeId]) -> Vec<(NodeId, bool)> {
    let mut decided = decided_along(k, live, 1);
    decided.extend(decided_along(k, live, 2));
    decided
}

/// The comparisons of the index along `axis` that [`difference_bounds`] decides.
fn decided_along(k: &Kernel, live: &[NodeId], axis: u8) -> Vec<(NodeId, bool)> {
    let is_index = |n: NodeId| matches!(k.nodes[n as usize], Node::Index(a) if a == axis);
    live.iter()
        .filter_map(|&n| {
            let Node::Binary(Binary::Compare(op), a, b) = k.nodes[n as usize] else {
                return None;
            };
            let (op, other) = if is_index(a) {
                (op, b)
            } else if is_index(b) {
                (op.swapped(), a)
            } else {
                return None;
            };
            let (lo, hi) = difference_bounds(k, other, axis)?;
            decide(op, lo, hi).map(|value| (n, value))
        })
        .collect()
}

/// The comparisons among `live` of `index(axis) % 2` with a constant (`==` or `!=`,
/// either side), with their values at an even and at an odd index (indices are >= 0, so
/// the remainder is 0 or 1).
pub fn decided_by_parity(k: &Kernel, live: &[NodeId], axis: u8) -> Vec<(NodeId, bool, bool)> {
    let is_parity = |n: NodeId| match k.nodes[n as usize] {
        Node::Binary(Binary::Rem, a, b) => {
            matches!(k.nodes[a as usize], Node::Index(x) if x == axis)
                && matches!(k.nodes[b as usize], Node::IntConst(2))
        }
        _ => false,
    };
    let constant = |n: NodeId| match k.nodes[n as usize] {
        Node::IntConst(c) => Some(c),
        _ => None,
    };
    live.iter()
        .filter_map(|&n| {
            let Node::Binary(Binary::Compare(op @ (Comparison::Eq | Comparison::Ne)), a, b) =
                k.nodes[n as usize]
            else {
                return None;
            };
            let c = if is_parity(a) {
                constant(b)?
            } else if is_parity(b) {
                constant(a)?
            } else {
                return None;
            };
            let equal = |remainder: i64| (remainder == c) == (op == Comparison::Eq);
            Some((n, equal(0), equal(1)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_with_constants_and_the_far_edge_are_decided() {
        // i >= 2: i - 0 >= 2, i - 1 >= 1, i - 2 >= 0, i - 3 >= -1.
        assert_eq!(decide(Comparison::Eq, Some(2), None), Some(false));
        assert_eq!(decide(Comparison::Eq, Some(0), None), None);
        assert_eq!(decide(Comparison::Ge, Some(0), None), Some(true));
        assert_eq!(decide(Comparison::Lt, Some(1), None), Some(false));
        assert_eq!(decide(Comparison::Gt, Some(-1), None), None);
        // i <= n - 3: i - (n - 1) <= -2, i - (n - 2) <= -1, i - (n - 3) <= 0.
        assert_eq!(decide(Comparison::Eq, None, Some(-2)), Some(false));
        assert_eq!(decide(Comparison::Ne, None, Some(-1)), Some(true));
        assert_eq!(decide(Comparison::Le, None, Some(0)), Some(true));
        assert_eq!(decide(Comparison::Eq, None, Some(0)), None);
        assert_eq!(decide(Comparison::Gt, None, Some(0)), Some(false));
    }
}
