//! Sampled grids (`Sampled<T>`, `g.sample(x, y)`) and helpers that take the mesh, fields
//! and grids: bilinear interpolation checked against functions it reproduces exactly, on
//! the CPU; on CUDA the software variant against the CPU bit for bit and the texture
//! variant against the CPU within the hardware filter's precision.

use std::sync::Arc;
use stencil_runtime::prelude::*;
use stencil_tests::device::gpu_or_skip;
use stencil_tests::meshes::split_squares;

#[stencils]
mod probes {
    /// The grid at the vertex's own position.
    #[stencil_fn]
    fn at_vertex<T: Real>(g: Sampled<T>, x: In<T>, y: In<T>) -> T {
        g.sample(x, y)
    }

    /// The sum of the grid over the vertex's neighbours' positions.
    #[stencil_fn]
    fn over_neighbours<T: Real>(mesh: Mesh, g: Sampled<T>, x: In<T>, y: In<T>) -> T {
        let mut s = 0.0;
        for j in mesh.neighbours() {
            s += g.sample(x[j], y[j]);
        }
        s
    }

    /// The grid at the vertex, and summed over its neighbours (through helpers).
    #[stencil]
    pub fn probe<T: Real>(
        mesh: Mesh,
        x: In<T>,
        y: In<T>,
        g: Sampled<T>,
        here: Out<T>,
        around: Out<T>,
    ) {
        here = at_vertex(g, x, y);
        around = over_neighbours(mesh, g, x, y);
    }

    /// The grid on a regular lattice of points from `(x0, y0)` with spacing `h`.
    #[stencil(dims = 2)]
    pub fn lattice<T: Real>(g: Sampled<T>, out: Out<T>, x0: T, y0: T, h: T) {
        out = g.sample(x0 + coord(0, 0.0, h), y0 + coord(1, 0.0, h));
    }
}

/// A bilinear function, which bilinear interpolation reproduces exactly inside each cell.
fn bilinear(x: f64, y: f64) -> f64 {
    1.5 + 0.25 * x - 0.75 * y + 0.125 * x * y
}

/// `f` sampled on the grid of `n x m` samples from (-1, 2) with spacing (0.5, 0.25).
fn grid_of<T: Real>(
    backend: &Backend,
    n: usize,
    m: usize,
    f: fn(f64, f64) -> f64,
) -> SampledGrid<T> {
    let (origin, spacing) = ([-1.0, 2.0], [0.5, 0.25]);
    let samples: Vec<T> = (0..n * m)
        .map(|k| {
            let (i, j) = ((k % n) as f64, (k / n) as f64);
            T::from_f64(f(origin[0] + i * spacing[0], origin[1] + j * spacing[1]))
        })
        .collect();
    SampledGrid::new(backend, [n, m], origin, spacing, &samples).unwrap()
}

/// An `n` x `n` mesh of squares split in two, spread over [-2, 5] x [1, 6] with jitter.
fn mesh(n: usize) -> (Arc<MeshTopology>, Vec<f64>, Vec<f64>) {
    let s = 1.0 / (n - 1) as f64;
    let jitter = |k: usize| ((k * 7919 % 101) as f64 / 101.0 - 0.5) * 0.3 * s;
    let x = (0..n * n)
        .map(|k| -2.0 + 7.0 * ((k % n) as f64 * s + jitter(k)))
        .collect();
    let y = (0..n * n)
        .map(|k| 1.0 + 5.0 * ((k / n) as f64 * s + jitter(k + 17)))
        .collect();
    (split_squares(n), x, y)
}

/// The largest difference between the interior values of `a` and `b`.
fn largest_difference(a: &Field<f64>, b: &Field<f64>) -> f64 {
    let (a, b) = (a.interior().unwrap(), b.interior().unwrap());
    a.iter()
        .zip(&b)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max)
}

/// Every third vertex of every third row: an independent set of [`mesh`]'s vertices.
fn spread(k: usize) -> Vec<usize> {
    (0..k * k)
        .filter(|v| (v % k).is_multiple_of(3) && (v / k).is_multiple_of(3))
        .collect()
}

fn field<T: Real>(v: &[f64]) -> Field<T> {
    Field::from_fn(&[v.len()], 0, |[i, _, _]| T::from_f64(v[i as usize]))
}

/// Where the grid of [`grid_of`] reads `(x, y)`: clamped to its rectangle.
fn clamp(x: f64, y: f64, n: usize, m: usize) -> (f64, f64) {
    (
        x.clamp(-1.0, -1.0 + 0.5 * (n - 1) as f64),
        y.clamp(2.0, 2.0 + 0.25 * (m - 1) as f64),
    )
}

#[test]
fn sampling_reproduces_bilinear_functions_and_clamps_at_the_edges() {
    let (n, m) = (9, 13);
    let g = grid_of::<f64>(&Backend::Cpu, n, m, bilinear);
    let (x0, y0, h) = (-2.3, 1.4, 0.173);
    let mut out = Field::<f64>::zeros(&[40, 30], 0).unwrap();
    probes::lattice::launch(&Backend::Cpu, &g, &mut out, x0, y0, h).unwrap();
    let mut outside = 0;
    for j in 0..30 {
        for i in 0..40 {
            let (x, y) = (x0 + i as f64 * h, y0 + j as f64 * h);
            let (cx, cy) = clamp(x, y, n, m);
            outside += usize::from((cx, cy) != (x, y));
            let got = out.get([i, j, 0]).unwrap();
            assert!(
                (got - bilinear(cx, cy)).abs() < 1e-13,
                "({x}, {y}): {got} vs {}",
                bilinear(cx, cy)
            );
        }
    }
    assert!(
        outside > 100,
        "the lattice should also reach outside the grid"
    );
}

#[test]
fn helpers_take_the_mesh_fields_and_grids() {
    let (n, m) = (15, 21);
    let g = grid_of::<f64>(&Backend::Cpu, n, m, bilinear);
    let k = 12;
    let (topo, x, y) = mesh(k);
    let set = topo.set(&spread(k)).unwrap();
    let (xf, yf) = (field::<f64>(&x), field::<f64>(&y));
    let zeros = || Field::<f64>::zeros(&[k * k], 0).unwrap();
    let (mut here, mut around) = (zeros(), zeros());
    probes::probe::launch(&Backend::Cpu, &set, &xf, &yf, &g, &mut here, &mut around).unwrap();
    let at = |v: usize| {
        let (cx, cy) = clamp(x[v], y[v], n, m);
        bilinear(cx, cy)
    };
    for v in spread(k) {
        let got = here.get([v as isize, 0, 0]).unwrap();
        assert!(
            (got - at(v)).abs() < 1e-13,
            "vertex {v}: {got} vs {}",
            at(v)
        );
        let want: f64 = topo.neighbours_of(v).iter().map(|&j| at(j as usize)).sum();
        let got = around.get([v as isize, 0, 0]).unwrap();
        assert!((got - want).abs() < 1e-12, "vertex {v}: {got} vs {want}");
    }
}

#[test]
fn bad_grids_are_errors() {
    let cpu = Backend::Cpu;
    let e = SampledGrid::<f64>::new(&cpu, [1, 4], [0.0; 2], [1.0; 2], &[0.0; 4]).unwrap_err();
    assert!(e.to_string().contains("fewer than 2"), "{e}");
    let e = SampledGrid::<f64>::new(&cpu, [2, 3], [0.0; 2], [1.0; 2], &[0.0; 5]).unwrap_err();
    assert!(e.to_string().contains("5 samples"), "{e}");
    let e = SampledGrid::<f64>::new(&cpu, [2, 2], [0.0; 2], [1.0, -1.0], &[0.0; 4]).unwrap_err();
    assert!(e.to_string().contains("spacing"), "{e}");
    let e = SampledGrid::<f64>::new(&cpu, [2, 2], [0.0; 2], [1.0; 2], &[0.0, 1.0, f64::NAN, 0.0])
        .unwrap_err();
    assert!(e.to_string().contains("sample (0, 1) is NaN"), "{e}");
    let g = SampledGrid::<f64>::new(&cpu, [2, 2], [0.0; 2], [1.0; 2], &[0.0; 4]).unwrap();
    let e = g.with_hardware_filtering(&cpu).unwrap_err();
    assert!(e.to_string().contains("needs a CUDA device"), "{e}");
}

/// A smooth function that bilinear interpolation does not reproduce exactly.
fn wavy(x: f64, y: f64) -> f64 {
    (1.3 * x).sin() * (0.7 * y).cos() + 0.1 * x * x
}

#[test]
fn cuda_software_sampling_matches_the_cpu_and_textures_come_close() {
    let Some(gpu) = gpu_or_skip() else { return };
    let (n, m) = (33, 41);
    let (x0, y0, h) = (-2.3, 1.4, 0.0173);
    let extent = [400, 500];
    // f64 and f32 in software: the same operations, so the same values.
    let mut cpu = Field::<f64>::zeros(&extent, 0).unwrap();
    let g = grid_of::<f64>(&Backend::Cpu, n, m, wavy);
    probes::lattice::launch(&Backend::Cpu, &g, &mut cpu, x0, y0, h).unwrap();
    let gd = grid_of::<f64>(&gpu, n, m, wavy);
    let mut dev = Field::<f64>::zeros_on(&gpu, &extent, 0).unwrap();
    probes::lattice::launch(&gpu, &gd, &mut dev, x0, y0, h).unwrap();
    assert_eq!(cpu.interior().unwrap(), dev.interior().unwrap());
    let mut cpu32 = Field::<f32>::zeros(&extent, 0).unwrap();
    let g32 = grid_of::<f32>(&Backend::Cpu, n, m, wavy);
    probes::lattice::launch(
        &Backend::Cpu,
        &g32,
        &mut cpu32,
        x0 as f32,
        y0 as f32,
        h as f32,
    )
    .unwrap();
    let gd32 = grid_of::<f32>(&gpu, n, m, wavy);
    let mut dev32 = Field::<f32>::zeros_on(&gpu, &extent, 0).unwrap();
    probes::lattice::launch(&gpu, &gd32, &mut dev32, x0 as f32, y0 as f32, h as f32).unwrap();
    assert_eq!(cpu32.interior().unwrap(), dev32.interior().unwrap());

    // Textures: within 1/256 of the largest step between neighbouring samples (the
    // filter's 8-bit weights), plus f32 rounding.
    let samples: Vec<f64> = (0..n * m)
        .map(|k| wavy(-1.0 + 0.5 * (k % n) as f64, 2.0 + 0.25 * (k / n) as f64))
        .collect();
    let step = (0..n * m)
        .flat_map(|k| {
            let right = (k % n + 1 < n).then(|| (samples[k + 1] - samples[k]).abs());
            let up = (k + n < n * m).then(|| (samples[k + n] - samples[k]).abs());
            right.into_iter().chain(up)
        })
        .fold(0.0, f64::max);
    let tolerance = 2.0 * step / 256.0 + 1e-6;
    let gt = grid_of::<f64>(&gpu, n, m, wavy)
        .with_hardware_filtering(&gpu)
        .unwrap();
    assert_eq!(gt.filtering(), Filtering::Hardware);
    let mut tex = Field::<f64>::zeros_on(&gpu, &extent, 0).unwrap();
    probes::lattice::launch(&gpu, &gt, &mut tex, x0, y0, h).unwrap();
    let worst = largest_difference(&cpu, &tex);
    println!("texture filtering: largest difference {worst:.3e} (tolerance {tolerance:.3e})");
    assert!(worst <= tolerance, "{worst} > {tolerance}");
    assert!(
        worst > 0.0,
        "hardware filtering should differ from software somewhere"
    );

    // Vertex kernels and helpers on the device: software exact, texture close.
    let k = 200;
    let (topo, x, y) = mesh(k);
    let td = topo.to(&gpu).unwrap();
    let vertices = spread(k);
    let (set, set_d) = (topo.set(&vertices).unwrap(), td.set(&vertices).unwrap());
    let zeros = || Field::<f64>::zeros(&[k * k], 0).unwrap();
    let (xf, yf) = (field::<f64>(&x), field::<f64>(&y));
    let (mut here, mut around) = (zeros(), zeros());
    probes::probe::launch(&Backend::Cpu, &set, &xf, &yf, &g, &mut here, &mut around).unwrap();
    let on = |f: &Field<f64>| f.to(&gpu).unwrap();
    for grid in [&gd, &gt] {
        let (mut hd, mut ad) = (on(&zeros()), on(&zeros()));
        probes::probe::launch(&gpu, &set_d, &on(&xf), &on(&yf), grid, &mut hd, &mut ad).unwrap();
        let scale = if grid.filtering() == Filtering::Software {
            0.0
        } else {
            8.0
        };
        for (a, b) in [(&here, &hd), (&around, &ad)] {
            let worst = largest_difference(a, b);
            assert!(
                worst <= scale * tolerance,
                "{:?}: {worst}",
                grid.filtering()
            );
        }
    }
    // Grids of one launch share their filtering; a host grid cannot run on the device.
    let e = probes::probe::launch(
        &gpu,
        &set_d,
        &on(&xf),
        &on(&yf),
        &g,
        &mut on(&zeros()),
        &mut on(&zeros()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("host memory"), "{e}");
}
