//! The fused kernels on a slab of rows (one rank's part of a level, `j0, nj` its place in
//! the whole grid) give the whole grid's values on those rows bit for bit, when the slab's
//! ghost rows hold the whole grid's rows (as the ranks' exchanges fill them). On the CPU,
//! without MPI: the slab is cut from the whole field here.

use multigrid::kernels::mg;
use stencil_runtime::{Axes, Backend, Error, Field};
use stencil_tests::harness::{random_field, rng};

/// Nodes per axis of the fine grid (a level of `2^k + 1` nodes) and of the coarse one.
const N: usize = 33;
const NC: usize = 17;
/// The fields' halo: the fused kernels read three nodes out.
const HALO: usize = 3;
/// The slabs checked, as fine rows `[a, b)`: an inner one and the two at the grid's ends
/// (coarse slabs are `[a / 2, b / 2)`, the last one to the end).
const SLABS: [(usize, usize); 3] = [(0, 12), (12, 20), (20, N)];

/// Rows `rows` of `whole` (a field of `n` rows) with `HALO` ghost rows each side, as a
/// rank's part holds them.
fn slab(whole: &Field<f64>, rows: (usize, usize)) -> Field<f64> {
    let n = whole.extent();
    let mut part = Field::zeros(&[n[0], rows.1 - rows.0], HALO).expect("a slab");
    let (a, b, h) = (rows.0 as isize, rows.1 as isize, HALO as isize);
    let last = n[1] as isize + h;
    let (from, to) = ((a - h).max(-h), (b + h).min(last));
    part.copy_planes(from - a, whole, from..to)
        .expect("same rows");
    part
}

/// Whether `part` (rows `rows.0..` of the whole) equals those rows of `whole`.
fn same_rows(name: &str, part: &Field<f64>, whole: &Field<f64>, start: usize) {
    let n = part.extent();
    for j in 0..n[1] {
        for i in 0..n[0] {
            let (a, b) = (
                part.get([i as isize, j as isize, 0]),
                whole.get([i as isize, (start + j) as isize, 0]),
            );
            assert!(
                a.map(f64::to_bits) == b.map(f64::to_bits),
                "{name}: node ({i}, {}) is {a:?} on the slab, {b:?} on the whole grid",
                start + j
            );
        }
    }
}

/// A fused kernel on a level's grid: `fields` are its fine inputs (`e`, `r`) and the
/// coarse correction, `out` what it writes; `j0, nj` the output grid's place.
type Kernel<'a> = dyn Fn(&[&Field<f64>], &mut Field<f64>, i64, i64) -> Result<(), Error> + 'a;

/// Runs `kernel` on the whole grid and on each slab of it and compares. `coarse_out`:
/// the kernel writes the coarse grid (a restriction); `coarse_in`: its third input is
/// the coarse correction (a prolongation).
fn check(name: &str, kernel: &Kernel<'_>, coarse_out: bool) {
    let mut r = rng(name);
    let fine = [N, N];
    let e = random_field::<f64>(&mut r, &fine, HALO, -1.0, 1.0);
    let rhs = random_field::<f64>(&mut r, &fine, HALO, -1.0, 1.0);
    let coarse = random_field::<f64>(&mut r, &[NC, NC], HALO, -1.0, 1.0);
    let out_n = if coarse_out { NC } else { N };
    let mut whole = Field::zeros(&[out_n, out_n], HALO).expect("out");
    kernel(&[&e, &rhs, &coarse], &mut whole, 0, out_n as i64).expect("whole grid");
    for (a, b) in SLABS {
        let (ca, cb) = (a / 2, if b == N { NC } else { b / 2 });
        let (e, rhs) = (slab(&e, (a, b)), slab(&rhs, (a, b)));
        let coarse = slab(&coarse, (ca, cb));
        let (start, rows) = if coarse_out {
            (ca, cb - ca)
        } else {
            (a, b - a)
        };
        let mut out = Field::zeros(&[out_n, rows], HALO).expect("out");
        kernel(&[&e, &rhs, &coarse], &mut out, start as i64, out_n as i64)
            .unwrap_or_else(|err| panic!("{name} on rows {a}..{b}: {err}"));
        same_rows(&format!("{name}, rows {a}..{b}"), &out, &whole, start);
    }
}

#[test]
fn fused_kernels_on_slabs_equal_the_whole_grid() {
    let b = Backend::Cpu;
    let c = [1.0, 1.3];
    let h2inv = ((N - 1) * (N - 1)) as f64;
    // `check` of `mg::$kernel` with the inputs `check` passes at `$input` (0: `e`, 1: the
    // right-hand side, 2: the coarse correction), in order; `$coarse_out` as for `check`.
    macro_rules! check {
        ($kernel:ident($($input:literal),+), $coarse_out:expr) => {
            check(
                stringify!($kernel),
                &|f, out, j0, nj| {
                    let g = mg::Dirichlet { c: Axes::new(&c), h2inv, j0, nj };
                    mg::$kernel::launch(&b, $(f[$input],)+ out, &g)
                },
                $coarse_out,
            )
        };
    }
    check!(rbgs_sweep(0, 1), false);
    check!(rbgs_sweep_and_a_half(0, 1), false);
    check!(rbgs_sweep_from_zero(1), false);
    check!(rbgs_two_sweeps_from_zero(1), false);
    check!(prolong_rbgs(0, 2, 1), false);
    check!(prolong_swept_rbgs(1, 2), false);
    check!(restrict_residual(0, 1), true);
    check!(restrict_swept_residual(1), true);
}
