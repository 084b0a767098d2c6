//! The smoothing kernels, in the stencil language: one thread per vertex of a colour,
//! each moving its vertex within its cavity (the triangles around it).
//!
//! Per vertex: the coordinates `x`, `y` and the metric `[[m11, m12], [m12, m22]]`, all
//! updated in place. A candidate position is judged by the cavity's smallest quality
//! (Vasilevskii & Lipnikov) with the vertex moved there and its metric interpolated
//! barycentrically in the cavity triangle (with the vertex at its present place) that holds
//! the candidate; -1 if a triangle would be inverted or degenerate.
//!
//! The vertices of a colour share no edge, so each one reads only vertices that do not
//! move in that launch: the CPU (any number of threads) and the GPU give the same mesh.

use stencil_runtime::prelude::*;

#[stencils]
pub mod smoothing {
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

    /// Moves each vertex of the set by `method`: 0 Laplacian (to the neighbours' mean),
    /// 1 smart Laplacian (the whole move, only if the cavity's smallest quality does not
    /// drop), 2 Pain et al. (2001): `(D + A)(x - p) = (q - A p) / 2` with `A` and `q`
    /// summed over the edges from `p` (edge metrics the mean of their ends') and `D` the
    /// term that makes `D + A` diagonally dominant. Laplacian and Pain's moves are halved
    /// (up to ten times) until every triangle stays valid (Laplacian) or the cavity keeps
    /// its smallest quality (Pain). `moved` counts the vertices that moved.
    #[stencil]
    pub fn relocate<T: Real>(
        mesh: Mesh,
        x: InOut<T>,
        y: InOut<T>,
        m11: InOut<T>,
        m12: InOut<T>,
        m22: InOut<T>,
        method: i64,
        moved: Sum<T>,
    ) {
        let px = x;
        let py = y;
        let p11 = m11;
        let p12 = m12;
        let p22 = m22;
        let mut sx = 0.0;
        let mut sy = 0.0;
        let mut n = 0.0;
        let mut a11 = 0.0;
        let mut a12 = 0.0;
        let mut a22 = 0.0;
        let mut q1 = 0.0;
        let mut q2 = 0.0;
        for j in mesh.neighbours() {
            let xj = x[j];
            let yj = y[j];
            sx += xj;
            sy += yj;
            n += 1.0;
            let e11 = 0.5 * (p11 + m11[j]);
            let e12 = 0.5 * (p12 + m12[j]);
            let e22 = 0.5 * (p22 + m22[j]);
            a11 += e11;
            a12 += e12;
            a22 += e22;
            q1 += e11 * xj + e12 * yj;
            q2 += e12 * xj + e22 * yj;
        }
        let r1 = 0.5 * (q1 - (a11 * px + a12 * py));
        let r2 = 0.5 * (q2 - (a12 * px + a22 * py));
        let d1 = (a12.abs() - a11).max(0.0);
        let d2 = (a12.abs() - a22).max(0.0);
        let pain_dx = solve2_x(a11 + d1, a12, a12, a22 + d2, r1, r2);
        let pain_dy = solve2_y(a11 + d1, a12, a12, a22 + d2, r1, r2);
        let mut stepx = if method == 2 { pain_dx } else { sx / n - px };
        let mut stepy = if method == 2 { pain_dy } else { sy / n - py };

        let mut before = 1.0e30;
        for t in mesh.triangles() {
            let a = mesh.corner(t, 1);
            let b = mesh.corner(t, 2);
            let q = quality(
                px,
                py,
                x[a],
                y[a],
                x[b],
                y[b],
                (p11 + m11[a] + m11[b]) / 3.0,
                (p12 + m12[a] + m12[b]) / 3.0,
                (p22 + m22[a] + m22[b]) / 3.0,
            );
            before = before.min(q);
        }

        let mut done = false;
        let mut go = false;
        let mut nx = px;
        let mut ny = py;
        let mut n11 = p11;
        let mut n12 = p12;
        let mut n22 = p22;
        for attempt in 0..11 {
            let cx = px + stepx;
            let cy = py + stepy;
            // The metric at the candidate: barycentric in the cavity triangle holding it.
            let mut found = false;
            let mut c11 = p11;
            let mut c12 = p12;
            let mut c22 = p22;
            for t in mesh.triangles() {
                let a = mesh.corner(t, 1);
                let b = mesh.corner(t, 2);
                let total = cross(px, py, x[a], y[a], x[b], y[b]);
                let l0 = cross(cx, cy, x[a], y[a], x[b], y[b]) / total;
                let l1 = cross(px, py, cx, cy, x[b], y[b]) / total;
                let l2 = cross(px, py, x[a], y[a], cx, cy) / total;
                let inside = l0.min(l1).min(l2) >= -1.0e-12;
                if inside && !found {
                    c11 = l0 * p11 + l1 * m11[a] + l2 * m11[b];
                    c12 = l0 * p12 + l1 * m12[a] + l2 * m12[b];
                    c22 = l0 * p22 + l1 * m22[a] + l2 * m22[b];
                }
                found = found || inside;
            }
            let mut q = 1.0e30;
            for t in mesh.triangles() {
                let a = mesh.corner(t, 1);
                let b = mesh.corner(t, 2);
                let qt = quality(
                    cx,
                    cy,
                    x[a],
                    y[a],
                    x[b],
                    y[b],
                    (c11 + m11[a] + m11[b]) / 3.0,
                    (c12 + m12[a] + m12[b]) / 3.0,
                    (c22 + m22[a] + m22[b]) / 3.0,
                );
                q = q.min(qt);
            }
            let stop = if method == 2 { q >= before } else { q > 0.0 };
            let accept = method != 1 || q >= before;
            let take = !done && stop && accept && (cx != px || cy != py);
            if take {
                go = true;
                nx = cx;
                ny = cy;
                n11 = c11;
                n12 = c12;
                n22 = c22;
            }
            done = done || stop;
            stepx = 0.5 * stepx;
            stepy = 0.5 * stepy;
        }
        if go {
            x = nx;
            y = ny;
            m11 = n11;
            m12 = n12;
            m22 = n22;
        }
        moved.reduce(if go { 1.0 } else { 0.0 });
    }

    /// One round of a pattern search that moves each vertex of the set to maximise its
    /// cavity's smallest quality: eight directions around the vertex at distance `step`
    /// (set at round 0 to a quarter of the mean edge length from the vertex), each taken
    /// if it improves on the best so far; `step` is halved when none does. `moved_flag`
    /// records whether the vertex moved in any round so far; on the last round (of
    /// `rounds`) `moved` counts the vertices that moved. One round per launch keeps the
    /// kernel small enough for the GPU's registers.
    #[stencil]
    pub fn search<T: Real>(
        mesh: Mesh,
        x: InOut<T>,
        y: InOut<T>,
        m11: InOut<T>,
        m12: InOut<T>,
        m22: InOut<T>,
        step: InOut<T>,
        moved_flag: InOut<T>,
        round: i64,
        rounds: i64,
        moved: Sum<T>,
    ) {
        let px = x;
        let py = y;
        let p11 = m11;
        let p12 = m12;
        let p22 = m22;
        let mut reach = 0.0;
        let mut n = 0.0;
        for j in mesh.neighbours() {
            let dx = x[j] - px;
            let dy = y[j] - py;
            reach += (dx * dx + dy * dy).sqrt();
            n += 1.0;
        }
        let h = if round == 0 { 0.25 * reach / n } else { step };
        let mut best_q = 1.0e30;
        for t in mesh.triangles() {
            let a = mesh.corner(t, 1);
            let b = mesh.corner(t, 2);
            let q = quality(
                px,
                py,
                x[a],
                y[a],
                x[b],
                y[b],
                (p11 + m11[a] + m11[b]) / 3.0,
                (p12 + m12[a] + m12[b]) / 3.0,
                (p22 + m22[a] + m22[b]) / 3.0,
            );
            best_q = best_q.min(q);
        }
        let mut bx = px;
        let mut by = py;
        let mut b11 = p11;
        let mut b12 = p12;
        let mut b22 = p22;
        let mut improved = false;
        for k in 0..8 {
            let cx = bx + compass_x(k, h);
            let cy = by + compass_y(k, h);
            let mut found = false;
            let mut c11 = p11;
            let mut c12 = p12;
            let mut c22 = p22;
            for t in mesh.triangles() {
                let a = mesh.corner(t, 1);
                let b = mesh.corner(t, 2);
                let total = cross(px, py, x[a], y[a], x[b], y[b]);
                let l0 = cross(cx, cy, x[a], y[a], x[b], y[b]) / total;
                let l1 = cross(px, py, cx, cy, x[b], y[b]) / total;
                let l2 = cross(px, py, x[a], y[a], cx, cy) / total;
                let inside = l0.min(l1).min(l2) >= -1.0e-12;
                if inside && !found {
                    c11 = l0 * p11 + l1 * m11[a] + l2 * m11[b];
                    c12 = l0 * p12 + l1 * m12[a] + l2 * m12[b];
                    c22 = l0 * p22 + l1 * m22[a] + l2 * m22[b];
                }
                found = found || inside;
            }
            let mut q = 1.0e30;
            for t in mesh.triangles() {
                let a = mesh.corner(t, 1);
                let b = mesh.corner(t, 2);
                let qt = quality(
                    cx,
                    cy,
                    x[a],
                    y[a],
                    x[b],
                    y[b],
                    (c11 + m11[a] + m11[b]) / 3.0,
                    (c12 + m12[a] + m12[b]) / 3.0,
                    (c22 + m22[a] + m22[b]) / 3.0,
                );
                q = q.min(qt);
            }
            if q > best_q {
                bx = cx;
                by = cy;
                b11 = c11;
                b12 = c12;
                b22 = c22;
                best_q = q;
                improved = true;
            }
        }
        if improved {
            x = bx;
            y = by;
            m11 = b11;
            m12 = b12;
            m22 = b22;
        }
        step = if improved { h } else { 0.5 * h };
        let flag = if round == 0 { 0.0 } else { moved_flag };
        let now = if improved { 1.0 } else { flag };
        moved_flag = now;
        moved.reduce(if round == rounds - 1 { now } else { 0.0 });
    }
}
