//! Runs any kernel of the suite through its typed `launch`, by name, so that one test can
//! loop over the whole suite on any backend.

use crate::kernels::suite;
use stencil_runtime::{Backend, Error, Field, Real};

/// Runs suite kernel `name` on `backend`: inputs and outputs in declaration order, scalars
/// as f64 (converted to the parameter's type). Returns the reductions as f64.
pub fn launch<T: Real>(
    name: &str,
    backend: &Backend,
    ins: &[&Field<T>],
    outs: &mut [Field<T>],
    s: &[f64],
) -> Result<Vec<f64>, Error> {
    let t = |i: usize| T::from_f64(s[i]);
    let b = backend;
    Ok(match (name, outs) {
        ("lap5", [o]) => {
            suite::lap5::launch(b, ins[0], o, t(0))?;
            vec![]
        }
        ("lap9", [o]) => {
            suite::lap9::launch(b, ins[0], o, t(0))?;
            vec![]
        }
        ("lap7", [o]) => {
            suite::lap7::launch(b, ins[0], o, t(0))?;
            vec![]
        }
        ("jacobi", [o]) => {
            suite::jacobi::launch(b, ins[0], ins[1], o, t(0), t(1))?;
            vec![]
        }
        ("upwind", [o]) => {
            suite::upwind::launch(b, ins[0], ins[1], ins[2], o, t(0))?;
            vec![]
        }
        ("reconstruct", [w, e]) => {
            suite::reconstruct::launch(b, ins[0], w, e, t(0))?;
            vec![]
        }
        ("cfl", []) => {
            let m = suite::cfl::launch(b, ins[0], ins[1], ins[2], t(0), t(1))?;
            vec![m.as_f64()]
        }
        ("maxabs", []) => vec![suite::maxabs::launch(b, ins[0])?.as_f64()],
        ("mass", []) => {
            let (total, lowest) = suite::mass::launch(b, ins[0], t(0))?;
            vec![total.as_f64(), lowest.as_f64()]
        }
        ("intrinsics", [o]) => {
            suite::intrinsics::launch(b, ins[0], ins[1], o)?;
            vec![]
        }
        ("hyperbolic", [o]) => {
            suite::hyperbolic::launch(b, ins[0], ins[1], o)?;
            vec![]
        }
        ("trigonometric", [o]) => {
            suite::trigonometric::launch(b, ins[0], ins[1], o)?;
            vec![]
        }
        ("search", [o]) => {
            suite::search::launch(b, ins[0], o)?;
            vec![]
        }
        ("spread", [o]) => {
            suite::spread::launch(b, ins[0], o)?;
            vec![]
        }
        ("differences", [o]) => {
            suite::differences::launch(b, ins[0], o)?;
            vec![]
        }
        ("generic_lap_2d", [o]) => {
            suite::generic_lap_2d::launch(b, ins[0], o)?;
            vec![]
        }
        ("generic_lap_3d", [o]) => {
            suite::generic_lap_3d::launch(b, ins[0], o)?;
            vec![]
        }
        ("diffuse", [o]) => {
            let d = o.dims();
            let k: Vec<T> = (0..d).map(t).collect();
            suite::diffuse::launch(b, ins[0], o, &k, t(d))?;
            vec![]
        }
        ("binary_logs", [o]) => {
            suite::binary_logs::launch(b, ins[0], ins[1], o)?;
            vec![]
        }
        ("rounding", [d, u, z, n]) => {
            suite::rounding::launch(b, ins[0], d, u, z, n)?;
            vec![]
        }
        ("guarded", [a, c, d]) => {
            let m = suite::guarded::launch(b, ins[0], ins[1], a, c, d, t(0))?;
            vec![m.as_f64()]
        }
        ("checker", [o]) => {
            suite::checker::launch(b, ins[0], o, t(0), t(1))?;
            vec![]
        }
        (other, outs) => panic!(
            "no dispatch for kernel `{other}` with {} outputs: add it here",
            outs.len()
        ),
    })
}
