//! Dealing blocks to ranks along a space-filling curve.

use stencil_runtime::BlockKey;

/// The position of block `key` along the Morton (Z-order) curve: the bits of its indices
/// interleaved, x lowest.
pub fn morton(key: BlockKey) -> u128 {
    let mut code = 0u128;
    for bit in 0..32 {
        for (axis, &i) in key.index.iter().enumerate() {
            code |= (((i >> bit) & 1) as u128) << (3 * bit + axis);
        }
    }
    code
}

/// The rank of each of `keys` (in their order) when `ranks` ranks share them: the blocks
/// sorted along the Morton curve and cut into `ranks` runs of about equal total `weight`
/// (e.g. the cells a block computes). Every rank gets at least one block when there are
/// as many blocks as ranks.
pub fn partition(keys: &[BlockKey], weights: &[f64], ranks: usize) -> Vec<usize> {
    assert_eq!(keys.len(), weights.len(), "one weight per block");
    let ranks = ranks.max(1);
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&k| (morton(keys[k]), keys[k].level));
    let total: f64 = weights.iter().sum();
    let mut owners = vec![0; keys.len()];
    let mut before = 0.0;
    // The rank of the block before along the curve (none yet).
    let mut last: Option<usize> = None;
    for (position, &k) in order.iter().enumerate() {
        // The rank whose share the middle of this block's weight falls in ...
        let middle = before + 0.5 * weights[k];
        let by_weight = if total > 0.0 {
            ((middle / total) * ranks as f64) as usize
        } else {
            position * ranks / keys.len().max(1)
        };
        // ... never skipping a rank, never going back, and late enough that the blocks
        // left still give every later rank one.
        let (lo, hi) = match last {
            Some(l) => (l, (l + 1).min(ranks - 1)),
            None => (0, 0),
        };
        let left = keys.len() - position;
        let latest = ranks.saturating_sub(left).min(ranks - 1);
        let owner = by_weight.clamp(lo, hi).max(latest).min(hi.max(latest));
        owners[k] = owner;
        last = Some(owner);
        before += weights[k];
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(nx: u32, ny: u32) -> Vec<BlockKey> {
        (0..ny)
            .flat_map(|j| (0..nx).map(move |i| BlockKey::new([i, j, 0])))
            .collect()
    }

    #[test]
    fn the_curve_visits_quadrants_in_turn() {
        let order: Vec<u128> = keys(2, 2).into_iter().map(morton).collect();
        assert_eq!(order, vec![0, 1, 2, 3]);
        // Three axes interleaved: x's second bit is the code's fourth, z's first its third.
        assert_eq!(morton(BlockKey::new([2, 0, 0])), 8);
        assert_eq!(morton(BlockKey::new([0, 0, 1])), 4);
    }

    #[test]
    fn shares_balance_and_follow_the_curve() {
        let k = keys(8, 6);
        for ranks in 1..=7 {
            let owners = partition(&k, &vec![1.0; k.len()], ranks);
            let mut count = vec![0usize; ranks];
            for &o in &owners {
                count[o] += 1;
            }
            let (lo, hi) = (count.iter().min().unwrap(), count.iter().max().unwrap());
            assert!(hi - lo <= 1, "{ranks} ranks: {count:?}");
            let mut by_curve: Vec<(u128, usize)> = k
                .iter()
                .zip(&owners)
                .map(|(&b, &o)| (morton(b), o))
                .collect();
            by_curve.sort();
            assert!(by_curve.windows(2).all(|w| w[0].1 <= w[1].1));
        }
    }

    #[test]
    fn weights_move_the_cuts() {
        let k = keys(4, 1);
        // One heavy block: it gets a rank of its own.
        let owners = partition(&k, &[10.0, 1.0, 1.0, 1.0], 2);
        assert_eq!(owners, vec![0, 1, 1, 1]);
        // Uneven weights never leave a rank without a block.
        for (weights, ranks) in [([100.0, 1.0, 1.0, 1.0], 3), ([1.0, 1.0, 100.0, 1.0], 4)] {
            let owners = partition(&k, &weights, ranks);
            for r in 0..ranks {
                assert!(owners.contains(&r), "{weights:?} on {ranks}: {owners:?}");
            }
        }
        // More ranks than blocks: every block a rank, the rest idle.
        assert_eq!(partition(&k, &[1.0; 4], 6).len(), 4);
    }
}
