//! Vertex kernels: loops over a vertex's neighbours and triangles, gathers, reductions, on
//! the CPU (checked against direct computation) and on CUDA (checked against the CPU).

use std::sync::Arc;
use stencil_runtime::prelude::*;
use stencil_tests::device::gpu_or_skip;
use stencil_tests::meshes::split_squares;

/// The mean of the neighbours' values, and the number of neighbours.
#[stencil]
fn neighbour_mean<T: Real>(mesh: Mesh, u: In<T>, mean: Out<T>, count: Sum<T>) {
    let mut s = 0.0;
    let mut n = 0.0;
    for j in mesh.neighbours() {
        s += u[j];
        n += 1.0;
    }
    mean = s / n;
    count.reduce(n);
}

/// The smallest doubled area of the vertex's triangles, and the corner that makes it.
#[stencil]
fn smallest_triangle<T: Real>(
    mesh: Mesh,
    x: In<T>,
    y: In<T>,
    area: Out<T>,
    corner: Out<T>,
    least: Min<T>,
) {
    let mut best = 1.0e30;
    let mut at = -1.0;
    for t in mesh.triangles() {
        let a = mesh.corner(t, 1);
        let b = mesh.corner(t, 2);
        let v = mesh.vertex();
        let d = (x[a] - x[v]) * (y[b] - y[v]) - (x[b] - x[v]) * (y[a] - y[v]);
        if d < best {
            best = d;
            at = a as T;
        }
    }
    area = best;
    corner = at;
    least.reduce(best);
}

/// Moves each vertex of the set halfway to its neighbours' mean (in place).
#[stencil]
fn relax<T: Real>(mesh: Mesh, u: InOut<T>) {
    let mut s = 0.0;
    let mut n = 0.0;
    for j in mesh.neighbours() {
        s += u[j];
        n += 1.0;
    }
    if n > 0.0 {
        u = 0.5 * (u + s / n);
    }
}

/// The first neighbour, in list order, with an odd number and a larger value than the
/// vertex's (its value, or the vertex's own where none has one), and how many odd
/// neighbours were looked at: `continue` skips the even ones, `break` stops at the first
/// larger one.
#[stencil]
fn first_above<T: Real>(mesh: Mesh, u: In<T>, found: Out<T>, looked: Out<T>) {
    let mut value = u;
    let mut seen = 0.0;
    for j in mesh.neighbours() {
        if j % 2 == 0 {
            continue;
        }
        seen += 1.0;
        if u[j] > u {
            value = u[j];
            break;
        }
    }
    found = value;
    looked = seen;
}

/// An `n` x `n` grid of vertices, each square split into two triangles; jittered points.
fn grid(n: usize) -> (Arc<MeshTopology>, Vec<f64>, Vec<f64>) {
    let jitter = |k: usize| ((k * 7919 % 101) as f64 / 101.0 - 0.5) * 0.2;
    let x = (0..n * n).map(|k| (k % n) as f64 + jitter(k)).collect();
    let y = (0..n * n)
        .map(|k| (k / n) as f64 + jitter(k + 17))
        .collect();
    (split_squares(n), x, y)
}

fn field(v: &[f64]) -> Field<f64> {
    Field::from_fn(&[v.len()], 0, |[i, _, _]| v[i as usize])
}

/// The vertices whose grid indices `(i, j)` have `(i + j) % 3 == c`: no two share an
/// edge of [`grid`]'s triangles (neighbours differ by 1 or 2 in `i + j`).
fn colour(n: usize, c: usize) -> Vec<usize> {
    (0..n * n).filter(|v| (v % n + v / n) % 3 == c).collect()
}

#[test]
fn neighbour_loops_gather_and_reduce_on_the_cpu() {
    let (m, x, _) = grid(9);
    let every = colour(9, 0);
    let set = m.set(&every).unwrap();
    let u = field(&x);
    let mut mean = Field::<f64>::zeros(&[81], 0).unwrap();
    let count = neighbour_mean::launch(&Backend::Cpu, &set, &u, &mut mean).unwrap();
    let mean = mean.interior().unwrap();
    let mut want_count = 0.0;
    for &v in &every {
        let ns = m.neighbours_of(v);
        want_count += ns.len() as f64;
        let want = ns.iter().map(|&w| x[w as usize]).sum::<f64>() / ns.len() as f64;
        assert_eq!(mean[v], want, "vertex {v}");
    }
    // Vertices outside the set are not written.
    assert!((0..81)
        .filter(|v| !every.contains(v))
        .all(|v| mean[v] == 0.0));
    assert_eq!(count, want_count);
}

#[test]
fn triangle_loops_see_corners_counter_clockwise() {
    let (m, x, y) = grid(7);
    let set = m.set(&colour(7, 1)).unwrap();
    let (xf, yf) = (field(&x), field(&y));
    let mut area = Field::<f64>::zeros(&[49], 0).unwrap();
    let mut corner = Field::<f64>::zeros(&[49], 0).unwrap();
    let least =
        smallest_triangle::launch(&Backend::Cpu, &set, &xf, &yf, &mut area, &mut corner).unwrap();
    let area = area.interior().unwrap();
    let corner = corner.interior().unwrap();
    let mut want_least = f64::INFINITY;
    for &v in set.vertices() {
        let v = v as usize;
        // Every triangle of the grid is counter-clockwise: positive doubled areas.
        assert!(area[v] > 0.0, "vertex {v}: {}", area[v]);
        let c = corner[v] as usize;
        assert!(
            m.neighbours_of(v).contains(&(c as u32)),
            "vertex {v}: corner {c}"
        );
        want_least = want_least.min(area[v]);
    }
    assert_eq!(least, want_least);
}

#[test]
fn colour_sweeps_update_in_place() {
    let (m, x, _) = grid(8);
    let mut u = field(&x);
    let mut want = x.clone();
    for c in 0..3 {
        let set = m.set(&colour(8, c)).unwrap();
        relax::launch(&Backend::Cpu, &set, &mut u).unwrap();
        for &v in set.vertices() {
            let ns = m.neighbours_of(v as usize);
            let s = ns.iter().map(|&w| want[w as usize]).sum::<f64>();
            want[v as usize] = 0.5 * (want[v as usize] + s / ns.len() as f64);
        }
    }
    assert_eq!(u.interior().unwrap(), want);
}

#[test]
fn a_field_of_the_wrong_size_is_an_error() {
    let (m, x, _) = grid(4);
    let set = m.set(&colour(4, 0)).unwrap();
    let u = field(&x[..10]);
    let mut mean = Field::<f64>::zeros(&[16], 0).unwrap();
    let e = neighbour_mean::launch(&Backend::Cpu, &set, &u, &mut mean).unwrap_err();
    assert!(e.to_string().contains("field `u`"), "{e}");
}

/// `first_above` against the same loop in Rust.
fn first_above_in_rust(m: &MeshTopology, u: &[f64], v: usize) -> (f64, f64) {
    let mut seen = 0.0;
    for &j in m.neighbours_of(v) {
        if j % 2 == 0 {
            continue;
        }
        seen += 1.0;
        if u[j as usize] > u[v] {
            return (u[j as usize], seen);
        }
    }
    (u[v], seen)
}

#[test]
fn break_and_continue_leave_loops_over_the_mesh() {
    let (m, x, y) = grid(11);
    let u: Vec<f64> = x
        .iter()
        .zip(&y)
        .map(|(a, b)| (3.0 * a - 2.0 * b).sin())
        .collect();
    let zeros = || Field::<f64>::zeros(&[121], 0).unwrap();
    let (mut found, mut looked) = (zeros(), zeros());
    for c in 0..3 {
        let set = m.set(&colour(11, c)).unwrap();
        first_above::launch(&Backend::Cpu, &set, &field(&u), &mut found, &mut looked).unwrap();
    }
    let (found, looked) = (found.interior().unwrap(), looked.interior().unwrap());
    let mut stopped_early = 0;
    for v in 0..121 {
        let want = first_above_in_rust(&m, &u, v);
        assert_eq!((found[v], looked[v]), want, "vertex {v}");
        let odd = m.neighbours_of(v).iter().filter(|&&j| j % 2 == 1).count();
        stopped_early += usize::from((looked[v] as usize) < odd);
    }
    assert!(
        stopped_early > 10,
        "only {stopped_early} vertices took the break"
    );
}

#[test]
fn cuda_agrees_with_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    let n = 300;
    let (m, x, y) = grid(n);
    let md = m.to(&gpu).unwrap();
    let on = |f: &Field<f64>| f.to(&gpu).unwrap();
    for c in 0..3 {
        let (set_cpu, set_gpu) = (
            m.set(&colour(n, c)).unwrap(),
            md.set(&colour(n, c)).unwrap(),
        );
        let (xf, yf) = (field(&x), field(&y));
        let zeros = || Field::<f64>::zeros(&[n * n], 0).unwrap();
        let (mut a, mut k) = (zeros(), zeros());
        let least =
            smallest_triangle::launch(&Backend::Cpu, &set_cpu, &xf, &yf, &mut a, &mut k).unwrap();
        let (mut ag, mut kg) = (on(&zeros()), on(&zeros()));
        let least_g =
            smallest_triangle::launch(&gpu, &set_gpu, &on(&xf), &on(&yf), &mut ag, &mut kg)
                .unwrap();
        assert_eq!(least, least_g);
        assert_eq!(a.interior().unwrap(), ag.interior().unwrap());
        assert_eq!(k.interior().unwrap(), kg.interior().unwrap());
        let mut mean = zeros();
        let count = neighbour_mean::launch(&Backend::Cpu, &set_cpu, &xf, &mut mean).unwrap();
        let mut mean_g = on(&zeros());
        let count_g = neighbour_mean::launch(&gpu, &set_gpu, &on(&xf), &mut mean_g).unwrap();
        assert_eq!(count, count_g);
        assert_eq!(mean.interior().unwrap(), mean_g.interior().unwrap());
        // Loops left by `break` and `continue`.
        let (mut found, mut looked) = (zeros(), zeros());
        first_above::launch(&Backend::Cpu, &set_cpu, &xf, &mut found, &mut looked).unwrap();
        let (mut found_g, mut looked_g) = (on(&zeros()), on(&zeros()));
        first_above::launch(&gpu, &set_gpu, &on(&xf), &mut found_g, &mut looked_g).unwrap();
        assert_eq!(found.interior().unwrap(), found_g.interior().unwrap());
        assert_eq!(looked.interior().unwrap(), looked_g.interior().unwrap());
    }
    // In-place colour sweeps in f32.
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let mut u = Field::<f32>::from_fn(&[n * n], 0, |[i, _, _]| x32[i as usize]);
    let mut ug = u.to(&gpu).unwrap();
    for sweep in 0..3 {
        for c in 0..3 {
            relax::launch(&Backend::Cpu, &m.set(&colour(n, c)).unwrap(), &mut u).unwrap();
            relax::launch(&gpu, &md.set(&colour(n, c)).unwrap(), &mut ug).unwrap();
        }
        assert_eq!(
            u.interior().unwrap(),
            ug.interior().unwrap(),
            "sweep {sweep}"
        );
    }
    // A set made for the host cannot run on the device.
    let e = relax::launch(&gpu, &m.set(&colour(n, 0)).unwrap(), &mut ug).unwrap_err();
    assert!(e.to_string().contains("host memory"), "{e}");
}

/// The built-in 2x2 helpers on symmetric matrices `[[a, b], [b, c]]`: solve, eigenvalues,
/// the unit eigenvector of the larger one, and the length in the metric.
#[stencil(dims = 1)]
fn matrix_helpers<T: Real>(
    a: In<T>,
    b: In<T>,
    c: In<T>,
    x: Out<T>,
    y: Out<T>,
    lo: Out<T>,
    hi: Out<T>,
    ex: Out<T>,
    ey: Out<T>,
    len2: Out<T>,
) {
    x = solve2_x(a, b, b, c, 1.0, 2.0);
    y = solve2_y(a, b, b, c, 1.0, 2.0);
    lo = sym2_eig_lo(a, b, c);
    hi = sym2_eig_hi(a, b, c);
    ex = sym2_eigvec_x(a, b, c);
    ey = sym2_eigvec_y(a, b, c);
    len2 = sym2_length2(a, b, c, 1.0, 2.0) + det2(a, b, b, c) * 0.0;
}

#[test]
fn built_in_matrix_helpers_solve_and_diagonalise() {
    let cases = [
        [2.0, 0.5, 1.0],
        [1.0, 0.0, 3.0],
        [4.0, -1.5, 4.0],
        [1.0, 0.0, 1.0],
    ];
    let f = |k: usize| Field::<f64>::from_fn(&[4], 0, |[i, _, _]| cases[i as usize][k]);
    let (a, b, c) = (f(0), f(1), f(2));
    let mut outs: Vec<Field<f64>> = (0..7).map(|_| Field::zeros(&[4], 0).unwrap()).collect();
    let [x, y, lo, hi, ex, ey, l2] = &mut outs[..] else {
        unreachable!()
    };
    matrix_helpers::launch(&Backend::Cpu, &a, &b, &c, x, y, lo, hi, ex, ey, l2).unwrap();
    let get = |f: &Field<f64>| f.interior().unwrap();
    let (x, y, lo, hi, ex, ey, l2) = (get(x), get(y), get(lo), get(hi), get(ex), get(ey), get(l2));
    for (i, &[a, b, c]) in cases.iter().enumerate() {
        // The solution satisfies the system.
        assert!((a * x[i] + b * y[i] - 1.0).abs() < 1e-14, "case {i}");
        assert!((b * x[i] + c * y[i] - 2.0).abs() < 1e-14, "case {i}");
        // Eigenpairs: M e = hi e with |e| = 1; lo + hi = trace, lo hi = det.
        assert!(
            (a * ex[i] + b * ey[i] - hi[i] * ex[i]).abs() < 1e-14,
            "case {i}"
        );
        assert!(
            (b * ex[i] + c * ey[i] - hi[i] * ey[i]).abs() < 1e-14,
            "case {i}"
        );
        assert!((ex[i].hypot(ey[i]) - 1.0).abs() < 1e-14);
        assert!((lo[i] + hi[i] - (a + c)).abs() < 1e-14);
        assert!((lo[i] * hi[i] - (a * c - b * b)).abs() < 1e-13);
        assert!(lo[i] <= hi[i]);
        assert_eq!(l2[i], a + 4.0 * b + 4.0 * c);
    }
}
