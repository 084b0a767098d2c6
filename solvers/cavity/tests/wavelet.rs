//! The interpolating wavelet transform on a tree of levels (`cavity::adaptive`), on the
//! CPU: forward then inverse is the identity, polynomials of the predictor's order have
//! no details, the number of significant details falls with eps as the theory says, and
//! adaptation keeps blocks where the details are significant.

use cavity::adaptive::Hierarchy;
use stencil_runtime::blocks::Predictor;
use stencil_runtime::{Backend, BlockField, BlockKey, Field};

/// A smooth function with a sharp layer across the square.
fn layered(x: f64, y: f64) -> f64 {
    ((x - 0.35 - 0.2 * y) / 0.02).tanh() + (3.0 * x).sin() * (2.0 * y).cos()
}

/// `d` on level `level` as a dense field on the host (0 where no block is present).
fn dense_level(h: &Hierarchy, d: &BlockField<f64>, level: u8) -> Field<f64> {
    d.level_to_dense(h.grid(), level, 0, 0.0)
        .unwrap()
        .to_host()
        .unwrap()
}

/// The values of `d` on level `level`'s points `(i, j)` (0 where no block is present).
fn level_values(h: &Hierarchy, d: &BlockField<f64>, level: u8) -> Vec<(usize, usize, f64)> {
    let n = h.points(level);
    let dense = dense_level(h, d, level);
    (0..n * n)
        .map(|k| {
            (
                k % n,
                k / n,
                dense.get([(k % n) as isize, (k / n) as isize, 0]).unwrap(),
            )
        })
        .collect()
}

/// The largest difference between two fields over the present blocks' own points.
fn largest_difference(h: &Hierarchy, a: &BlockField<f64>, b: &BlockField<f64>) -> f64 {
    let mut worst: f64 = 0.0;
    for level in 0..h.levels() {
        let da = dense_level(h, a, level);
        let db = dense_level(h, b, level);
        let n = h.points(level);
        for j in 0..n {
            for i in 0..n {
                let p = [i as isize, j as isize, 0];
                let d = (da.get(p).unwrap() - db.get(p).unwrap()).abs();
                // A NaN difference is the worst of all.
                if d.is_nan() || d > worst {
                    worst = if d.is_nan() { f64::INFINITY } else { d };
                }
            }
        }
    }
    worst
}

#[test]
fn forward_then_inverse_is_the_identity() {
    let cpu = Backend::Cpu;
    for predictor in [Predictor::Cubic, Predictor::Linear] {
        let mut h = Hierarchy::new(&cpu, 17, 8, 4, 4, predictor).unwrap();
        assert_eq!(h.points(3), 129);
        let mut u = h.field::<f64>(layered).unwrap();
        let original = h.field::<f64>(layered).unwrap();
        let mut d = BlockField::zeroed(h.grid()).unwrap();
        h.forward(&mut u, &mut d).unwrap();
        // The details are not small (the layer), and vanish at even points.
        let fine = dense_level(&h, &d, 3);
        let mut largest: f64 = 0.0;
        for j in 0..129 {
            for i in 0..129 {
                let v = fine.get([i, j, 0]).unwrap();
                if i % 2 == 0 && j % 2 == 0 {
                    assert_eq!(v, 0.0);
                }
                largest = largest.max(v.abs());
            }
        }
        assert!(largest > 1e-3, "{predictor:?}: largest detail {largest}");
        // Back, from level 0's values and the details alone.
        let mut back = h.field::<f64>(|_, _| f64::NAN).unwrap();
        let mut work = BlockField::zeroed(h.grid()).unwrap();
        h.inverse(&d, &mut back, &mut work).unwrap();
        let error = largest_difference(&h, &back, &original);
        assert!(
            error < 1e-13,
            "{predictor:?}: forward then inverse is off by {error}"
        );
    }
}

#[test]
fn polynomials_of_the_predictors_order_have_no_details() {
    let cpu = Backend::Cpu;
    let cubic = |x: f64, y: f64| {
        let px = 0.3 - 1.7 * x + 2.2 * x * x - 0.9 * x * x * x;
        let py = 1.1 + 0.4 * y - 1.3 * y * y + 2.0 * y * y * y;
        px * py + x * y * y
    };
    let bilinear = |x: f64, y: f64| 0.5 + 2.0 * x - 3.0 * y + 1.5 * x * y;
    for (predictor, f) in [
        (Predictor::Cubic, &cubic as &dyn Fn(f64, f64) -> f64),
        (Predictor::Linear, &bilinear),
    ] {
        let mut h = Hierarchy::new(&cpu, 9, 8, 4, 4, predictor).unwrap();
        let mut u = h.field::<f64>(f).unwrap();
        let mut d = BlockField::zeroed(h.grid()).unwrap();
        h.forward(&mut u, &mut d).unwrap();
        for level in 1..4 {
            for (i, j, v) in level_values(&h, &d, level) {
                assert!(
                    v.abs() < 1e-12,
                    "{predictor:?}: level {level} detail {v} at ({i}, {j})"
                );
            }
        }
        // One degree more is not reproduced: the test can fail.
        let mut u = h.field::<f64>(|x, y| f(x, y) + x.powi(5) * y).unwrap();
        h.forward(&mut u, &mut d).unwrap();
        let dense = dense_level(&h, &d, 1);
        let largest = (0..17 * 17)
            .map(|c| dense.get([c % 17, c / 17, 0]).unwrap().abs())
            .fold(0.0, f64::max);
        assert!(largest > 1e-6, "{predictor:?}: {largest}");
    }
}

/// The number of details above `eps` on a uniform tree (`levels` levels, all full).
fn significant_count(f: impl Fn(f64, f64) -> f64, predictor: Predictor, eps: &[f64]) -> Vec<usize> {
    let cpu = Backend::Cpu;
    let mut h = Hierarchy::new(&cpu, 17, 16, 5, 5, predictor).unwrap();
    let mut u = h.field::<f64>(f).unwrap();
    let mut d = BlockField::zeroed(h.grid()).unwrap();
    h.forward(&mut u, &mut d).unwrap();
    let mut details = Vec::new();
    for level in 1..h.levels() {
        for (i, j, v) in level_values(&h, &d, level) {
            if i % 2 == 1 || j % 2 == 1 {
                details.push(v.abs());
            }
        }
    }
    eps.iter()
        .map(|&e| details.iter().filter(|&&x| x > e).count())
        .collect()
}

/// The least-squares slope of log(count) against log(eps).
fn slope(eps: &[f64], counts: &[usize]) -> f64 {
    let xs: Vec<f64> = eps.iter().map(|e| e.ln()).collect();
    let ys: Vec<f64> = counts.iter().map(|&c| (c as f64).ln()).collect();
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

#[test]
fn significant_details_fall_with_eps_as_the_theory_says() {
    // For a smooth function in 2D the details of level j are O(h_j^p) (p = 4 cubic, 2
    // linear), so N(eps), the details above eps, grows as eps^(-2/p): slope -1/2 for
    // the cubic predictor and -1 for the linear one, on log-log axes. A sharp layer
    // adds O(1) details along a line, fewer than the smooth part's at small eps.
    let smooth = |x: f64, y: f64| (2.0 * x + 1.0).sin() * (3.0 * y).cos() + x * x * y;
    let eps: Vec<f64> = (0..5).map(|k| 1e-5 * 10f64.powf(-0.5 * k as f64)).collect();
    let cubic = significant_count(smooth, Predictor::Cubic, &eps);
    let linear_eps: Vec<f64> = (0..5).map(|k| 1e-3 * 10f64.powf(-0.5 * k as f64)).collect();
    let linear = significant_count(smooth, Predictor::Linear, &linear_eps);
    let (sc, sl) = (slope(&eps, &cubic), slope(&linear_eps, &linear));
    println!("cubic: counts {cubic:?}, slope {sc:.3}; linear: counts {linear:?}, slope {sl:.3}");
    assert!((sc + 0.5).abs() < 0.15, "cubic slope {sc}");
    assert!((sl + 1.0).abs() < 0.2, "linear slope {sl}");
    // With the layer, counts still fall as eps grows (the eps above fall).
    let layer = significant_count(layered, Predictor::Cubic, &eps);
    assert!(
        layer.windows(2).all(|w| w[0] <= w[1]) && layer[0] < layer[4],
        "{layer:?}"
    );
}

#[test]
fn adaptation_keeps_blocks_where_details_are_significant() {
    let cpu = Backend::Cpu;
    let mut fractions = Vec::new();
    for eps in [1e-2, 1e-4] {
        let mut h = Hierarchy::new(&cpu, 17, 8, 5, 2, Predictor::Cubic).unwrap();
        let mut u = h.field::<f64>(layered).unwrap();
        let mut d = BlockField::zeroed(h.grid()).unwrap();
        // Adapt to the function until the grid settles, the new blocks taking the
        // function's values (as a solver's fields would take the flow's).
        for round in 0..8 {
            h.forward(&mut u, &mut d).unwrap();
            let measures = h.measure(&d, eps, 0.25).unwrap();
            let change = h.adapt(&measures, &mut [&mut u, &mut d]).unwrap();
            if change.is_empty() {
                break;
            }
            assert!(round < 7, "the grid did not settle");
            u = h.field::<f64>(layered).unwrap();
            d = BlockField::zeroed(h.grid()).unwrap();
        }
        h.forward(&mut u, &mut d).unwrap();
        // Every detail of every present block of the finest level's parents is below
        // eps where the finer level is absent (or the grid would have refined).
        let keys = h.grid().keys();
        let present: std::collections::HashSet<BlockKey> = keys.iter().copied().collect();
        let measures = h.measure(&d, eps, 0.25).unwrap();
        for (key, m) in &measures {
            if m.significant && key.level + 1 < h.levels() {
                for c in key.children(2) {
                    if h.grid().geometry().check_key(c).is_ok() {
                        assert!(
                            present.contains(&c),
                            "eps {eps}: {key:?} is significant, child {c:?} absent"
                        );
                    }
                }
            }
        }
        // Forward then inverse is the identity on the adaptive tree too (its halos next to
        // absent blocks predicted from coarser ones).
        let mut back = h.field::<f64>(|_, _| f64::NAN).unwrap();
        let mut work = BlockField::zeroed(h.grid()).unwrap();
        h.inverse(&d, &mut back, &mut work).unwrap();
        let error = largest_difference(&h, &back, &u);
        assert!(error < 1e-12, "eps {eps}: {error}");
        // The finest level is reached at the layer.
        assert!(keys.iter().any(|k| k.level == 4), "eps {eps}");
        fractions.push(h.present_fraction());
    }
    println!("present fractions at eps 1e-2 and 1e-4: {fractions:?}");
    assert!(fractions[0] < fractions[1], "{fractions:?}");
    assert!(fractions[1] < 0.9, "{fractions:?}");
}
