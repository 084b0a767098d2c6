//! `break` and `continue` in loops with constant bounds, against the same loops written in
//! plain Rust: on the interpreter and the host JIT (the device runs the JIT's IR), with
//! outputs and a reduction written after the exits, and nested loops.

use stencil_runtime::{Field, Real};
use stencil_tests::for_precisions;
use stencil_tests::harness::{kernel_ir, poisoned, random_field, rng, run, values, Path};

/// A search with both exits: from the next six points, the distance of the first above
/// 1.6 (0 if none), skipping distance 2, and the sum of the points looked at; the sum
/// is also reduced. Then a nested search: the first pair (i, j) with a[i] + a[j] > 3.5.
const SOURCE: &str = "#[stencil(dims = 1, halo = 6)]
    fn search<T: Real>(a: In<T>, first: Out<T>, seen: Out<T>, pair: Out<T>, total: Sum<T>) {
        let mut found = 0.0;
        let mut sum = 0.0;
        let mut d = 0.0;
        for k in 1..=6 {
            d += 1.0;
            if k == 2 {
                continue;
            }
            sum += a[k];
            total.reduce(a[k]);
            if a[k] > 1.6 {
                found = d;
                break;
            }
        }
        first = found;
        seen = sum;
        let mut p = 0.0;
        for i in 0..3 {
            for j in 1..4 {
                if a[i] + a[j] > 3.5 {
                    p = (10 * i + j) as T;
                    break;
                }
            }
            if p > 0.0 {
                break;
            }
        }
        pair = p;
    }";

/// The same in Rust: `(first, seen, pair)` where `at(k)` is the point `k` along.
fn expected(at: impl Fn(i64) -> f64) -> (f64, f64, f64) {
    let (mut found, mut sum, mut d) = (0.0, 0.0, 0.0);
    for k in 1..=6 {
        d += 1.0;
        if k == 2 {
            continue;
        }
        sum += at(k);
        if at(k) > 1.6 {
            found = d;
            break;
        }
    }
    let mut p = 0.0;
    'outer: for i in 0..3 {
        for j in 1..4 {
            if at(i) + at(j) > 3.5 {
                p = (10 * i + j) as f64;
                break 'outer;
            }
        }
    }
    (found, sum, p)
}

#[test]
fn break_and_continue_leave_loops_as_in_rust() {
    let k = kernel_ir(SOURCE, "search");
    let n = 500;
    let mut r = rng("break");
    for_precisions!(T => {
        let a = random_field::<T>(&mut r, &[n], 6, 0.5, 2.0);
        for path in [Path::Interpreter, Path::HostJit] {
            let mut out: Vec<Field<T>> = (0..3).map(|_| poisoned(&[n])).collect();
            let reduced = run(path, &k, &[&a], &mut out, &[]);
            let got: Vec<Vec<f64>> = out.iter().map(values).collect();
            let mut total = 0.0;
            let mut exits = [0; 2];
            let rows = got[0].iter().zip(&got[1]).zip(&got[2]).enumerate();
            for (i, ((&g_first, &g_seen), &g_pair)) in rows {
                let at = |k: i64| {
                    let p = [i as isize + k as isize, 0, 0];
                    a.get(p).expect("in the halo").as_f64()
                };
                let (first, seen, pair) = expected(at);
                let tol = 1e-5 * seen.abs().max(1.0);
                assert_eq!(g_first, first, "{path:?} first at {i}");
                assert!(
                    (g_seen - seen).abs() <= tol,
                    "{path:?} seen at {i}: {g_seen} against {seen}"
                );
                assert_eq!(g_pair, pair, "{path:?} pair at {i}");
                total += seen;
                exits[usize::from(first > 0.0)] += 1;
            }
            // Both outcomes occur, so both paths through the exits are tested.
            assert!(exits[0] > 10 && exits[1] > 10, "{exits:?}");
            assert!(
                (reduced[0] - total).abs() <= 1e-4 * total,
                "{path:?} total {} against {total}",
                reduced[0]
            );
        }
    });
}
