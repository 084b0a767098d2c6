//! Interpolation between the levels of a vertex-centred block grid, and extrapolation
//! past a domain's side: the weights of the interpolating wavelets' predictors.
//!
//! Point `c` of a level lies on point `2c` of the next finer one. A fine point at an even
//! index takes its coarse point's value; one at an odd index `2c + 1` is predicted from
//! the coarse points around it, along each axis separately (the predictor of a point odd
//! along several axes is the product of the axes' weights):
//!
//! - [`Predictor::Linear`]: the mean of `c` and `c + 1`;
//! - [`Predictor::Cubic`]: the cubic through `c - 1 .. c + 2`, weights `(-1, 9, 9, -1) /
//!   16`, and next to a side, where `c - 1` or `c + 2` is past it, the one-sided cubic
//!   through the four nearest points, `(5, 15, -5, 1) / 16`.
//!
//! The language kernels of the wavelet transform compute the same predictions at constant
//! offsets (cubic: `±1` and `±3` on the fine level); their halos past a side hold the
//! cubic extrapolation ([`crate::blocks::Side::Extrapolate`]), which makes their
//! symmetric formula the one-sided one next to the side.

/// The predictor of a fine point from the next coarser level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predictor {
    /// Linear interpolation (second order).
    Linear,
    /// Cubic interpolation (fourth order), one-sided next to the domain's sides.
    Cubic,
}

/// Up to four (coarse index, weight) pairs along one axis.
pub type AxisWeights = Vec<(usize, f64)>;

impl Predictor {
    /// The coarse points and weights that give fine point `q` along an axis whose coarse
    /// level has `n` points (`q` at most `2 (n - 1)`).
    pub fn weights(self, q: usize, n: usize) -> AxisWeights {
        let c = q / 2;
        if q.is_multiple_of(2) {
            return vec![(c, 1.0)];
        }
        match self {
            Predictor::Linear => vec![(c, 0.5), (c + 1, 0.5)],
            Predictor::Cubic if n < 4 => vec![(c, 0.5), (c + 1, 0.5)],
            Predictor::Cubic if c == 0 => one_sided(0, 1),
            Predictor::Cubic if c + 2 > n - 1 => one_sided(n - 1, -1),
            Predictor::Cubic => vec![
                (c - 1, -1.0 / 16.0),
                (c, 9.0 / 16.0),
                (c + 1, 9.0 / 16.0),
                (c + 2, -1.0 / 16.0),
            ],
        }
    }
}

impl Predictor {
    /// The coarse points and weights that give fine point `q` on a level whose next
    /// coarser level has `coarse` points per axis (the first `dims` axes): the product of
    /// the axes' [`Predictor::weights`].
    pub fn point_weights(
        self,
        q: [usize; 3],
        coarse: [usize; 3],
        dims: usize,
    ) -> Vec<([usize; 3], f64)> {
        let mut terms = vec![([0; 3], 1.0)];
        for a in 0..dims {
            let axis = self.weights(q[a], coarse[a]);
            terms = terms
                .iter()
                .flat_map(|&(c, w)| {
                    axis.iter().map(move |&(x, wx)| {
                        let mut c = c;
                        c[a] = x;
                        (c, w * wx)
                    })
                })
                .collect();
        }
        terms
    }
}

/// The one-sided cubic from side point `s` inwards along `step` (+1 or -1): the points
/// `s, s + step, s + 2 step, s + 3 step` with weights `(5, 15, -5, 1) / 16`, for the
/// fine point between the first two.
fn one_sided(s: usize, step: isize) -> AxisWeights {
    [5.0, 15.0, -5.0, 1.0]
        .iter()
        .enumerate()
        .map(|(k, w)| ((s as isize + k as isize * step) as usize, w / 16.0))
        .collect()
}

/// The cubic extrapolation of point `p` past a side of an axis of `n` points (`p < 0` or
/// `p >= n`) from the four nearest points inside of `p`'s parity: the points the
/// wavelet predictors read at stride 2. Fewer than eight points along the axis: from as
/// many as there are (at least one).
pub fn extrapolation(p: isize, n: usize) -> Vec<(usize, f64)> {
    let n = n as isize;
    // The nodes: the first points inside from the side, of p's parity, nearest first.
    let (first, step) = if p < 0 {
        (p.rem_euclid(2), 2)
    } else {
        (n - 1 - (p - (n - 1)).rem_euclid(2), -2)
    };
    let nodes: Vec<isize> = (0..4)
        .map(|k| first + k * step)
        .filter(|x| (0..n).contains(x))
        .collect();
    let nodes = if nodes.is_empty() {
        vec![p.clamp(0, n - 1)]
    } else {
        nodes
    };
    // Lagrange weights of the polynomial through the nodes, at p.
    nodes
        .iter()
        .map(|&xm| {
            let w: f64 = nodes
                .iter()
                .filter(|&&xk| xk != xm)
                .map(|&xk| (p - xk) as f64 / (xm - xk) as f64)
                .product();
            (xm as usize, w)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(w: &[(usize, f64)], f: impl Fn(f64) -> f64, x_of: impl Fn(usize) -> f64) -> f64 {
        w.iter().map(|&(i, w)| w * f(x_of(i))).sum()
    }

    #[test]
    fn predictors_reproduce_polynomials_of_their_order() {
        let n = 9; // coarse points 0..=8 at x = 2c; fine points 0..=16 at x = q
        let cubic = |x: f64| 0.5 - 1.25 * x + 0.75 * x * x - 0.125 * x * x * x;
        let line = |x: f64| 3.0 - 0.5 * x;
        for q in 0..=16 {
            let c = apply(&Predictor::Cubic.weights(q, n), cubic, |c| 2.0 * c as f64);
            assert!((c - cubic(q as f64)).abs() < 1e-9, "cubic at {q}: {c}");
            let l = apply(&Predictor::Linear.weights(q, n), line, |c| 2.0 * c as f64);
            assert!((l - line(q as f64)).abs() < 1e-12, "linear at {q}: {l}");
        }
        // The interior cubic weights are the classical ones.
        assert_eq!(
            Predictor::Cubic.weights(7, n),
            vec![(2, -0.0625), (3, 0.5625), (4, 0.5625), (5, -0.0625)]
        );
    }

    #[test]
    fn extrapolation_is_cubic_at_stride_two() {
        let f = |x: f64| 1.0 + x - 0.3 * x * x + 0.01 * x * x * x;
        let n = 17;
        for p in [-1isize, -2, -3, 17, 18, 19] {
            let w = extrapolation(p, n);
            assert_eq!(w.len(), 4);
            assert!(
                w.iter().all(|&(x, _)| (x as isize - p) % 2 == 0),
                "{p}: {w:?}"
            );
            let v = apply(&w, f, |x| x as f64);
            assert!(
                (v - f(p as f64)).abs() < 1e-9,
                "{p}: {v} against {}",
                f(p as f64)
            );
        }
        // The halo point two past the side makes the symmetric cubic the one-sided one:
        // -u(-2) + 9u(0) + 9u(2) - u(4) = 5u(0) + 15u(2) - 5u(4) + u(6).
        assert_eq!(
            extrapolation(-2, n),
            vec![(0, 4.0), (2, -6.0), (4, 4.0), (6, -1.0)]
        );
        assert_eq!(extrapolation(-1, 1), vec![(0, 1.0)]);
    }
}
