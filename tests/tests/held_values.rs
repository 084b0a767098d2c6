//! Values held on the backend (`Value<T>` parameters, kept reductions, late read-backs):
//! a time step decided without the host equals the one the host decides, on the CPU and,
//! where there is one, on a CUDA device (this binary does not link LLVM: stage it with
//! `../shared/tools/stage-gpu -p stencil-tests --no-default-features --test held_values`).

use stencil_runtime::{Backend, Error, Field, KeptReductions, Real, Value, ValueReader};
use stencil_tests::device::gpu_or_skip;
use stencil_tests::harness::{random_field, rng};
use stencil_tests::kernels::held;

const COURANT: f64 = 0.2;
const LIMIT: f64 = 0.3;
const STEPS: usize = 6;

/// The state and the times after each step, the step decided on the host from the
/// reduction each launch returns.
fn host_decides<T: Real>(backend: &Backend, u0: &Field<T>) -> (Vec<f64>, Vec<f64>) {
    let mut u = u0.to(backend).unwrap();
    let mut out = Field::zeros_on(backend, u0.extent(), 1).unwrap();
    let (mut time, mut times) = (0.0f64, Vec::new());
    for _ in 0..STEPS {
        let top = held::largest::launch(backend, &u).unwrap().as_f64();
        let step = if top > 0.0 {
            (COURANT / top).min(LIMIT)
        } else {
            LIMIT
        };
        time += step;
        times.push(time);
        let dt = Value::new(backend, T::from_f64(step)).unwrap();
        held::relax::launch(backend, &u, &mut out, &dt).unwrap();
        std::mem::swap(&mut u, &mut out);
    }
    (values(&u), times)
}

/// The same steps decided on the backend: the maximum kept there, the clock kernel, the
/// relaxation reading the step held there, the times read back one step late.
fn backend_decides<T: Real>(backend: &Backend, u0: &Field<T>) -> (Vec<f64>, Vec<f64>) {
    let mut u = u0.to(backend).unwrap();
    let mut out = Field::zeros_on(backend, u0.extent(), 1).unwrap();
    let kept = KeptReductions::new();
    let keeping = backend.keeping_reductions(&kept);
    let mut time = Value::new(backend, 0.0f64).unwrap();
    let mut dt = Value::new(backend, T::zero()).unwrap();
    let mut reader = ValueReader::new();
    let mut times = Vec::new();
    for _ in 0..STEPS {
        let returned = held::largest::launch(&keeping, &u).unwrap();
        let top = kept.take(backend, returned).unwrap();
        held::clock::launch(
            backend,
            &top,
            time.field_mut(),
            dt.field_mut(),
            COURANT,
            LIMIT,
        )
        .unwrap();
        held::relax::launch(backend, &u, &mut out, &dt).unwrap();
        std::mem::swap(&mut u, &mut out);
        reader.start(&time).unwrap();
        // Read one step late: the step just queued may still run.
        if reader.pending() > 1 {
            times.push(reader.finish().unwrap().unwrap());
        }
    }
    while let Some(t) = reader.finish().unwrap() {
        times.push(t);
    }
    (values(&u), times)
}

fn values<T: Real>(f: &Field<T>) -> Vec<f64> {
    f.interior().unwrap().iter().map(|v| v.as_f64()).collect()
}

fn start<T: Real>() -> Field<T> {
    random_field::<T>(&mut rng("held"), &[40, 30], 1, -1.0, 1.0)
}

#[test]
fn a_step_decided_on_the_cpu_backend_equals_the_hosts() {
    for_both_precisions(&Backend::Cpu);
}

#[test]
fn a_step_decided_on_the_device_equals_the_hosts() {
    let Some(gpu) = gpu_or_skip() else { return };
    for_both_precisions(&gpu);
}

fn for_both_precisions(backend: &Backend) {
    fn one<T: Real>(backend: &Backend) {
        let u0 = start::<T>();
        let (want, want_times) = host_decides(backend, &u0);
        let (got, got_times) = backend_decides(backend, &u0);
        // The same arithmetic in the same order: identical, times included.
        assert_eq!(got_times, want_times, "{:?}: times", T::PRECISION);
        assert_eq!(got, want, "{:?}: state", T::PRECISION);
        assert_eq!(got_times.len(), STEPS);
        assert!(got_times.windows(2).all(|w| w[1] > w[0]));
    }
    one::<f32>(backend);
    one::<f64>(backend);
}

#[test]
fn a_clock_given_no_finite_maximum_stops_with_nan() {
    let backend = Backend::Cpu;
    let mut time = Value::new(&backend, 1.0f64).unwrap();
    let mut dt = Value::new(&backend, 0.0f64).unwrap();
    let top = Value::new(&backend, f64::NAN).unwrap();
    held::clock::launch(&backend, &top, time.field_mut(), dt.field_mut(), 0.5, 1.0).unwrap();
    assert!(time.get().unwrap().is_nan() && dt.get().unwrap().is_nan());
    // Still water: the limit.
    let mut time = Value::new(&backend, 1.0f64).unwrap();
    let top = Value::new(&backend, 0.0f64).unwrap();
    held::clock::launch(&backend, &top, time.field_mut(), dt.field_mut(), 0.5, 0.25).unwrap();
    assert_eq!((time.get().unwrap(), dt.get().unwrap()), (1.25, 0.25));
}

#[test]
fn values_set_and_read_where_they_live() {
    let mut backends = vec![Backend::Cpu];
    backends.extend(gpu_or_skip());
    for b in &backends {
        let mut v = Value::new(b, 2.5f32).unwrap();
        assert_eq!(v.get().unwrap(), 2.5);
        v.set(-7.0).unwrap();
        assert_eq!(v.get().unwrap(), -7.0);
        let mut reader = ValueReader::new();
        reader.start(&v).unwrap();
        assert_eq!(reader.finish().unwrap(), Some(-7.0));
        assert_eq!(reader.finish().unwrap(), None);
    }
}

#[test]
fn a_value_on_the_wrong_backend_or_of_the_wrong_type_is_a_typed_error() {
    let Some(gpu) = gpu_or_skip() else { return };
    let u = start::<f64>();
    let mut out = Field::zeros(&[40, 30], 1).unwrap();
    // A device value given to a CPU launch, and a host value to a device launch.
    let on_device = Value::new(&gpu, 0.1f64).unwrap();
    let e = held::relax::launch(&Backend::Cpu, &u, &mut out, &on_device).unwrap_err();
    assert!(
        matches!(&e, Error::Residency { field, .. } if field == "dt"),
        "{e}"
    );
    let (ud, mut outd) = (u.to(&gpu).unwrap(), out.to(&gpu).unwrap());
    let on_host = Value::new(&Backend::Cpu, 0.1f64).unwrap();
    let e = held::relax::launch(&gpu, &ud, &mut outd, &on_host).unwrap_err();
    assert!(
        matches!(&e, Error::Residency { field, .. } if field == "dt"),
        "{e}"
    );
    // A kept f64 maximum taken as f32.
    let kept = KeptReductions::new();
    held::largest::launch(&gpu.keeping_reductions(&kept), &ud).unwrap();
    let e = kept.take::<f32>(&gpu, 0.0).unwrap_err();
    assert!(e.to_string().contains("kept reduction"), "{e}");
}
