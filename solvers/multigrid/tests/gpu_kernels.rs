//! Every multigrid kernel on a CUDA device agrees with the CPU path on random inputs (f64
//! to 1e-12, f32 to 1e-5 relative), and a whole solve agrees. Skips, saying why, without a
//! GPU. Stage for a GPU machine with
//! `../shared/tools/stage-gpu -p multigrid --test gpu_kernels`.

use multigrid::kernels::mg;
use multigrid::{solve, Options, Precision, Problem};
use stencil_runtime::{Backend, Cuda, Error, Field, Real};
use stencil_tests::harness::{assert_close, random_field, rng, tolerance, values};

fn gpu() -> Option<Backend> {
    match Cuda::new(0) {
        Ok(c) => Some(Backend::Cuda(c)),
        Err(why) => {
            println!("SKIPPED: this test needs a CUDA device: {why}");
            None
        }
    }
}

type Launch<'a, T> =
    dyn Fn(&Backend, &mut [Field<f64>], &mut [Field<T>]) -> Result<Vec<f64>, Error> + 'a;

/// Runs `launch` on the CPU and on `gpu` from the same random fields (`wide` f64 fields
/// and `narrow` fields of type `T`, all `n x n` with halo 1) and compares every field and
/// the reductions afterwards.
fn compare<T: Real>(gpu: &Backend, name: &str, wide: usize, narrow: usize, launch: &Launch<'_, T>) {
    let n = [37usize, 29];
    let what = format!("{name} {:?}", T::PRECISION);
    let mut r = rng(&what);
    let w: Vec<Field<f64>> = (0..wide)
        .map(|_| random_field(&mut r, &n, 1, 0.5, 2.0))
        .collect();
    let s: Vec<Field<T>> = (0..narrow)
        .map(|_| random_field(&mut r, &n, 1, 0.5, 2.0))
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

/// Boundary kinds: a mix, so every branch of the kernels runs.
const SIDES: [i64; 4] = [0, 1, 2, 1];

fn kernels<T: Real>(gpu: &Backend) {
    let t = T::from_f64;
    let [bw, be, bs, bn] = SIDES;
    let (ax, ay, h2, kap) = (t(1.3), t(0.7), t(900.0), t(50.0));
    compare::<T>(gpu, "jacobi", 0, 3, &|b, _, s| {
        let [e, r, o] = s else { unreachable!() };
        mg::jacobi::launch(b, e, r, o, ax, ay, h2, kap, bw, be, bs, bn, t(0.8)).map(|_| vec![])
    });
    for colour in [0, 1] {
        compare::<T>(gpu, "rbgs", 0, 2, &|b, _, s| {
            let [e, r] = s else { unreachable!() };
            mg::rbgs::launch(b, e, r, ax, ay, h2, kap, bw, be, bs, bn, colour).map(|_| vec![])
        });
        compare::<T>(gpu, "zebra_x", 0, 2, &|b, _, s| {
            let [e, r] = s else { unreachable!() };
            mg::zebra_x::launch(b, e, r, ax, ay, h2, kap, bw, be, bs, bn, colour).map(|_| vec![])
        });
        compare::<T>(gpu, "zebra_y", 0, 2, &|b, _, s| {
            let [e, r] = s else { unreachable!() };
            mg::zebra_y::launch(b, e, r, ax, ay, h2, kap, bw, be, bs, bn, colour).map(|_| vec![])
        });
    }
    compare::<T>(gpu, "residual", 0, 3, &|b, _, s| {
        let [e, r, o] = s else { unreachable!() };
        mg::residual::launch(b, e, r, o, ax, ay, h2, kap, bw, be, bs, bn).map(|_| vec![])
    });
    compare::<T>(gpu, "zero", 0, 1, &|b, _, s| {
        mg::zero::launch(b, &mut s[0]).map(|_| vec![])
    });
    // Transfers between a 37 x 29 grid and a 19 x 15 one.
    compare::<T>(gpu, "transfers", 0, 2, &|b, _, s| {
        let [fine, other] = s else { unreachable!() };
        let mut coarse = Field::<T>::zeros_on(b, &[19, 15], 1)?;
        mg::restrict_full::launch(b, fine, &mut coarse)?;
        mg::prolong_add::launch(b, other, &coarse, bw, be, bs, bn)?;
        mg::restrict_inject::launch(b, fine, &mut coarse)?;
        mg::prolong_add::launch(b, other, &coarse, bw, be, bs, bn)?;
        let mut cells = Field::<T>::zeros_on(b, &[18, 14], 1)?;
        let mut fine_cells = Field::<T>::zeros_on(b, &[36, 28], 1)?;
        let src =
            Field::<T>::from_fn(&[36, 28], 1, |[i, j, _]| t((i * 3 - j) as f64 * 0.01)).to(b)?;
        mg::restrict_cells::launch(b, &src, &mut cells)?;
        mg::prolong_cells::launch(b, &cells, &mut fine_cells)?;
        Ok(fine_cells.interior()?.iter().map(|v| v.as_f64()).collect())
    });
    compare::<T>(gpu, "defect2", 2, 1, &|b, w, s| {
        let [u, f] = w else { unreachable!() };
        let n2 = mg::defect2::launch(b, u, f, &mut s[0], 1.3, 0.7, 900.0, 50.0, bw, be, bs, bn)?;
        Ok(vec![n2])
    });
    compare::<T>(gpu, "defect4 and defect6", 2, 1, &|b, w, s| {
        let big = |f: &Field<f64>| -> Result<Field<f64>, Error> {
            let host = f.to_host()?;
            let v = Field::from_fn(&[37, 29], 6, |p| host.get(p).unwrap_or(0.25));
            v.to(b)
        };
        let (u, f) = (big(&w[0])?, big(&w[1])?);
        let a = mg::defect4::launch(b, &u, &f, &mut s[0], 1.3, 0.7, 900.0)?;
        let c = mg::defect6::launch(b, &u, &f, &mut s[0], 1.3, 0.7, 900.0)?;
        Ok(vec![a, c])
    });
    compare::<T>(
        gpu,
        "correct, narrow, replace, penalty_rhs",
        3,
        1,
        &|b, w, s| {
            let [u, f, o] = w else { unreachable!() };
            mg::correct::launch(b, u, &s[0])?;
            mg::penalty_rhs::launch(b, u, f, o, 900.0, 50.0, bw, be, bs, bn)?;
            mg::replace::launch(b, f, &s[0], bw, be, bs, bn)?;
            mg::narrow::launch(b, u, &mut s[0])?;
            Ok(vec![])
        },
    );
}

#[test]
fn every_multigrid_kernel_agrees_with_the_cpu() {
    let Some(gpu) = gpu() else { return };
    kernels::<f32>(&gpu);
    kernels::<f64>(&gpu);
    println!("every multigrid kernel agrees with the CPU in f32 and f64");
}

#[test]
fn a_whole_solve_agrees_with_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let g = |x: f64, y: f64| x * x - y;
    let f = |x: f64, y: f64| (x * 3.0).sin() + y;
    for precision in [Precision::F64, Precision::Mixed] {
        let options = Options {
            precision,
            fmg: true,
            ..Options::default()
        };
        let mut on_cpu = Problem::new(&Backend::Cpu, 129, g, f).expect("problem");
        let mut on_gpu = Problem::new(&gpu, 129, g, f).expect("problem");
        let rc = solve(&Backend::Cpu, &mut on_cpu, &options).expect("cpu solve");
        let rg = solve(&gpu, &mut on_gpu, &options).expect("gpu solve");
        println!(
            "{precision:?}: cpu {} cycles, gpu {} cycles",
            rc.cycles.len(),
            rg.cycles.len()
        );
        assert_eq!(rc.cycles.len(), rg.cycles.len());
        let (a, b) = (
            on_cpu.u.interior().expect("u"),
            on_gpu.u.interior().expect("u"),
        );
        let diff = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(diff < 1e-9, "{precision:?}: solutions differ by {diff:e}");
    }
}
