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
        ("lap5", [o]) => no_reductions(suite::lap5::launch(b, ins[0], o, t(0)))?,
        ("lap9", [o]) => no_reductions(suite::lap9::launch(b, ins[0], o, t(0)))?,
        ("lap7", [o]) => no_reductions(suite::lap7::launch(b, ins[0], o, t(0)))?,
        ("jacobi", [o]) => no_reductions(suite::jacobi::launch(b, ins[0], ins[1], o, t(0), t(1)))?,
        ("upwind", [o]) => {
            no_reductions(suite::upwind::launch(b, ins[0], ins[1], ins[2], o, t(0)))?
        }
        ("reconstruct", [w, e]) => {
            no_reductions(suite::reconstruct::launch(b, ins[0], w, e, t(0)))?
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
        ("intrinsics", [o]) => no_reductions(suite::intrinsics::launch(b, ins[0], ins[1], o))?,
        ("hyperbolic", [o]) => no_reductions(suite::hyperbolic::launch(b, ins[0], ins[1], o))?,
        ("trigonometric", [o]) => {
            no_reductions(suite::trigonometric::launch(b, ins[0], ins[1], o))?
        }
        ("tiled_sine", [o]) => no_reductions(suite::tiled_sine::launch(b, ins[0], o))?,
        ("search", [o]) => no_reductions(suite::search::launch(b, ins[0], o))?,
        ("spread", [o]) => no_reductions(suite::spread::launch(b, ins[0], o))?,
        ("differences", [o]) => no_reductions(suite::differences::launch(b, ins[0], o))?,
        ("generic_lap_2d", [o]) => no_reductions(suite::generic_lap_2d::launch(b, ins[0], o))?,
        ("generic_lap_3d", [o]) => no_reductions(suite::generic_lap_3d::launch(b, ins[0], o))?,
        ("diffuse", [o]) => {
            let d = o.dims();
            let k: Vec<T> = (0..d).map(t).collect();
            no_reductions(suite::diffuse::launch(b, ins[0], o, &k, t(d)))?
        }
        ("binary_logs", [o]) => no_reductions(suite::binary_logs::launch(b, ins[0], ins[1], o))?,
        ("rounding", [d, u, z, n]) => {
            no_reductions(suite::rounding::launch(b, ins[0], d, u, z, n))?
        }
        ("guarded", [a, c, d]) => {
            let m = suite::guarded::launch(b, ins[0], ins[1], a, c, d, t(0))?;
            vec![m.as_f64()]
        }
        ("checker", [o]) => no_reductions(suite::checker::launch(b, ins[0], o, t(0), t(1)))?,
        ("staged_update", [o]) => {
            let m = suite::staged_update::launch(b, ins[0], ins[1], o, t(0))?;
            vec![m.as_f64()]
        }
        ("staged_smooth", [o]) => {
            vec![suite::staged_smooth::launch(b, ins[0], o, t(0))?.as_f64()]
        }
        ("staged_lap3", [o]) => no_reductions(suite::staged_lap3::launch(b, ins[0], o, t(0)))?,
        (other, outs) => panic!(
            "no dispatch for kernel `{other}` with {} outputs: add it here",
            outs.len()
        ),
    })
}

/// The reductions of a kernel that has none, once its launch `done` succeeded.
fn no_reductions(done: Result<(), Error>) -> Result<Vec<f64>, Error> {
    done.map(|()| Vec::new())
}
