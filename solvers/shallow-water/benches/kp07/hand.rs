//! The hand-written CUDA reference of the KP07 step (`benchmarks/cuda/kp07.cu`, built by
//! `benchmarks/cuda/build.sh`): a flux kernel in shared memory writing each cell's rates,
//! the time step reduced on the device, and an update kernel, per RK stage. Here: its
//! fields, one SSP-RK2 step of it, and its state after some steps against the solver's.

use shallow_water::{Setup, ShallowWater};
use stencil_runtime::{Backend, Cuda, Field, Precision, Real};
use stencil_tests::bench::hand::{Arg, Hand};
use stencil_tests::bench::R;

/// Values one hand-written RK2 step moves per cell: per stage the flux kernel reads `w, q,
/// p` and the bed and writes three rates (7), the update reads `w, q, p`, the rates and
/// the bed and writes `w, q, p` (10), the second also reads the state it averages with (3).
pub(crate) const VALUES_PER_CELL: f64 = 2.0 * (7.0 + 10.0) + 3.0;

/// The tiles (cells along x and y) kp07.cu has a rates kernel for in precision `T`; the
/// update runs in blocks of the same shape.
pub(crate) fn tiles<T: Real>() -> &'static [[u32; 2]] {
    match T::PRECISION {
        Precision::F32 => &[[32, 4], [32, 8], [32, 16], [64, 4], [64, 8]],
        Precision::F64 => &[[32, 4], [32, 8], [64, 4]],
    }
}

/// The hand-written scheme's fields on a device: the state, the first stage's, the rates,
/// the bed's corners, the blocks' largest speeds and the time step.
pub(crate) struct HandKp07<'h, T: Real> {
    hand: &'h Hand,
    cuda: Cuda,
    n: [usize; 2],
    tile: [u32; 2],
    /// The entry points of the rates kernel of this tile, the time step and the update.
    names: [String; 3],
    now: [Field<T>; 3],
    stage: [Field<T>; 3],
    rates: [Field<T>; 3],
    bed: Field<T>,
    speeds: Field<T>,
    dt: Field<T>,
    /// g, g n^2, theta, eps, 1 / dx, 1 / dy, the Courant number.
    scalars: [f64; 7],
}

impl<'h, T: Real> HandKp07<'h, T> {
    /// The scheme for `setup` (reflecting walls on every side, as kp07.cu assumes) with its
    /// initial state, from kp07.cu's kernels in `hand`, in tiles of `tile` cells.
    pub(crate) fn new(hand: &'h Hand, cuda: &Cuda, setup: &Setup, tile: [u32; 2]) -> R<Self> {
        let backend = Backend::Cuda(cuda.clone());
        let grid = *setup.terrain.grid();
        let n = [grid.nx, grid.ny];
        // The solver's own initial state (surface, discharges), as it stores it.
        let flow = ShallowWater::<T>::new(&backend, setup)?;
        let state = flow.state()?;
        let cell = |values: &[f64]| {
            Field::<T>::from_fn(&n, 2, |[i, j, _]| {
                let inside = (0..n[0] as isize).contains(&i) && (0..n[1] as isize).contains(&j);
                if inside {
                    T::from_f64(values[j as usize * n[0] + i as usize])
                } else {
                    T::zero()
                }
            })
            .to(&backend)
        };
        let now = [cell(&state[0])?, cell(&state[1])?, cell(&state[2])?];
        let bed = Field::<T>::from_fn(&n, 2, |[i, j, _]| {
            let corner = (0..=n[0] as isize).contains(&i) && (0..=n[1] as isize).contains(&j);
            if corner {
                T::from_f64(setup.terrain.corner(i as usize, j as usize))
            } else {
                T::zero()
            }
        })
        .to(&backend)?;
        // kp07.cu indexes in 32 bits.
        let span = bed.strides()[0] * (n[1] + 4);
        if span >= i32::MAX as usize {
            return Err(format!("{} x {} cells pass kp07.cu's 32-bit indices", n[0], n[1]).into());
        }
        let zeros = || Field::<T>::zeros_on(&backend, &n, 2);
        let blocks = Self::grid(n, tile).iter().product::<u32>() as usize;
        let ph = &setup.physics;
        let p = match T::PRECISION {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        };
        Ok(HandKp07 {
            hand,
            cuda: cuda.clone(),
            n,
            tile,
            names: [
                format!("kp07_hand_rates_{p}_{}x{}", tile[0], tile[1]),
                format!("kp07_hand_dt_{p}"),
                format!("kp07_hand_update_{p}"),
            ],
            now,
            stage: [zeros()?, zeros()?, zeros()?],
            rates: [zeros()?, zeros()?, zeros()?],
            bed,
            speeds: Field::<T>::zeros_on(&backend, &[blocks], 0)?,
            dt: Field::<T>::zeros_on(&backend, &[1], 0)?,
            scalars: [
                ph.gravity,
                ph.gravity * ph.manning * ph.manning,
                ph.theta,
                ph.dry_depth.powi(4),
                1.0 / grid.dx,
                1.0 / grid.dy,
                ph.courant,
            ],
        })
    }

    fn grid(n: [usize; 2], tile: [u32; 2]) -> [u32; 3] {
        [
            n[0].div_ceil(tile[0] as usize) as u32,
            n[1].div_ceil(tile[1] as usize) as u32,
            1,
        ]
    }

    /// One SSP-RK2 step of at most `limit` seconds (the Courant number's step where it is
    /// shorter), queued on the device's stream: five launches, no read-back.
    pub(crate) fn step(&mut self, limit: f64) -> R<()> {
        let grid = Self::grid(self.n, self.tile);
        let block = [self.tile[0], self.tile[1], 1];
        let [g, g_n2, theta, eps, dx_inv, dy_inv, courant] = self.scalars;
        let real = |v: f64| Arg::Real(v, T::PRECISION);
        let ptr = |f: &Field<T>| Arg::Ptr(f.device_args().map_or(0, |(_, p, _)| p));
        let (nx, ny) = (Arg::Int(self.n[0] as i32), Arg::Int(self.n[1] as i32));
        let sy = Arg::Int(self.bed.strides()[0] as i32);
        let blocks = grid[0] * grid[1];
        let [rates, dt, update] = &self.names;
        for (keep, from, to) in [(0.0, &self.now, &self.stage), (0.5, &self.stage, &self.now)] {
            let first = keep == 0.0;
            let speeds = if first {
                ptr(&self.speeds)
            } else {
                Arg::Ptr(0)
            };
            let mut args: Vec<Arg> = from.iter().map(ptr).collect();
            args.push(ptr(&self.bed));
            args.extend(self.rates.iter().map(ptr));
            args.extend([speeds, nx, ny, sy, real(g), real(theta), real(eps)]);
            args.extend([real(dx_inv), real(dy_inv)]);
            self.hand.launch(&self.cuda, rates, grid, block, &args)?;
            if first {
                let args = [
                    ptr(&self.speeds),
                    Arg::Int(blocks as i32),
                    real(courant),
                    real(limit),
                    ptr(&self.dt),
                ];
                self.hand
                    .launch(&self.cuda, dt, [1, 1, 1], [1024, 1, 1], &args)?;
            }
            let mut args: Vec<Arg> = from.iter().map(ptr).collect();
            args.extend(self.rates.iter().map(ptr));
            args.push(ptr(&self.bed));
            args.extend(to.iter().map(ptr));
            args.extend([ptr(&self.dt), real(keep), real(g_n2), real(eps), nx, ny, sy]);
            self.hand.launch(&self.cuda, update, grid, block, &args)?;
        }
        Ok(())
    }

    /// The last step's time step.
    pub(crate) fn last_dt(&self) -> R<f64> {
        Ok(self.dt.interior()?[0].as_f64())
    }

    /// The state: surface, x and y discharge, per cell row by row.
    pub(crate) fn state(&self) -> R<[Vec<f64>; 3]> {
        let f = |k: usize| -> R<Vec<f64>> {
            Ok(self.now[k].interior()?.iter().map(|v| v.as_f64()).collect())
        };
        Ok([f(0)?, f(1)?, f(2)?])
    }
}

/// How far the hand-written scheme in tiles of `tile` is from the solver on `setup` after `steps` steps of
/// `dt` seconds each (shorter than the Courant number's, so both take exactly it): the
/// largest difference of the surface, x and y discharge, each over the field's largest
/// magnitude; and the first step's Courant time step of each (the hand-written one, the
/// solver's).
pub(crate) fn agreement<T: Real>(
    hand: &Hand,
    cuda: &Cuda,
    setup: &Setup,
    tile: [u32; 2],
    steps: usize,
) -> R<([f64; 3], (f64, f64))> {
    let backend = Backend::Cuda(cuda.clone());
    let mut flow = ShallowWater::<T>::new(&backend, setup)?;
    let mut scheme = HandKp07::<T>::new(hand, cuda, setup, tile)?;
    // The Courant step of the initial state, each scheme's own.
    let mut probe = ShallowWater::<T>::new(&backend, setup)?;
    let dt_solver = probe.step(f64::INFINITY)?;
    let mut probe_hand = HandKp07::<T>::new(hand, cuda, setup, tile)?;
    probe_hand.step(f64::INFINITY)?;
    let dt_hand = probe_hand.last_dt()?;
    let dt = 0.5 * dt_solver;
    for _ in 0..steps {
        flow.step(dt)?;
        scheme.step(dt)?;
    }
    let (a, b) = (flow.state()?, scheme.state()?);
    let mut worst = [0.0; 3];
    for k in 0..3 {
        let scale = a[k].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = a[k]
            .iter()
            .zip(&b[k])
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        // NaN anywhere counts as the largest difference.
        worst[k] = if b[k].iter().any(|v| !v.is_finite()) {
            f64::INFINITY
        } else {
            diff / scale.max(f64::MIN_POSITIVE)
        };
    }
    Ok((worst, (dt_hand, dt_solver)))
}
