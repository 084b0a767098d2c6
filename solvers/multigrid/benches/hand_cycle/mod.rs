//! A hand-written Rust reference of one multigrid defect-correction cycle for the 2D
//! Poisson problem, the reference of the issue "CPU backend: hand-written V(2,2) within
//! 1.2x": the benchmark reports the generated cycle's time over this one's.
//!
//! It does what the generated solver's f64 path does in one cycle of `Solver::solve` with
//! [`multigrid::Options::default`] (a V(2,2) cycle, red-black Gauss-Seidel, 2nd order, four
//! Dirichlet sides imposed directly, `ax = ay = 1`, coarsest level 3 nodes per axis):
//!
//! * the defect `r = f - A u` of the finest level is at hand (from the previous cycle, or
//!   from [`HandCycle::new`] for the first);
//! * one V(2,2) cycle for `A e = r` from `e = 0`: on every level but the coarsest, two
//!   red-black sweeps (red half-sweep, colour 0: even `i + j`, then black) from a zero
//!   correction, the residual `t = r - A e`, its full-weighting restriction to the next
//!   level's right-hand side, the cycle on that level from zero, bilinear prolongation
//!   added to the correction, two more sweeps; on the coarsest (3 x 3 nodes, one unknown)
//!   one red-black sweep from zero, which solves it;
//! * `u += e` and the next defect `r = f - A u` with its 2-norm, returned relative to the
//!   initial defect's.
//!
//! Each level's operator is the 5-point stencil with its own `1 / h^2`; the restricted
//! residual is used unscaled as the coarse right-hand side (as the generated cycle does).
//! Every node update evaluates the same expression as the generated kernel, in the same
//! order, so the iterates agree with the generated solver's bit for bit (the norms only to
//! rounding: the sum of squares is added up in another order).
//!
//! How it runs, as one would write it by hand for the CPU: plain `Vec<f64>` arrays of
//! `n x n` nodes, row-major (`x` fastest), no ghost layer: the boundary nodes are part of
//! the arrays and are simply never written (the corrections' stay 0, the solution's keep the
//! boundary values); every loop visits interior nodes only, with no per-point branch. The
//! rows of a level are shared out to rayon tasks of at least [`ROWS_PER_TASK`] rows each,
//! on levels of at least [`PARALLEL_FROM`] nodes per axis; smaller levels run serially.
//! A half-sweep visits only the nodes of its colour (stride 2 along a row), in place.
//!
//! The passes are the generated CPU schedule's (`Schedule::for_backend(&Backend::Cpu)`),
//! one memory pass per kernel: the zeroing of a correction is part of its first red
//! half-sweep (as there), and every other half-sweep, residual, restriction and
//! prolongation is its own pass. One difference: the update `u += e` and the next defect
//! run as one pass into a second solution buffer (the CPU schedule runs them as two
//! passes, because its second buffer would have to be copied back into the caller's after
//! an odd number of cycles; here both buffers are private and simply swap). No pass
//! combines two sweeps (no wavefront or temporal blocking), so the comparison measures how
//! well each pass is compiled and run, not a different schedule.

use rayon::prelude::*;

/// Levels with fewer nodes per axis run their loops serially (a parallel loop costs more
/// to start than their rows take).
const PARALLEL_FROM: usize = 129;

/// The fewest rows a rayon task takes.
const ROWS_PER_TASK: usize = 16;

/// Sweeps before the coarse-grid correction.
const PRE: usize = 2;

/// Sweeps after the coarse-grid correction.
const POST: usize = 2;

/// The partial sums of [`sum_of_squares`].
const LANES: usize = 8;

/// The cycles [`self_check`] runs.
const CHECK_CYCLES: usize = 8;

/// A pointer to a level's correction that the tasks of one red-black half-sweep share.
/// Each task writes only nodes of the half-sweep's colour in its own rows and reads only
/// nodes of the other colour (and of its own nodes): no node is written by one task while
/// another reads it.
#[derive(Clone, Copy)]
struct SharedRows(*mut f64);

// SAFETY: see the type's comment: the tasks touch disjoint nodes for writing, and no node
// is both written and read by different tasks within one half-sweep.
unsafe impl Send for SharedRows {}
unsafe impl Sync for SharedRows {}

impl SharedRows {
    /// The pointer (a method, so that closures capture the whole `Sync` wrapper).
    fn get(self) -> *mut f64 {
        self.0
    }
}

/// Runs `body(j, row)` for the interior rows `j = 1..n - 1` of the `n x n` array `out`, on
/// rayon tasks where the level is large enough.
fn for_rows(out: &mut [f64], n: usize, body: impl Fn(usize, &mut [f64]) + Sync + Send) {
    let interior = &mut out[n..(n - 1) * n];
    if n >= PARALLEL_FROM {
        interior
            .par_chunks_mut(n)
            .enumerate()
            .with_min_len(ROWS_PER_TASK)
            .for_each(|(k, row)| body(k + 1, row));
    } else {
        interior
            .chunks_mut(n)
            .enumerate()
            .for_each(|(k, row)| body(k + 1, row));
    }
}

/// `len` zeros, every page written once here (in parallel where large), so that no page is
/// first touched inside a timed cycle.
fn zeros(len: usize) -> Vec<f64> {
    let mut v = vec![0.0; len];
    v.par_chunks_mut(1 << 16).for_each(|c| c.fill(0.0));
    v
}

/// Row `j` of an `n x n` array.
fn row(a: &[f64], n: usize, j: usize) -> &[f64] {
    &a[j * n..][..n]
}

/// The sum of the squares of `a`, in [`LANES`] partial sums (one dependent addition chain
/// per lane instead of one for all: the loop vectorises).
fn sum_of_squares(a: &[f64]) -> f64 {
    let chunks = a.chunks_exact(LANES);
    let tail: f64 = chunks.remainder().iter().map(|v| v * v).sum();
    let lanes = chunks.fold([0.0; LANES], |mut acc, c| {
        for (s, v) in acc.iter_mut().zip(c) {
            *s += v * v;
        }
        acc
    });
    lanes.iter().sum::<f64>() + tail
}

/// One grid of the hierarchy.
struct Level {
    /// Nodes per axis.
    n: usize,
    /// `1 / h^2`.
    h2inv: f64,
    /// The correction.
    e: Vec<f64>,
    /// The right-hand side: the defect on the finest level, the restricted residual below.
    r: Vec<f64>,
    /// The residual `r - A e` (0 on the boundary).
    t: Vec<f64>,
}

impl Level {
    fn new(n: usize) -> Level {
        let h = 1.0 / (n - 1) as f64;
        Level {
            n,
            h2inv: 1.0 / (h * h),
            e: zeros(n * n),
            r: zeros(n * n),
            t: zeros(n * n),
        }
    }

    /// The reciprocal of the diagonal `4 / h^2`.
    fn inv_diag(&self) -> f64 {
        1.0 / (4.0 * self.h2inv)
    }

    /// `e = 0` and the red half-sweep after it, in one pass: red nodes `r / diag` (their
    /// neighbours are 0), black nodes 0.
    fn red_from_zero(&mut self) {
        let (n, inv) = (self.n, self.inv_diag());
        let r = &self.r;
        for_rows(&mut self.e, n, |j, out| {
            let rr = row(r, n, j);
            let first = 1 + ((j + 1) & 1);
            out[1..n - 1].fill(0.0);
            for (o, &ri) in out[first..n - 1]
                .iter_mut()
                .step_by(2)
                .zip(rr[first..n - 1].iter().step_by(2))
            {
                *o = ri * inv;
            }
        });
    }

    /// One red-black Gauss-Seidel half-sweep over the interior nodes of `colour` (0: even
    /// `i + j`), in place.
    fn half_sweep(&mut self, colour: usize) {
        let (n, h2inv, inv) = (self.n, self.h2inv, self.inv_diag());
        let r = &self.r;
        let e = SharedRows(self.e.as_mut_ptr());
        let sweep_row = move |j: usize| {
            let rr = row(r, n, j);
            let first = 1 + ((j + 1 + colour) & 1);
            // SAFETY: `1 <= j <= n - 2`, so rows `j - 1..=j + 1` lie in the `n x n` array,
            // and `first <= i <= n - 2` keeps `i - 1` and `i + 1` in the row. Nodes of
            // `colour` are written only by the task of their row; their neighbours read
            // here are of the other colour, which this half-sweep never writes.
            unsafe {
                let c = e.get().add(j * n);
                let (s, nn) = (c.sub(n), c.add(n));
                let mut i = first;
                while i < n - 1 {
                    let sum = (*c.add(i - 1) + *c.add(i + 1)) + (*s.add(i) + *nn.add(i));
                    *c.add(i) = (*rr.get_unchecked(i) + sum * h2inv) * inv;
                    i += 2;
                }
            }
        };
        if n >= PARALLEL_FROM {
            (1..n - 1)
                .into_par_iter()
                .with_min_len(ROWS_PER_TASK)
                .for_each(sweep_row);
        } else {
            (1..n - 1).for_each(sweep_row);
        }
    }

    /// One red-black sweep: the red half-sweep, then the black.
    fn sweep(&mut self) {
        self.half_sweep(0);
        self.half_sweep(1);
    }

    /// `sweeps` sweeps from a zero correction.
    fn smooth_from_zero(&mut self, sweeps: usize) {
        self.red_from_zero();
        self.half_sweep(1);
        for _ in 1..sweeps {
            self.sweep();
        }
    }

    /// `t = r - A e` at the interior nodes.
    fn residual(&mut self) {
        let (n, h2inv) = (self.n, self.h2inv);
        let diag = 4.0 * h2inv;
        let (e, r) = (&self.e, &self.r);
        for_rows(&mut self.t, n, |j, out| {
            let (s, c, nn, rr) = (
                row(e, n, j - 1),
                row(e, n, j),
                row(e, n, j + 1),
                row(r, n, j),
            );
            for i in 1..n - 1 {
                let ae = diag * c[i] - ((c[i - 1] + c[i + 1]) + (s[i] + nn[i])) * h2inv;
                out[i] = rr[i] - ae;
            }
        });
    }

    /// Full weighting of `t` into the interior nodes of the next level's right-hand side.
    fn restrict_to(&self, coarse: &mut Level) {
        let (n, nc) = (self.n, coarse.n);
        let t = &self.t;
        let weigh = |a: &[f64], i: usize| 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];
        for_rows(&mut coarse.r, nc, |jc, out| {
            let j = 2 * jc;
            let (s, c, nn) = (row(t, n, j - 1), row(t, n, j), row(t, n, j + 1));
            for (k, o) in out[1..nc - 1].iter_mut().enumerate() {
                let i = 2 * k + 2;
                *o = 0.25 * weigh(s, i) + 0.5 * weigh(c, i) + 0.25 * weigh(nn, i);
            }
        });
    }

    /// `e += P e_coarse`, bilinear, at the interior nodes. A fine node at an even index
    /// along an axis lies on a coarse node, an odd one halfway between two; the weights
    /// are applied as the generated kernel applies them, `c0 + (c1 - c0) / 2`.
    fn prolong_from(&mut self, coarse: &Level) {
        let (n, nc) = (self.n, coarse.n);
        let ce = &coarse.e;
        for_rows(&mut self.e, n, |j, out| {
            let south = row(ce, nc, j / 2);
            // `out[1..n - 1]` in pairs (odd i, even i + 1) and the last node alone.
            let pairs = out[1..n - 2].chunks_exact_mut(2);
            let last = n - 2;
            if j % 2 == 0 {
                for (ic, pair) in pairs.enumerate() {
                    let (c0, c1) = (south[ic], south[ic + 1]);
                    pair[0] += c0 + 0.5 * (c1 - c0);
                    pair[1] += c1;
                }
                let (c0, c1) = (south[nc - 2], south[nc - 1]);
                out[last] += c0 + 0.5 * (c1 - c0);
            } else {
                let north = row(ce, nc, j / 2 + 1);
                let mid = |c0: f64, c1: f64, c2: f64, c3: f64| {
                    let low = c0 + 0.5 * (c1 - c0);
                    let high = c2 + 0.5 * (c3 - c2);
                    (low, 0.5 * (high - low))
                };
                for (ic, pair) in pairs.enumerate() {
                    let (low, half) = mid(south[ic], south[ic + 1], north[ic], north[ic + 1]);
                    pair[0] = pair[0] + low + half;
                    let (c1, c3) = (south[ic + 1], north[ic + 1]);
                    pair[1] = pair[1] + c1 + 0.5 * (c3 - c1);
                }
                let k = nc - 2;
                let (low, half) = mid(south[k], south[k + 1], north[k], north[k + 1]);
                out[last] = out[last] + low + half;
            }
        });
    }
}

/// A V(2,2) cycle on `levels[0]` for its right-hand side, from a zero correction.
fn v_cycle(levels: &mut [Level]) {
    let Some((level, coarser)) = levels.split_first_mut() else {
        return;
    };
    let Some(next) = coarser.first_mut() else {
        // 3 x 3 nodes and Dirichlet sides: one unknown, which one sweep solves.
        level.smooth_from_zero(1);
        return;
    };
    level.smooth_from_zero(PRE);
    level.residual();
    level.restrict_to(next);
    v_cycle(coarser);
    level.prolong_from(&coarser[0]);
    for _ in 0..POST {
        level.sweep();
    }
}

/// A hand-written 2D V(2,2) red-black multigrid hierarchy for -lap(u) = f on the unit square,
/// Dirichlet sides, n = 2^k + 1 nodes per axis.
pub struct HandCycle {
    /// The levels, finest first (its `r` holds the current defect).
    levels: Vec<Level>,
    /// The solution (boundary nodes: the Dirichlet values).
    u: Vec<f64>,
    /// The other solution buffer: `u + e` is written there and the two swap.
    next: Vec<f64>,
    /// The source.
    f: Vec<f64>,
    /// The 2-norm of the initial defect.
    initial: f64,
}

impl HandCycle {
    /// `n` nodes per axis; `f(x, y)` the source; `g(x, y)` the boundary values (u starts as g on the boundary, 0 inside).
    pub fn new(n: usize, g: impl Fn(f64, f64) -> f64, f: impl Fn(f64, f64) -> f64) -> Self {
        assert!(
            n >= 3 && (n - 1).is_power_of_two(),
            "n = {n} is not 2^k + 1"
        );
        let h = 1.0 / (n - 1) as f64;
        let mut u = zeros(n * n);
        let mut source = zeros(n * n);
        for j in 0..n {
            for i in 0..n {
                let (x, y) = (i as f64 * h, j as f64 * h);
                if i == 0 || j == 0 || i == n - 1 || j == n - 1 {
                    u[j * n + i] = g(x, y);
                }
                source[j * n + i] = f(x, y);
            }
        }
        let mut levels = vec![Level::new(n)];
        let mut m = n;
        while m > 3 {
            m = m.div_ceil(2);
            levels.push(Level::new(m));
        }
        let mut hand = HandCycle {
            levels,
            next: u.clone(),
            u,
            f: source,
            initial: 0.0,
        };
        // The correction is 0: this is the initial guess's defect.
        hand.initial = hand.correct_and_defect();
        hand
    }

    /// `next = u + e`, the defect `f - A next` into the finest level's right-hand side,
    /// `u` and `next` swapped; returns the defect's 2-norm.
    fn correct_and_defect(&mut self) -> f64 {
        let level = &mut self.levels[0];
        let (n, h2inv) = (level.n, level.h2inv);
        let diag = 4.0 * h2inv;
        let (u, e, f) = (&self.u, &level.e, &self.f);
        let rows = |j: usize, out: &mut [f64], res: &mut [f64]| -> f64 {
            let (us, uc, un) = (row(u, n, j - 1), row(u, n, j), row(u, n, j + 1));
            let (es, ec, en) = (row(e, n, j - 1), row(e, n, j), row(e, n, j + 1));
            let fr = row(f, n, j);
            for i in 1..n - 1 {
                let c = uc[i] + ec[i];
                let west = uc[i - 1] + ec[i - 1];
                let east = uc[i + 1] + ec[i + 1];
                let south = us[i] + es[i];
                let north = un[i] + en[i];
                let d = fr[i] - (diag * c - ((west + east) + (south + north)) * h2inv);
                out[i] = c;
                res[i] = d;
            }
            sum_of_squares(&res[1..n - 1])
        };
        let next = &mut self.next[n..(n - 1) * n];
        let r = &mut level.r[n..(n - 1) * n];
        let sum: f64 = if n >= PARALLEL_FROM {
            next.par_chunks_mut(n)
                .zip(r.par_chunks_mut(n))
                .enumerate()
                .with_min_len(ROWS_PER_TASK)
                .map(|(k, (out, res))| rows(k + 1, out, res))
                .sum()
        } else {
            next.chunks_mut(n)
                .zip(r.chunks_mut(n))
                .enumerate()
                .map(|(k, (out, res))| rows(k + 1, out, res))
                .sum()
        };
        std::mem::swap(&mut self.u, &mut self.next);
        sum.sqrt()
    }

    /// One defect-correction step around one V(2,2) cycle, exactly as the generated solver's f64 path does one cycle
    /// (defect r = f - A u on the finest level, V-cycle on A e = r from e = 0, u += e), returning the 2-norm of the new defect
    /// relative to the initial one (relative residual, as the generated solver reports).
    pub fn cycle(&mut self) -> f64 {
        if self.initial == 0.0 {
            return 0.0;
        }
        // The whole cycle runs on a worker of rayon's pool, so that its many parallel loops
        // fork from inside the pool instead of each handing its work to the pool from
        // outside and waiting.
        rayon::scope(|_| {
            v_cycle(&mut self.levels);
            self.correct_and_defect() / self.initial
        })
    }
}

/// Runs [`CHECK_CYCLES`] cycles at n = 129 (the benchmark's problem,
/// `u = sin(pi x) sin(2 pi y) + x^2 y`) and checks that each reduces the residual by a
/// factor below 0.1 and that the relative residual ends below 1e-10.
///
/// Eight cycles, not seven: the rate per cycle grows from 0.018 to 0.055 over the first
/// seven, which end at 1.19e-10 on this grid (and at 8.3e-11 on 257^2, as the generated
/// solver's 257^2 solve does); the eighth brings it to about 7e-12.
pub fn self_check() -> Result<(), String> {
    use std::f64::consts::PI;
    let exact = |x: f64, y: f64| (PI * x).sin() * (2.0 * PI * y).sin() + x * x * y;
    let source = |x: f64, y: f64| 5.0 * PI * PI * (PI * x).sin() * (2.0 * PI * y).sin() - 2.0 * y;
    let mut hand = HandCycle::new(129, exact, source);
    let mut previous = 1.0;
    for cycle in 1..=CHECK_CYCLES {
        let residual = hand.cycle();
        let rate = residual / previous;
        if rate.is_nan() || rate >= 0.1 {
            return Err(format!(
                "cycle {cycle}: rate {rate:.3e} (residual {residual:.3e}) is not below 0.1"
            ));
        }
        previous = residual;
    }
    if previous.is_nan() || previous >= 1e-10 {
        return Err(format!(
            "relative residual {previous:.3e} after {CHECK_CYCLES} cycles is not below 1e-10"
        ));
    }
    Ok(())
}

/// The best of 20 hand-written passes on an `n x n` level: (name, seconds) for a whole
/// red-black sweep, the residual, the restriction and the prolongation.
pub fn pass_times(n: usize) -> Vec<(&'static str, f64)> {
    let mut level = Level::new(n);
    let mut coarse = Level::new(n.div_ceil(2));
    for (k, v) in level.r.iter_mut().enumerate() {
        *v = (k % 11) as f64;
    }
    let best = |f: &mut dyn FnMut()| {
        f();
        (0..20)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    rayon::scope(|_| {
        vec![
            ("sweep", best(&mut || level.sweep())),
            ("residual", best(&mut || level.residual())),
            ("restrict", best(&mut || level.restrict_to(&mut coarse))),
            ("prolong", best(&mut || level.prolong_from(&coarse))),
        ]
    })
}
