//! The smoothing kernels, in the stencil language: one thread per vertex of a colour,
//! each moving its vertex within its cavity (the triangles around it).
//!
//! Per vertex: the coordinates `x`, `y` and the metric `[[m11, m12], [m12, m22]]`, all
//! updated in place. A candidate position is judged by the cavity's smallest quality
//! (Vasilevskii & Lipnikov) with the vertex moved there; -1 if a triangle would be
//! inverted or degenerate. The metric at the candidate is interpolated barycentrically in
//! the cavity triangle (with the vertex at its present place) that holds it (`relocate`,
//! `search`), or bilinearly from a super-sampled copy of the metric field, three
//! [`stencil_runtime::SampledGrid`]s (`relocate` and `search` made for `sampled = true`; on the GPU
//! optionally through textures with hardware filtering).
//!
//! The vertices of a colour share no edge, so each one reads only vertices that do not
//! move in that launch: the CPU (any number of threads) and the GPU give the same mesh.

use stencil_runtime::prelude::*;

#[stencils]
pub mod smoothing {
    /// The fields of a mesh's vertices that the smoothing reads and moves, taken as one
    /// group (`v: InOut<Vertices<T>>`): the position and the metric `[[m11, m12], [m12,
    /// m22]]`. On the host, a struct of five fields.
    #[stencil_group]
    #[derive(Debug)]
    pub struct Vertices<T> {
        /// The x coordinate.
        pub x: T,
        /// The y coordinate.
        pub y: T,
        /// The metric's first diagonal entry.
        pub m11: T,
        /// The metric's off-diagonal entry.
        pub m12: T,
        /// The metric's second diagonal entry.
        pub m22: T,
    }

    /// Twice the signed area of the triangle `(p, q, r)`.
    #[stencil_fn]
    fn cross<T: Real>(px: T, py: T, qx: T, qy: T, rx: T, ry: T) -> T {
        (qx - px) * (ry - py) - (qy - py) * (rx - px)
    }

    /// The size factor `F(x) = (min(x, 1/x) (2 - min(x, 1/x)))^3` of the quality.
    #[stencil_fn]
    fn size_factor<T: Real>(x: T) -> T {
        let m = x.min(1.0 / x);
        let f = m * (2.0 - m);
        f * f * f
    }

    /// The quality of triangle `(p, q, r)` (counter-clockwise) in the metric
    /// `[[a, b], [b, c]]` (the mean of its corners'): `12 sqrt(3) |K|_M / |dK|_M^2 *
    /// F(|dK|_M / 3)`, 1 for an equilateral triangle with unit edges in the metric; -1 if
    /// the triangle is inverted or degenerate.
    #[stencil_fn]
    fn quality<T: Real>(px: T, py: T, qx: T, qy: T, rx: T, ry: T, a: T, b: T, c: T) -> T {
        let twice = cross(px, py, qx, qy, rx, ry);
        let area = 0.5 * twice * det2(a, b, b, c).sqrt();
        let perimeter = sym2_length2(a, b, c, qx - px, qy - py).sqrt()
            + sym2_length2(a, b, c, rx - qx, ry - qy).sqrt()
            + sym2_length2(a, b, c, px - rx, py - ry).sqrt();
        let q = 20.784609690826528 * area / (perimeter * perimeter) * size_factor(perimeter / 3.0);
        if twice > 0.0 {
            q
        } else {
            -1.0
        }
    }

    /// The unit direction `k` (0 to 7) of the pattern search, x component.
    #[stencil_fn]
    fn compass_x<T: Real>(k: i64, h: T) -> T {
        let d = 0.7071067811865476;
        if k == 0 {
            h
        } else if k == 1 || k == 7 {
            d * h
        } else if k == 3 || k == 5 {
            -d * h
        } else if k == 4 {
            -h
        } else {
            0.0 * h
        }
    }

    /// The unit direction `k` (0 to 7) of the pattern search, y component.
    #[stencil_fn]
    fn compass_y<T: Real>(k: i64, h: T) -> T {
        compass_x((k + 6) % 8, h)
    }

    /// The smallest quality of the cavity (the triangles around the vertex) with the vertex
    /// at `(cx, cy)` and metric `[[c11, c12], [c12, c22]]` there.
    #[stencil_fn]
    fn cavity_quality<T: Real>(
        mesh: Mesh,
        v: In<Vertices<T>>,
        cx: T,
        cy: T,
        c11: T,
        c12: T,
        c22: T,
    ) -> T {
        let mut q = 1.0e30;
        for t in mesh.triangles() {
            let a = mesh.corner(t, 1);
            let b = mesh.corner(t, 2);
            let qt = quality(
                cx,
                cy,
                v.x[a],
                v.y[a],
                v.x[b],
                v.y[b],
                (c11 + v.m11[a] + v.m11[b]) / 3.0,
                (c12 + v.m12[a] + v.m12[b]) / 3.0,
                (c22 + v.m22[a] + v.m22[b]) / 3.0,
            );
            q = q.min(qt);
        }
        q
    }

    /// Pain et al.'s move from the vertex, first component (`axis` 0) or second (1):
    /// `(D + A) d = (q - A p) / 2`, with `A` and `q` summed over the edges from `p`
    /// (edge metrics the mean of their ends') and `D` the term that makes `D + A`
    /// diagonally dominant. For `method` 0 and 1, the move to the neighbours' mean
    /// (Laplacian).
    #[stencil_fn]
    fn planned_move<T: Real>(mesh: Mesh, v: In<Vertices<T>>, method: i64, axis: i64) -> T {
        let mut sx = 0.0;
        let mut sy = 0.0;
        let mut n = 0.0;
        let mut a11 = 0.0;
        let mut a12 = 0.0;
        let mut a22 = 0.0;
        let mut q1 = 0.0;
        let mut q2 = 0.0;
        for j in mesh.neighbours() {
            let xj = v.x[j];
            let yj = v.y[j];
            sx += xj;
            sy += yj;
            n += 1.0;
            let e11 = 0.5 * (v.m11 + v.m11[j]);
            let e12 = 0.5 * (v.m12 + v.m12[j]);
            let e22 = 0.5 * (v.m22 + v.m22[j]);
            a11 += e11;
            a12 += e12;
            a22 += e22;
            q1 += e11 * xj + e12 * yj;
            q2 += e12 * xj + e22 * yj;
        }
        let r1 = 0.5 * (q1 - (a11 * v.x + a12 * v.y));
        let r2 = 0.5 * (q2 - (a12 * v.x + a22 * v.y));
        let d1 = (a12.abs() - a11).max(0.0);
        let d2 = (a12.abs() - a22).max(0.0);
        let pain = if axis == 0 {
            solve2_x(a11 + d1, a12, a12, a22 + d2, r1, r2)
        } else {
            solve2_y(a11 + d1, a12, a12, a22 + d2, r1, r2)
        };
        let laplacian = if axis == 0 {
            sx / n - v.x
        } else {
            sy / n - v.y
        };
        if method == 2 {
            pain
        } else {
            laplacian
        }
    }

    /// The metric at the candidate `(cx, cy)`: interpolated barycentrically in the first
    /// cavity triangle holding it (the vertex's own where none does).
    #[stencil_fn]
    fn metric_at<T: Real>(mesh: Mesh, v: In<Vertices<T>>, cx: T, cy: T) -> (T, T, T) {
        let (mut c11, mut c12, mut c22) = (v.m11, v.m12, v.m22);
        for t in mesh.triangles() {
            let a = mesh.corner(t, 1);
            let b = mesh.corner(t, 2);
            let total = cross(v.x, v.y, v.x[a], v.y[a], v.x[b], v.y[b]);
            let l0 = cross(cx, cy, v.x[a], v.y[a], v.x[b], v.y[b]) / total;
            let l1 = cross(v.x, v.y, cx, cy, v.x[b], v.y[b]) / total;
            let l2 = cross(v.x, v.y, v.x[a], v.y[a], cx, cy) / total;
            if l0.min(l1).min(l2) >= -1.0e-12 {
                c11 = l0 * v.m11 + l1 * v.m11[a] + l2 * v.m11[b];
                c12 = l0 * v.m12 + l1 * v.m12[a] + l2 * v.m12[b];
                c22 = l0 * v.m22 + l1 * v.m22[a] + l2 * v.m22[b];
                break;
            }
        }
        (c11, c12, c22)
    }

    /// The first step of the pattern search: a quarter of the mean edge length from the
    /// vertex.
    #[stencil_fn]
    fn first_step<T: Real>(mesh: Mesh, x: In<T>, y: In<T>) -> T {
        let mut reach = 0.0;
        let mut n = 0.0;
        for j in mesh.neighbours() {
            let dx = x[j] - x;
            let dy = y[j] - y;
            reach += (dx * dx + dy * dy).sqrt();
            n += 1.0;
        }
        0.25 * reach / n
    }

    /// The metric at the candidate `(cx, cy)` read from the super-sampled metric
    /// `[[g11, g12], [g12, g22]]` (bilinear): what [`metric_at`] is to the `_sampled`
    /// kernels.
    #[stencil_fn]
    fn sampled_metric<T: Real>(
        g11: Sampled<T>,
        g12: Sampled<T>,
        g22: Sampled<T>,
        cx: T,
        cy: T,
    ) -> (T, T, T) {
        (g11.sample(cx, cy), g12.sample(cx, cy), g22.sample(cx, cy))
    }

    /// The step of a round of `search`: [`first_step`] at round 0, else the stored `step`.
    #[stencil_fn]
    fn search_step<T: Real>(mesh: Mesh, x: In<T>, y: In<T>, step: In<T>, round: i64) -> T {
        if round == 0 {
            first_step(mesh, x, y)
        } else {
            step
        }
    }

    /// Whether the vertex moved in any round of `search` so far (1 or 0): in this one if
    /// it `improved`, else as `moved_flag` says (which round 0 ignores).
    #[stencil_fn]
    fn moved_so_far<T: Real>(moved_flag: In<T>, round: i64, improved: bool) -> T {
        let flag = if round == 0 { 0.0 } else { moved_flag };
        if improved {
            1.0
        } else {
            flag
        }
    }

    /// Whether a halving attempt of `relocate` takes the candidate whose cavity quality is
    /// `q` (given the quality `before` the move, whether an earlier attempt `done` so,
    /// and whether the candidate differs from the vertex).
    #[stencil_fn]
    fn takes<T: Real>(method: i64, q: T, before: T, done: bool, moves: bool) -> bool {
        let accept = method != 1 || q >= before;
        !done && stops(method, q, before) && accept && moves
    }

    /// Whether a halving attempt of `relocate` ends the halving.
    #[stencil_fn]
    fn stops<T: Real>(method: i64, q: T, before: T) -> bool {
        if method == 2 {
            q >= before
        } else {
            q > 0.0
        }
    }

    /// Moves each vertex of the set by `method`: 0 Laplacian (to the neighbours' mean),
    /// 1 smart Laplacian (the whole move, only if the cavity's smallest quality does not
    /// drop), 2 Pain et al. (2001) ([`planned_move`]). Laplacian and Pain's moves are
    /// halved (up to ten times) until every triangle stays valid (Laplacian) or the cavity
    /// keeps its smallest quality (Pain). `moved` counts the vertices that moved. The
    /// metric at a candidate is interpolated barycentrically in the cavity triangle
    /// holding it, or, with `sampled`, read from the super-sampled metric `[[g11, g12],
    /// [g12, g22]]` (bilinear), which a vertex that moves then takes.
    #[stencil(consts(sampled = [false, true]))]
    pub fn relocate<T: Real>(
        mesh: Mesh,
        v: InOut<Vertices<T>>,
        #[when(sampled)] g11: Sampled<T>,
        #[when(sampled)] g12: Sampled<T>,
        #[when(sampled)] g22: Sampled<T>,
        method: i64,
        moved: Sum<T>,
        sampled: bool,
    ) {
        let before = cavity_quality(mesh, v, v.x, v.y, v.m11, v.m12, v.m22);
        let mut stepx = planned_move(mesh, v, method, 0);
        let mut stepy = planned_move(mesh, v, method, 1);
        let mut done = false;
        let mut go = false;
        let (mut nx, mut ny, mut n11, mut n12, mut n22) = (v.x, v.y, v.m11, v.m12, v.m22);
        for attempt in 0..11 {
            let cx = v.x + stepx;
            let cy = v.y + stepy;
            let (c11, c12, c22) = if sampled {
                sampled_metric(g11, g12, g22, cx, cy)
            } else {
                metric_at(mesh, v, cx, cy)
            };
            let q = cavity_quality(mesh, v, cx, cy, c11, c12, c22);
            if takes(method, q, before, done, cx != v.x || cy != v.y) {
                go = true;
                (nx, ny, n11, n12, n22) = (cx, cy, c11, c12, c22);
            }
            done = done || stops(method, q, before);
            stepx = 0.5 * stepx;
            stepy = 0.5 * stepy;
        }
        // The sampled metric at the new position is read again rather than kept from the
        // attempt (the same value): keeping it made this kernel 3 to 5% slower on an H100
        // (`benchmarks/results/h100-smoothing-kept-metric.md`), where the pattern search
        // below gained 2 to 3% by keeping its best candidate's.
        if go {
            (v.x, v.y) = (nx, ny);
            (v.m11, v.m12, v.m22) = if sampled {
                sampled_metric(g11, g12, g22, nx, ny)
            } else {
                (n11, n12, n22)
            };
        }
        moved.reduce(if go { 1.0 } else { 0.0 });
    }

    /// One round of a pattern search that moves each vertex of the set to maximise its
    /// cavity's smallest quality: eight directions around the vertex at distance `step`
    /// (set at round 0 by [`first_step`]), each taken if it improves on the best so far;
    /// `step` is halved when none does. The metric at a candidate is interpolated
    /// barycentrically in the cavity triangle holding it, or, with `sampled`, read from
    /// the super-sampled metric `[[g11, g12], [g12, g22]]` (bilinear), which a vertex that
    /// moves then takes. `moved_flag` records whether the vertex moved in any round so
    /// far; on the last round (of `rounds`) `moved` counts the vertices that moved. One
    /// round per launch keeps the kernel small enough for the GPU's registers.
    #[stencil(consts(sampled = [false, true]))]
    pub fn search<T: Real>(
        mesh: Mesh,
        v: InOut<Vertices<T>>,
        #[when(sampled)] g11: Sampled<T>,
        #[when(sampled)] g12: Sampled<T>,
        #[when(sampled)] g22: Sampled<T>,
        step: InOut<T>,
        moved_flag: InOut<T>,
        round: i64,
        rounds: i64,
        moved: Sum<T>,
        sampled: bool,
    ) {
        let h = search_step(mesh, v.x, v.y, step, round);
        let mut best_q = cavity_quality(mesh, v, v.x, v.y, v.m11, v.m12, v.m22);
        let (mut bx, mut by, mut b11, mut b12, mut b22) = (v.x, v.y, v.m11, v.m12, v.m22);
        let mut improved = false;
        for k in 0..8 {
            let cx = bx + compass_x(k, h);
            let cy = by + compass_y(k, h);
            let (c11, c12, c22) = if sampled {
                sampled_metric(g11, g12, g22, cx, cy)
            } else {
                metric_at(mesh, v, cx, cy)
            };
            let q = cavity_quality(mesh, v, cx, cy, c11, c12, c22);
            if q > best_q {
                (bx, by, b11, b12, b22) = (cx, cy, c11, c12, c22);
                best_q = q;
                improved = true;
            }
        }
        if improved {
            (v.x, v.y, v.m11, v.m12, v.m22) = (bx, by, b11, b12, b22);
        }
        step = if improved { h } else { 0.5 * h };
        let now = moved_so_far(moved_flag, round, improved);
        moved_flag = now;
        moved.reduce(if round == rounds - 1 { now } else { 0.0 });
    }
}

impl<F> smoothing::Vertices<F> {
    /// The group of the kernels' launchers: a mutable reference to each field.
    pub fn each_mut(&mut self) -> smoothing::Vertices<&mut F> {
        let smoothing::Vertices {
            x,
            y,
            m11,
            m12,
            m22,
        } = self;
        smoothing::Vertices {
            x,
            y,
            m11,
            m12,
            m22,
        }
    }
}
