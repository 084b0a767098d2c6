//! Staged values (`let f = stage(..)`): a kernel that stages its face fluxes computes what
//! the same kernel with both faces written out computes, bit for bit, on the CPU and on a
//! device for every launch shape; the device keeps the stage in shared memory. So does a
//! chain of stages (cells' sides staged, faces' fluxes staged from them, a third call
//! from both), which the device computes a level at a time.

use stencil_runtime::cuda::{LaunchShape, Tuning};
use stencil_runtime::prelude::*;
use stencil_runtime::{Backend, Field};
use stencil_tests::device::cuda_or_skip;
use stencil_tests::harness::{
    bits, kernel_ir, poisoned, poisoned_on, random_field, random_fields_on, rng,
};
use stencil_tests::{assert_written_out_alike_on_the_cpu, for_precisions};

#[stencils]
mod kernels {
    /// The upwind flux of `q` through the east face, at the speed `c` averaged onto it.
    #[stencil_fn]
    fn east<T: Real>(q: In<T>, c: In<T>) -> T {
        let s = 0.5 * (c + c[(1, 0)]);
        if s > 0.0 {
            s * q
        } else {
            s * q[(1, 0)]
        }
    }

    /// Upwind transport with the east face's flux staged: each face computed once and
    /// read by the cells on both sides.
    #[stencil]
    pub fn staged<T: Real>(q: In<T>, c: In<T>, out: Out<T>, dt: T) {
        let f = stage(east(q, c));
        out = q - dt * (f - f[(-1, 0)]);
    }

    /// The same with both faces written out.
    #[stencil]
    pub fn written_out<T: Real>(q: In<T>, c: In<T>, out: Out<T>, dt: T) {
        let se = 0.5 * (c + c[(1, 0)]);
        let fe = if se > 0.0 { se * q } else { se * q[(1, 0)] };
        let sw = 0.5 * (c[(-1, 0)] + c);
        let fw = if sw > 0.0 { sw * q[(-1, 0)] } else { sw * q };
        out = q - dt * (fe - fw);
    }

    /// A stage read along both axes and at a corner, computed over a tile's halo on every
    /// side.
    #[stencil]
    pub fn corners<T: Real>(q: In<T>, out: Out<T>) {
        let g = stage(q * q + (index(0) - 2 * index(1)) as T);
        out = g[(-1, -1)] + 2.0 * g[(1, 0)] - g[(0, 1)] + g;
    }

    /// [`corners`] written out.
    #[stencil]
    pub fn corners_written_out<T: Real>(q: In<T>, out: Out<T>) {
        let (i, j) = (index(0), index(1));
        let a = q[(-1, -1)] * q[(-1, -1)] + (i - 1 - 2 * (j - 1)) as T;
        let b = q[(1, 0)] * q[(1, 0)] + (i + 1 - 2 * j) as T;
        let c = q[(0, 1)] * q[(0, 1)] + (i - 2 * (j + 1)) as T;
        let d = q * q + (i - 2 * j) as T;
        out = a + 2.0 * b - c + d;
    }

    /// The limited sides `(low, high)` of a cell from the values below, at and above it.
    #[stencil_fn]
    fn sides<T: Real>(below: T, centre: T, above: T) -> (T, T) {
        let (l, r) = (centre - below, above - centre);
        let d = if l * r > 0.0 {
            l.abs().min(r.abs()).copysign(l)
        } else {
            0.0
        };
        (centre - 0.5 * d, centre + 0.5 * d)
    }

    /// The upwind flux through a face of speed `s` between a cell's high side `left` and
    /// the next cell's low side `right`.
    #[stencil_fn]
    fn upwind<T: Real>(s: T, left: T, right: T) -> T {
        if s > 0.0 {
            s * left
        } else {
            s * right
        }
    }

    /// MUSCL transport as a chain of stages: each cell's sides staged once per axis, each
    /// low face's flux staged from the sides of its two cells, and a third call that reads
    /// both levels below it.
    #[stencil]
    pub fn chained<T: Real>(q: In<T>, c: In<T>, out: Out<T>, dt: T) {
        let (lo, hi) = stage(sides(q[(-1, 0)], q, q[(1, 0)]));
        let (ylo, yhi) = stage(sides(q[(0, -1)], q, q[(0, 1)]));
        let fx = stage(upwind(0.5 * (c[(-1, 0)] + c), hi[(-1, 0)], lo));
        let fy = stage(upwind(0.5 * (c[(0, -1)] + c), yhi[(0, -1)], ylo));
        let mix = stage(fx[(0, 1)] - fy[(1, 0)] + lo * (index(0) - index(1)) as T);
        out = q - dt * (fx[(1, 0)] - fx + fy[(0, 1)] - fy) + 1e-3 * (mix[(1, 0)] - mix);
    }

    /// The sides of the cell at `d` along axis `a`.
    #[stencil_fn]
    fn sides_at<T: Real>(q: In<T>, d: (i64, i64), a: i64) -> (T, T) {
        let n = unit(a);
        sides(q[d - n], q[d], q[d + n])
    }

    /// The flux through the low face along axis `a` of the cell at `d`.
    #[stencil_fn]
    fn flux_at<T: Real>(q: In<T>, c: In<T>, d: (i64, i64), a: i64) -> T {
        let n = unit(a);
        let (_, hi) = sides_at(q, d - n, a);
        let (lo, _) = sides_at(q, d, a);
        upwind(0.5 * (c[d - n] + c[d]), hi, lo)
    }

    /// `mix` of [`chained`] at `d`.
    #[stencil_fn]
    fn mix_at<T: Real>(q: In<T>, c: In<T>, d: (i64, i64)) -> T {
        let (lo, _) = sides_at(q, d, 0);
        let ramp = ((index(0) + d[0]) - (index(1) + d[1])) as T;
        flux_at(q, c, d + unit(1), 0) - flux_at(q, c, d + unit(0), 1) + lo * ramp
    }

    /// [`chained`] written out: every cell's sides computed for each face that reads them.
    #[stencil]
    pub fn chained_written_out<T: Real>(q: In<T>, c: In<T>, out: Out<T>, dt: T) {
        let (o, e, n) = ((0, 0), unit(0), unit(1));
        let fluxes =
            flux_at(q, c, e, 0) - flux_at(q, c, o, 0) + flux_at(q, c, n, 1) - flux_at(q, c, o, 1);
        out = q - dt * fluxes + 1e-3 * (mix_at(q, c, e) - mix_at(q, c, o));
    }

    /// A 1D chain: the differences staged, their differences (the curvature) staged from
    /// them.
    #[stencil]
    pub fn chained_1d<T: Real>(u: In<T>, out: Out<T>) {
        let d = stage(u[1] - u);
        let c = stage(d - d[-1]);
        out = u + 0.25 * (c[1] + c[-1]) - 0.1 * d;
    }

    /// [`chained_1d`] written out.
    #[stencil]
    pub fn chained_1d_written_out<T: Real>(u: In<T>, out: Out<T>) {
        let c_east = (u[2] - u[1]) - (u[1] - u);
        let c_west = (u - u[-1]) - (u[-1] - u[-2]);
        out = u + 0.25 * (c_east + c_west) - 0.1 * (u[1] - u);
    }

    /// A tuple whose parts are of two levels (`t2` reads `a`, `t1` reads nothing): the
    /// call is computed after `a`, and `b`, which reads `t1`, after the call.
    #[stencil]
    pub fn mixed_levels<T: Real>(u: In<T>, v: In<T>, out: Out<T>) {
        let a = stage(u[1] - u);
        let (t1, t2) = stage((2.0 * v, a[-1]));
        let b = stage(t1[1] + t1);
        out = b + t2;
    }

    /// [`mixed_levels`] written out.
    #[stencil]
    pub fn mixed_levels_written_out<T: Real>(u: In<T>, v: In<T>, out: Out<T>) {
        out = (2.0 * v[1] + 2.0 * v) + (u - u[-1]);
    }

    /// A tuple whose parts are read at different offsets: `d` is read by `c` over the
    /// whole call's box (`e` is read two points back), not over `c`'s reads alone; `f`
    /// and `g`, read at other offsets at the same row, each over its own reach (`f` reads
    /// two points back itself, so computed over `g`'s reach it would read past the halo).
    #[stencil]
    pub fn parts_apart<T: Real>(u: In<T>, out: Out<T>) {
        let d = stage(u[1] - u);
        let (c, e) = stage((d[1], 2.0 * u));
        let f = stage(u[-2]);
        let g = stage(0.5 * u);
        out = c + e[-2] + f + g[-1];
    }

    /// [`parts_apart`] written out.
    #[stencil]
    pub fn parts_apart_written_out<T: Real>(u: In<T>, out: Out<T>) {
        out = (u[2] - u[1]) + 2.0 * u[-2] + u[-2] + 0.5 * u[-1];
    }

    /// A 3D chain: the forward differences staged, the Laplacian staged from them, and
    /// its second difference along z.
    #[stencil(dims = 3)]
    pub fn chained_3d<T: Real>(u: In<T>, out: Out<T>) {
        let (gx, gy, gz) = stage((u[(1, 0, 0)] - u, u[(0, 1, 0)] - u, u[(0, 0, 1)] - u));
        let lap = stage(gx - gx[(-1, 0, 0)] + gy - gy[(0, -1, 0)] + gz - gz[(0, 0, -1)]);
        out = lap[(0, 0, 1)] + lap[(0, 0, -1)] - 2.0 * lap;
    }

    /// `lap` of [`chained_3d`] at `d`.
    #[stencil_fn]
    fn lap_at<T: Real>(u: In<T>, d: (i64, i64, i64)) -> T {
        let (x, y, z) = (unit(0), unit(1), unit(2));
        (u[d + x] - u[d]) - (u[d] - u[d - x]) + (u[d + y] - u[d]) - (u[d] - u[d - y])
            + (u[d + z] - u[d])
            - (u[d] - u[d - z])
    }

    /// [`chained_3d`] written out.
    #[stencil(dims = 3)]
    pub fn chained_3d_written_out<T: Real>(u: In<T>, out: Out<T>) {
        out = lap_at(u, (0, 0, 1)) + lap_at(u, (0, 0, -1)) - 2.0 * lap_at(u, (0, 0, 0));
    }
}

/// `chained_1d` on `n[0] + n[1]` points and `chained_3d` on `n[0] x n[1] x 4`, and their
/// written-out forms, on `backend` (fields with a halo of 2): the outputs' bits.
fn chains_in_1d_and_3d_on<T: Real>(backend: &Backend, n: &[usize]) -> [(Vec<u64>, Vec<u64>); 2] {
    let mut r = rng(&format!("chains 1D, 3D {n:?}"));
    let mut field = |extent: &[usize]| {
        random_field::<T>(&mut r, extent, 2, -1.0, 1.0)
            .to(backend)
            .expect("a field on the backend")
    };
    let (line, block) = ([n[0] + n[1]], [n[0], n[1], 4]);
    let (u1, u3) = (field(&line), field(&block));
    let [mut a, mut b] = poisoned_on::<T, 2>(backend, &line);
    kernels::chained_1d::launch(backend, &u1, &mut a).unwrap();
    kernels::chained_1d_written_out::launch(backend, &u1, &mut b).unwrap();
    let in_1d = (bits(&a), bits(&b));
    let [mut a, mut b] = poisoned_on::<T, 2>(backend, &block);
    kernels::chained_3d::launch(backend, &u3, &mut a).unwrap();
    kernels::chained_3d_written_out::launch(backend, &u3, &mut b).unwrap();
    [in_1d, (bits(&a), bits(&b))]
}

/// `mixed_levels` and `parts_apart` on `n[0] * n[1]` points and their written-out forms
/// on `backend` (fields with a halo of 2, as the kernels need): the outputs' bits.
fn tuples_in_chains_on<T: Real>(backend: &Backend, n: &[usize]) -> [(Vec<u64>, Vec<u64>); 2] {
    let line = [n[0] * n[1]];
    let mut r = rng(&format!("tuples in chains {n:?}"));
    let [u, v] = [(); 2].map(|_| {
        random_field::<T>(&mut r, &line, 2, -1.0, 1.0)
            .to(backend)
            .expect("a field on the backend")
    });
    let [mut a, mut b] = poisoned_on::<T, 2>(backend, &line);
    kernels::mixed_levels::launch(backend, &u, &v, &mut a).unwrap();
    kernels::mixed_levels_written_out::launch(backend, &u, &v, &mut b).unwrap();
    let mixed = (bits(&a), bits(&b));
    kernels::parts_apart::launch(backend, &u, &mut a).unwrap();
    kernels::parts_apart_written_out::launch(backend, &u, &mut b).unwrap();
    [mixed, (bits(&a), bits(&b))]
}

/// `chained` and its written-out form on `backend` over a `n` grid (fields with a halo of
/// 2), the output's bits.
fn chained_on<T: Real>(backend: &Backend, n: &[usize]) -> (Vec<u64>, Vec<u64>) {
    let mut r = rng(&format!("chained {n:?}"));
    let [q, c] = [(); 2].map(|_| {
        random_field::<T>(&mut r, n, 2, -1.0, 1.0)
            .to(backend)
            .expect("a field on the backend")
    });
    let [mut a, mut b] = poisoned_on::<T, 2>(backend, n);
    let dt = T::from_f64(0.3);
    kernels::chained::launch(backend, &q, &c, &mut a, dt).unwrap();
    kernels::chained_written_out::launch(backend, &q, &c, &mut b, dt).unwrap();
    (bits(&a), bits(&b))
}

/// `staged`, `corners` and `chained` and their written-out forms on `backend` over a `n`
/// grid, the outputs' bits: (staged, written out) for each.
fn both_on<T: Real>(backend: &Backend, n: &[usize]) -> [(Vec<u64>, Vec<u64>); 3] {
    let [q, c] = random_fields_on::<T, 2>(&mut rng(&format!("staging {n:?}")), backend, n);
    let [mut a, mut b] = poisoned_on::<T, 2>(backend, n);
    let dt = T::from_f64(0.3);
    kernels::staged::launch(backend, &q, &c, &mut a, dt).unwrap();
    kernels::written_out::launch(backend, &q, &c, &mut b, dt).unwrap();
    let upwind = (bits(&a), bits(&b));
    kernels::corners::launch(backend, &q, &mut a).unwrap();
    kernels::corners_written_out::launch(backend, &q, &mut b).unwrap();
    let corners = (bits(&a), bits(&b));
    [upwind, corners, chained_on::<T>(backend, n)]
}

#[test]
fn a_staged_kernel_computes_the_written_out_kernel_on_the_cpu() {
    assert_written_out_alike_on_the_cpu!(both_on, chains_in_1d_and_3d_on, tuples_in_chains_on);
}

#[test]
fn on_a_device_chains_in_1d_and_3d_compute_their_written_out_forms() {
    let Some(cuda) = cuda_or_skip() else { return };
    let gpu = Backend::Cuda(cuda);
    stencil_tests::assert_written_out_alike_on_the_device!(
        &gpu,
        chains_in_1d_and_3d_on,
        tuples_in_chains_on
    );
}

#[test]
fn a_staged_kernel_reads_its_fields_as_far_as_the_written_out_one() {
    assert_eq!(kernels::staged::HALO, kernels::written_out::HALO);
    let staged = kernel_ir(kernels::staged::SOURCE, "staged");
    let written = kernel_ir(kernels::written_out::SOURCE, "written_out");
    assert_eq!(staged.fields[0].reach_lo, written.fields[0].reach_lo);
    assert_eq!(staged.fields[0].reach_hi, written.fields[0].reach_hi);
    // Computed where it is read, the stage is the written-out kernel's work.
    assert_eq!(staged.unstaged().op_counts(), written.op_counts());
    assert!(staged.stages.len() == 1 && staged.is_staged() && !written.is_staged());
    assert!(
        kernels::staged::IR.contains("; stage f = ")
            && kernels::staged::IR.contains("staged f[-1, 0]"),
        "{}",
        kernels::staged::IR
    );
}

#[test]
fn the_device_keeps_a_stage_in_shared_memory() {
    for (ptx, entry) in [
        (kernels::staged::PTX_F32, kernels::staged::ENTRY_F32),
        (kernels::staged::PTX_F64, kernels::staged::ENTRY_F64),
    ] {
        let text = stencil_runtime::cuda::only_entry(ptx, entry).expect("the entry");
        assert!(text.contains(".extern .shared"), "{text}");
        assert_eq!(text.matches("bar.sync").count(), 1, "one barrier:\n{text}");
        assert!(
            text.contains("st.shared") && text.contains("ld.shared"),
            "{text}"
        );
        // One entry: a thread computes one point of the block's tile.
        assert_eq!(text.matches(".entry").count(), 1);
    }
    assert!(kernels::staged::CODE.staging.is_some());
    assert!(kernels::written_out::CODE.staging.is_none());
}

#[test]
fn a_chain_of_stages_is_computed_a_level_at_a_time() {
    let k = kernel_ir(kernels::chained::SOURCE, "chained");
    let layout = k.stage_layout().expect("staged");
    // Five calls: the two axes' sides, the two fluxes, `mix`.
    let levels: Vec<usize> = layout.groups.iter().map(|g| g.level).collect();
    assert_eq!(levels, [0, 0, 1, 1, 2]);
    // The cells' sides along x are read from x - 1 (the face) to x + 1 (the kernel's read
    // of the next face), along y from y to y + 1 (`mix` reads `fx` one row up).
    assert_eq!(
        (layout.groups[0].lo, layout.groups[0].hi),
        ([-1, 0, 0], [1, 1, 0])
    );
    assert_eq!(kernels::chained::HALO, kernels::chained_written_out::HALO);
    // The printed IR says each chained stage's level.
    let ir = kernels::chained::IR;
    assert!(
        ir.contains("; stage fx = ") && ir.contains(", level 1") && ir.contains("; stage mix = "),
        "{ir}"
    );
    assert!(
        ir.lines()
            .any(|l| l.contains("; stage mix = ") && l.ends_with(", level 2")),
        "{ir}"
    );
    // Inlined, the chain is the written-out kernel's work.
    assert_eq!(
        k.unstaged().op_counts(),
        kernel_ir(kernels::chained_written_out::SOURCE, "chained_written_out").op_counts()
    );
    // The CPU fills a row buffer for every stage of the chain (the sides too, which the
    // kernel's points read only through the faces), each level's from the lower ones.
    let layout = k.stage_layout().expect("staged");
    let levels = k.stage_levels();
    let cpu = kernels_gen::back::rust::cpu_function(&k, &quote::quote!(rt)).to_string();
    for &(s, _) in &layout.stages {
        assert!(
            cpu.contains(&format!("stage_{s}_")),
            "stage {s} (level {}) has a row buffer:\n{cpu}",
            levels[s as usize]
        );
    }
    assert!(layout.stages.iter().any(|&(s, _)| levels[s as usize] == 0));
    for (ptx, entry) in [
        (kernels::chained::PTX_F32, kernels::chained::ENTRY_F32),
        (kernels::chained::PTX_F64, kernels::chained::ENTRY_F64),
    ] {
        let text = stencil_runtime::cuda::only_entry(ptx, entry).expect("the entry");
        assert_eq!(
            text.matches("bar.sync").count(),
            3,
            "a barrier after each level:\n{text}"
        );
    }
}

#[test]
fn a_call_is_computed_after_every_call_its_values_read() {
    // `(t1, t2)` reads `a`, so it is of level 1 though `t1` reads nothing, and `b`, which
    // reads `t1`, of level 2: a barrier between each.
    let k = kernel_ir(kernels::mixed_levels::SOURCE, "mixed_levels");
    let levels: Vec<usize> = k
        .stage_layout()
        .expect("staged")
        .groups
        .iter()
        .map(|g| g.level)
        .collect();
    assert_eq!(levels, [0, 1, 2]);
    for (ptx, entry) in [
        (
            kernels::mixed_levels::PTX_F32,
            kernels::mixed_levels::ENTRY_F32,
        ),
        (
            kernels::mixed_levels::PTX_F64,
            kernels::mixed_levels::ENTRY_F64,
        ),
    ] {
        let text = stencil_runtime::cuda::only_entry(ptx, entry).expect("the entry");
        assert_eq!(text.matches("bar.sync").count(), 3, "{text}");
    }
    // `d` is read by `c` at 1 over the box of `(c, e)`, -2 ..= 0: from -1 to 1.
    let k = kernel_ir(kernels::parts_apart::SOURCE, "parts_apart");
    let layout = k.stage_layout().expect("staged");
    assert_eq!((layout.groups[0].lo[0], layout.groups[0].hi[0]), (-1, 1));
    assert_eq!(
        kernels::parts_apart::HALO,
        kernels::parts_apart_written_out::HALO
    );
}

#[test]
fn on_a_device_a_staged_kernel_computes_the_written_out_kernel_for_every_block_shape() {
    let Some(cuda) = cuda_or_skip() else { return };
    let shapes = [
        "32x8x1p1",
        "16x16x1p1",
        "64x4x1p1",
        "128x2x1p1",
        "8x8x1p1",
        "32x1x1p1",
        "32x8x1p2",
        "32x4x1p4",
        "16x8x1p4",
        "64x2x1p2",
        // Two layers of threads along z for a 2D kernel: the second helps with the stages
        // and computes no point twice.
        "32x4x2p1",
    ];
    for_precisions!(T => {
        for n in [[1usize, 1], [7, 3], [53, 37], [300, 129]] {
            let want = both_on::<T>(&Backend::Cpu, &n);
            for shape in shapes {
                let s: LaunchShape = shape.parse().expect("a shape");
                let gpu = Backend::Cuda(cuda.clone().with_tuning(Tuning::Fixed(s)));
                let got = both_on::<T>(&gpu, &n);
                for (k, ((staged, written), (cpu, _))) in got.iter().zip(&want).enumerate() {
                    let what = format!("kernel {k} {:?} {n:?} {shape}", T::PRECISION);
                    assert_eq!(staged, written, "{what}: staged against written out");
                    assert_eq!(staged, cpu, "{what}: device against the CPU");
                }
            }
        }
    });
    println!(
        "staged kernels equal their written-out forms on {}",
        cuda.device_name()
    );
}

#[test]
fn on_a_device_chains_of_staged_kernels_queued_without_waiting_equal_the_cpu() {
    let Some(cuda) = cuda_or_skip() else { return };
    let n = [300usize, 129];
    let mut r = rng("chain");
    let q0 = random_field::<f64>(&mut r, &n, 1, -1.0, 1.0);
    let c0 = random_field::<f64>(&mut r, &n, 1, -1.0, 1.0);
    // Forty rounds of `a = k1(q)`, `q = k2(a)`, each kernel staged or written out.
    let run = |b: &Backend, first_staged: bool, second_staged: bool| {
        let mut q = q0.to(b).unwrap();
        let c = c0.to(b).unwrap();
        // Read at offsets by the second kernel: a halo (of zeros).
        let mut a = Field::<f64>::zeros(&n, 1).unwrap().to(b).unwrap();
        for _ in 0..40 {
            if first_staged {
                kernels::staged::launch(b, &q, &c, &mut a, 0.1).unwrap();
            } else {
                kernels::written_out::launch(b, &q, &c, &mut a, 0.1).unwrap();
            }
            if second_staged {
                kernels::staged::launch(b, &a, &c, &mut q, 0.1).unwrap();
            } else {
                kernels::written_out::launch(b, &a, &c, &mut q, 0.1).unwrap();
            }
        }
        bits(&q)
    };
    let want = run(&Backend::Cpu, false, false);
    let gpu = Backend::Cuda(cuda);
    for (x, y) in [(true, false), (false, true), (true, true)] {
        assert!(run(&gpu, x, y) == want, "staged {x}, {y}");
    }
}

#[test]
fn staged_edge_tests_hold_on_grids_of_every_small_size() {
    // The CPU's buffers decide the stages' tests of the index against the ends in the
    // middle of rows and on interior rows: `staged_update`'s walls, on grids 1 to 9 wide
    // and 1 to 7 high, against the interpreter (which computes each stage where it is
    // read).
    use stencil_tests::harness::{run, Path};
    use stencil_tests::kernels::suite;
    let k = kernel_ir(suite::staged_update::SOURCE, "staged_update");
    let mut r = rng("staged edges");
    for nx in 1..=9usize {
        for ny in 1..=7usize {
            let n = [nx, ny];
            let q = random_field::<f64>(&mut r, &n, 2, -1.0, 1.0);
            let c = random_field::<f64>(&mut r, &n, 2, -1.0, 1.0);
            let mut cpu = poisoned::<f64>(&n);
            let fastest =
                suite::staged_update::launch(&Backend::Cpu, &q, &c, &mut cpu, 0.3).unwrap();
            let mut want = vec![poisoned::<f64>(&n)];
            let red = run(Path::Interpreter, &k, &[&q, &c], &mut want, &[0.3]);
            assert!(
                bits(&cpu) == bits(&want[0]),
                "{n:?}: the CPU against the interpreter"
            );
            assert_eq!(
                fastest.to_bits(),
                red[0].to_bits(),
                "{n:?}: the fastest face"
            );
        }
    }
}

#[test]
fn the_interpreter_computes_a_chain_where_it_is_read() {
    // The interpreter runs the kernel with every staged read inlined, the reads of a
    // stage inside another shifted by both offsets: `chained` against the CPU's buffers.
    use stencil_tests::harness::{run, Path};
    let k = kernel_ir(kernels::chained::SOURCE, "chained");
    let mut r = rng("chain in the interpreter");
    for n in [[1usize, 1], [5, 4], [23, 9]] {
        let q = random_field::<f64>(&mut r, &n, 2, -1.0, 1.0);
        let c = random_field::<f64>(&mut r, &n, 2, -1.0, 1.0);
        let mut cpu = poisoned::<f64>(&n);
        kernels::chained::launch(&Backend::Cpu, &q, &c, &mut cpu, 0.3).unwrap();
        let mut want = vec![poisoned::<f64>(&n)];
        run(Path::Interpreter, &k, &[&q, &c], &mut want, &[0.3]);
        assert!(
            bits(&cpu) == bits(&want[0]),
            "{n:?}: the CPU against the interpreter"
        );
    }
}
