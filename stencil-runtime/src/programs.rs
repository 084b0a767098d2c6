//! What the solvers' programs share around their kernels: how a program ends on an error,
//! and the layout of the vector data they write for ParaView.

use std::fmt::Display;

/// Ends the program if `result` is an error, as the solvers' programs do: `error: ` and
/// the error on standard error, then exit status 1.
pub fn exit_on_error<E: Display>(result: Result<(), E>) {
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The planar vectors `(u[i], v[i])` as the 3-vectors `(u, v, 0)`, one after another: the
/// vector data of a VTK file (as far as the shorter of `u` and `v` goes).
pub fn vtk_vectors(u: &[f64], v: &[f64]) -> Vec<f64> {
    u.iter().zip(v).flat_map(|(&u, &v)| [u, v, 0.0]).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn vtk_vectors_interleave_with_a_zero() {
        assert_eq!(
            super::vtk_vectors(&[1.0, 2.0], &[3.0, 4.0]),
            [1.0, 3.0, 0.0, 2.0, 4.0, 0.0]
        );
    }
}
