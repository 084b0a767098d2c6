//! Every multigrid kernel on a CUDA device agrees with the CPU path on random inputs (f64
//! to 1e-12, f32 to 1e-5 relative), and a whole solve agrees. Skips, saying why, without a
//! GPU. Stage for a GPU machine with
//! `../shared/tools/stage-gpu -p multigrid --test gpu_kernels`.

use multigrid::kernels::mg::{self, Dirichlet, Level};
use multigrid::{solve, Boundary, BoundaryKind, Options, Order, Precision, Problem};
use std::f64::consts::TAU;
use stencil_runtime::cuda::{LaunchShape, Tuning};
use stencil_runtime::{Axes, Backend, Error, Field, Real};
use stencil_tests::device::{gpu_or_skip, TILE_SHAPES};
use stencil_tests::harness::{assert_close, random_field, rng, tolerance, values};

type Launch<'a, T> =
    dyn Fn(&Backend, &mut [Field<f64>], &mut [Field<T>]) -> Result<Vec<f64>, Error> + 'a;

/// The 2D test grid; its coarse grid is 19 x 15.
const N2: [usize; 2] = [37, 29];
/// The 3D test grid; its coarse grid is 11 x 9 x 7.
const N3: [usize; 3] = [21, 17, 13];

/// Runs `launch` on the CPU and on `gpu` from the same random fields (`wide` f64 fields
/// and `narrow` fields of type `T`, all of extent `n` with halo 1) and compares every field
/// and the reductions afterwards.
fn compare<T: Real>(
    gpu: &Backend,
    name: &str,
    n: &[usize],
    wide: usize,
    narrow: usize,
    launch: &Launch<'_, T>,
) {
    let what = format!("{name} {:?}", T::PRECISION);
    let mut r = rng(&what);
    let w: Vec<Field<f64>> = (0..wide)
        .map(|_| random_field(&mut r, n, 1, 0.5, 2.0))
        .collect();
    let s: Vec<Field<T>> = (0..narrow)
        .map(|_| random_field(&mut r, n, 1, 0.5, 2.0))
        .collect();
    let (mut cw, mut cs) = (w.clone(), s.clone());
    let cpu_red = launch(&Backend::Cpu, &mut cw, &mut cs).unwrap_or_else(|e| panic!("{what}: {e}"));
    let to = |f: &Field<f64>| f.to(gpu).expect("to device");
    let mut gw: Vec<Field<f64>> = w.iter().map(to).collect();
    let mut gs: Vec<Field<T>> = s.iter().map(|f| f.to(gpu).expect("to device")).collect();
    let gpu_red =
        launch(gpu, &mut gw, &mut gs).unwrap_or_else(|e| panic!("{what} on the GPU: {e}"));
    for (i, (a, b)) in gw.iter().zip(&cw).enumerate() {
        assert_close(
            &format!("{what} f64 field {i}"),
            &values(a),
            &values(b),
            1e-12,
        );
    }
    for (i, (a, b)) in gs.iter().zip(&cs).enumerate() {
        assert_close(
            &format!("{what} field {i}"),
            &values(a),
            &values(b),
            tolerance::<T>(),
        );
    }
    assert_close(
        &format!("{what} reductions"),
        &gpu_red,
        &cpu_red,
        tolerance::<T>(),
    );
}

/// Boundary kinds (west, east, south, north): mixes, so every branch of the kernels runs
/// (0 Dirichlet, 1 Neumann, 2 penalty, 3 periodic).
const SIDES_2D: [[i64; 4]; 2] = [[0, 1, 2, 1], [3, 3, 2, 0]];
/// Boundary kinds of the 3D test (west, east, south, north, bottom, top).
const SIDES_3D: [i64; 6] = [0, 1, 2, 3, 3, 1];

fn kernels_2d<T: Real>(gpu: &Backend, [bw, be, bs, bn]: [i64; 4]) {
    let t = T::from_f64;
    let (c, h2, kap) = ([t(1.3), t(0.7)], t(900.0), t(50.0));
    let (lo, hi) = (&[bw, bs][..], &[be, bn][..]);
    let c64 = [1.3, 0.7];
    let sides = Sides {
        lo,
        hi,
        periodic: &[1, 0],
    };
    per_axis_kernels::<T>(gpu, &N2, "", (&c, &c64), sides);
    let (l, l64) = (level(&c, h2, kap, sides), level(&c64, 900.0, 50.0, sides));
    for colour in [0, 1] {
        for axis in [0, 1] {
            compare::<T>(
                gpu,
                &format!("zebra along {axis}"),
                &N2,
                0,
                2,
                &|b, _, s| {
                    let [e, r] = s else { unreachable!() };
                    mg::zebra::launch(b, e, r, &l, colour, axis).map(|_| vec![])
                },
            );
        }
    }
    compare::<T>(gpu, "zero", &N2, 0, 1, &|b, _, s| {
        mg::zero::launch(b, &mut s[0]).map(|_| vec![])
    });
    compare::<T>(gpu, "fused", &N2, 0, 2, &|b, _, s| {
        let [from_zero, r1] = s else { unreachable!() };
        mg::rbgs_from_zero::launch(b, r1, from_zero, &l)?;
        let mut swept = Field::<T>::zeros_on(b, &N2, 1)?;
        // The whole grid's rows (the fused kernels' `nj`), fine and coarse.
        let (ny, nyc) = (N2[1] as i64, 15);
        let rows = |nj| Dirichlet {
            c: Axes::new(&c),
            h2inv: h2,
            j0: 0,
            nj,
        };
        let (g, gc) = (rows(ny), rows(nyc));
        mg::rbgs_sweep_from_zero::launch(b, r1, &mut swept, &g)?;
        // The residual-restriction and prolongation-smoothing kernels read up to three
        // layers of halo.
        let wave = |k: f64| {
            Field::<T>::from_fn(&N2, 3, |[i, j, _]| {
                t((0.37 * i as f64 + 0.61 * k * j as f64).sin())
            })
            .to(b)
        };
        let (e, r) = (wave(1.0)?, wave(-1.7)?);
        let mut coarse = Field::<T>::from_fn(&[19, 15], 2, |[i, j, _]| {
            t((0.5 * i as f64 - 0.3 * j as f64).cos())
        })
        .to(b)?;
        let mut out = Field::<T>::zeros_on(b, &N2, 2)?;
        let mut from_r = Field::<T>::zeros_on(b, &N2, 2)?;
        mg::prolong_rbgs::launch(b, &e, &coarse, &r, &mut out, &g)?;
        mg::prolong_swept_rbgs::launch(b, &r, &coarse, &mut from_r, &g)?;
        let mut coarse_from_r = Field::<T>::zeros_on(b, &[19, 15], 2)?;
        mg::restrict_swept_residual::launch(b, &r, &mut coarse_from_r, &gc)?;
        mg::restrict_residual::launch(b, &e, &r, &mut coarse, &gc)?;
        let mut swept_twice = Field::<T>::zeros_on(b, &N2, 2)?;
        mg::rbgs_sweep::launch(b, &e, &r, &mut swept_twice, &g)?;
        let mut two_from_zero = Field::<T>::zeros_on(b, &N2, 2)?;
        mg::rbgs_two_sweeps_from_zero::launch(b, &r, &mut two_from_zero, &g)?;
        let mut and_a_half = Field::<T>::zeros_on(b, &N2, 2)?;
        mg::rbgs_sweep_and_a_half::launch(b, &e, &r, &mut and_a_half, &g)?;
        let mut both = out.interior()?;
        both.extend(two_from_zero.interior()?);
        both.extend(and_a_half.interior()?);
        both.extend(swept_twice.interior()?);
        both.extend(from_r.interior()?);
        both.extend(coarse_from_r.interior()?);
        both.extend(coarse.interior()?);
        both.extend(swept.interior()?);
        Ok(both.iter().map(|v| v.as_f64()).collect())
    });
    compare::<T>(gpu, "transfers", &N2, 0, 2, &|b, _, s| {
        let [fine, other] = s else { unreachable!() };
        let mut coarse = Field::<T>::zeros_on(b, &[19, 15], 1)?;
        mg::restrict_full::launch(b, fine, &mut coarse, lo, hi)?;
        mg::prolong_add::launch(b, other, &coarse, lo, hi)?;
        mg::restrict_inject::launch(b, fine, &mut coarse)?;
        mg::prolong_add::launch(b, other, &coarse, lo, hi)?;
        Ok(vec![])
    });
    compare::<T>(gpu, "defect2", &N2, 2, 1, &|b, w, s| {
        let [u, f] = w else { unreachable!() };
        let n2 = mg::defect2::launch(b, u, f, &mut s[0], &l64)?;
        Ok(vec![n2])
    });
    compare::<T>(gpu, "defects of order 4 and 6", &N2, 2, 1, &|b, w, s| {
        let (u, f) = (widen(b, &w[0])?, widen(b, &w[1])?);
        let a = mg::defect::launch(b, &u, &f, &mut s[0], &l64, 4)?;
        let c = mg::defect::launch(b, &u, &f, &mut s[0], &l64, 6)?;
        Ok(vec![a, c])
    });
}

/// The boundary codes of a test grid's low and high sides, and which axes the periodic
/// sum treats as periodic.
#[derive(Clone, Copy)]
struct Sides<'a> {
    lo: &'a [i64],
    hi: &'a [i64],
    periodic: &'a [i64],
}

/// The operator and sides of a test level with coefficients `c`.
fn level<T: Real>(c: &[T], h2inv: T, kappa: T, sides: Sides<'_>) -> Level<T> {
    Level {
        c: Axes::new(c),
        h2inv,
        kappa,
        lo: Axes::new(sides.lo),
        hi: Axes::new(sides.hi),
    }
}

/// The kernels written once per axis, on grid `n` (2D or 3D), with the coefficients `c`
/// in `T` and in f64; each comparison is named after its kernel, followed by `tag` where
/// it is not empty ("3d").
fn per_axis_kernels<T: Real>(
    gpu: &Backend,
    n: &[usize],
    tag: &str,
    (c, c64): (&[T], &[f64]),
    sides: Sides<'_>,
) {
    let t = T::from_f64;
    let (l, l64) = (
        level(c, t(900.0), t(50.0), sides),
        level(c64, 900.0, 50.0, sides),
    );
    let Sides { lo, hi, periodic } = sides;
    let name = |kernel: &str, separator: char| match tag {
        "" => kernel.to_string(),
        _ => format!("{kernel}{separator}{tag}"),
    };
    compare::<T>(gpu, &name("jacobi", '_'), n, 0, 3, &|b, _, s| {
        let [e, r, o] = s else { unreachable!() };
        mg::jacobi::launch(b, e, r, o, &l, t(0.8)).map(|_| vec![])
    });
    for colour in [0, 1] {
        compare::<T>(gpu, &name("rbgs", '_'), n, 0, 2, &|b, _, s| {
            let [e, r] = s else { unreachable!() };
            mg::rbgs::launch(b, e, r, &l, colour).map(|_| vec![])
        });
    }
    compare::<T>(gpu, &name("residual", '_'), n, 0, 3, &|b, _, s| {
        let [e, r, o] = s else { unreachable!() };
        mg::residual::launch(b, e, r, o, &l).map(|_| vec![])
    });
    compare::<T>(gpu, &name("correct_defect2", '_'), n, 3, 2, &|b, w, s| {
        let [u, f, out] = w else { unreachable!() };
        let [e, r] = s else { unreachable!() };
        let n2 = mg::correct_defect2::launch(b, u, e, f, out, r, &l64)?;
        Ok(vec![n2])
    });
    compare::<T>(gpu, &name("pointwise kernels", ' '), n, 3, 1, &|b, w, s| {
        let [u, f, o] = w else { unreachable!() };
        mg::correct::launch(b, u, &s[0])?;
        mg::penalty_rhs::launch(b, u, f, o, &l64)?;
        mg::replace::launch(b, f, &s[0], lo, hi)?;
        mg::narrow::launch(b, u, &mut s[0])?;
        let mean = mg::periodic_sum::launch(b, u, periodic)?;
        mg::shift::launch(b, o, 0.25)?;
        Ok(vec![mean])
    });
}

/// A copy of `f` with a halo of 6 (filled with 0.25), for the high-order defects.
fn widen(b: &Backend, f: &Field<f64>) -> Result<Field<f64>, Error> {
    let host = f.to_host()?;
    Field::from_fn(f.extent(), 6, |p| host.get(p).unwrap_or(0.25)).to(b)
}

fn kernels_3d<T: Real>(gpu: &Backend) {
    let t = T::from_f64;
    let [bw, be, bs, bn, bb, bt] = SIDES_3D;
    let (lo, hi) = (&[bw, bs, bb][..], &[be, bn, bt][..]);
    let c = [t(1.3), t(0.7), t(1.1)];
    let c64 = [1.3, 0.7, 1.1];
    let sides = Sides {
        lo,
        hi,
        periodic: &[0, 1, 1],
    };
    per_axis_kernels::<T>(gpu, &N3, "3d", (&c, &c64), sides);
    let l64 = level(&c64, 900.0, 50.0, sides);
    compare::<T>(gpu, "transfers_3d", &N3, 0, 2, &|b, _, s| {
        let [fine, other] = s else { unreachable!() };
        let mut coarse = Field::<T>::zeros_on(b, &[11, 9, 7], 1)?;
        mg::restrict_full_3d::launch(b, fine, &mut coarse, lo, hi)?;
        mg::prolong_add_3d::launch(b, other, &coarse, lo, hi)?;
        mg::restrict_inject::launch(b, fine, &mut coarse)?;
        mg::prolong_add_3d::launch(b, other, &coarse, lo, hi)?;
        mg::zero::launch(b, fine)?;
        Ok(vec![])
    });
    compare::<T>(gpu, "defects_3d", &N3, 2, 1, &|b, w, s| {
        let [u, f] = w else { unreachable!() };
        let a = mg::defect2::launch(b, u, f, &mut s[0], &l64)?;
        let (u, f) = (widen(b, u)?, widen(b, f)?);
        let c = mg::defect::launch(b, &u, &f, &mut s[0], &l64, 4)?;
        let d = mg::defect::launch(b, &u, &f, &mut s[0], &l64, 6)?;
        Ok(vec![a, c, d])
    });
}

#[test]
fn periodic_halo_wraps_agree_with_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    let mut r = rng("wrap");
    for n in [&N2[..], &N3[..]] {
        let host: Field<f64> = random_field(&mut r, n, 2, -1.0, 1.0);
        let mut on_cpu = host.clone();
        let mut on_gpu = host.to(&gpu).expect("to device");
        for (axis, &extent) in n.iter().enumerate() {
            on_cpu
                .wrap_periodic(&Backend::Cpu, axis, extent - 1, 2)
                .expect("cpu wrap");
            on_gpu
                .wrap_periodic(&gpu, axis, extent - 1, 2)
                .expect("gpu wrap");
        }
        let back = on_gpu.to_host().expect("to host");
        assert!(back == on_cpu, "halo wraps of {n:?} differ");
    }
}

/// Every kernel on `gpu` against the CPU, in f32 and f64, on each 2D set of sides and
/// in 3D.
fn every_kernel(gpu: &Backend) {
    for sides in SIDES_2D {
        kernels_2d::<f32>(gpu, sides);
        kernels_2d::<f64>(gpu, sides);
    }
    kernels_3d::<f32>(gpu);
    kernels_3d::<f64>(gpu);
}

#[test]
fn every_multigrid_kernel_agrees_with_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    every_kernel(&gpu);
    println!("every multigrid kernel agrees with the CPU in f32 and f64");
}

/// Every kernel under fixed launch shapes that use each tile variant (points along the
/// last axis, vectors along x): red-black tiles hold points of both colours, and the grid
/// transfers read their fine and coarse fields at mapped offsets.
#[test]
fn every_multigrid_kernel_agrees_with_the_cpu_for_every_tile() {
    let Some(Backend::Cuda(cuda)) = gpu_or_skip() else {
        return;
    };
    for shape in TILE_SHAPES.into_iter().chain(["32x2x1v2p4"]) {
        let s: LaunchShape = shape.parse().expect("a shape");
        let gpu = Backend::Cuda(cuda.clone().with_tuning(Tuning::Fixed(s)));
        every_kernel(&gpu);
    }
    println!("every multigrid kernel agrees with the CPU under every tile shape");
}

/// The largest difference between two solutions.
fn max_diff(a: &Problem, b: &Problem) -> f64 {
    let (a, b) = (a.u.interior().expect("u"), b.u.interior().expect("u"));
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Solves the same problem on the CPU and on the GPU (launch by launch, and replayed from
/// a CUDA graph) and checks that the three agree. With graphs the GPU solves again until
/// one is recorded: a cycle is recorded once its kernels' launch-shape trials (their first
/// launches) have run, which takes one solve or several, by the solve's cycles.
fn agree(name: &str, problem: &dyn Fn(&Backend) -> Problem, options: &Options, gpu: &Backend) {
    let mut on_cpu = problem(&Backend::Cpu);
    let rc = solve(&Backend::Cpu, &mut on_cpu, options).expect("cpu solve");
    let solves_with_graphs = LaunchShape::MOST_TRIAL_LAUNCHES + 1;
    let runs = std::iter::once(false).chain(std::iter::repeat_n(true, solves_with_graphs));
    for (run, graph) in runs.enumerate() {
        let options = Options {
            graph,
            ..options.clone()
        };
        let mut on_gpu = problem(gpu);
        let rg = solve(gpu, &mut on_gpu, &options).expect("gpu solve");
        let diff = max_diff(&on_cpu, &on_gpu);
        println!(
            "{name} {:?} graph {graph}: cpu {} cycles, gpu {} cycles (graph nodes {:?}), max diff {diff:.2e}",
            options.precision,
            rc.cycles.len(),
            rg.cycles.len(),
            rg.graph_nodes
        );
        assert_eq!(rc.cycles.len(), rg.cycles.len(), "{name}");
        assert!(diff < 1e-9, "{name}: solutions differ by {diff:e}");
        // The GPU reads each cycle's residual while the next cycle runs: every one must
        // be the residual of its own cycle (a neighbour's differs by the rate, 0.1 or
        // less; rounding differences between the two paths are far below 25%).
        for (k, (c, g)) in rc.cycles.iter().zip(&rg.cycles).enumerate() {
            let gap = (c.residual - g.residual).abs() / c.residual;
            assert!(
                gap < 0.25,
                "{name}: cycle {} residual {:e} on the GPU, {:e} on the CPU",
                k + 1,
                g.residual,
                c.residual
            );
        }
        if !graph {
            continue;
        }
        if rg.graph_nodes.is_some() || rg.cycles.len() <= 2 {
            break;
        }
        assert!(
            run < solves_with_graphs,
            "{name}: no graph was recorded in {solves_with_graphs} solves"
        );
    }
}

#[test]
fn whole_solves_agree_with_the_cpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    let g = |x: f64, y: f64| x * x - y;
    let f = |x: f64, y: f64| (x * 3.0).sin() + y;
    for precision in [Precision::F64, Precision::Mixed] {
        let options = Options {
            precision,
            fmg: true,
            ..Options::default()
        };
        let square = |b: &Backend| Problem::new(b, 129, g, f).expect("problem");
        agree("2D Dirichlet, FMG", &square, &options, &gpu);

        let wave = |x: f64, y: f64| (TAU * x).sin() * (3.0 * y).cos();
        let periodic = Options {
            precision,
            boundary: Boundary::all(BoundaryKind::Periodic),
            order: Order::Fourth,
            ..Options::default()
        };
        let torus = |b: &Backend| Problem::new(b, 129, |_, _| 0.0, wave).expect("problem");
        agree("2D periodic, 4th order", &torus, &periodic, &gpu);

        let mixed_sides = Options {
            precision,
            boundary: Boundary {
                west: BoundaryKind::Neumann,
                bottom: BoundaryKind::Periodic,
                top: BoundaryKind::Periodic,
                ..Boundary::all(BoundaryKind::Dirichlet)
            },
            ..Options::default()
        };
        let cube = |b: &Backend| {
            Problem::new_3d(b, 33, |x, y, _| x - y, |x, _, z| x * (TAU * z).sin()).expect("problem")
        };
        agree("3D Neumann/periodic/Dirichlet", &cube, &mixed_sides, &gpu);
    }
}
