//! The cavity over ranks: `cavity-ranks-check` under `mpirun -np 1, 2, 3`, every rank's
//! slab equal to the whole grid's rows bit for bit after 24 to 40 RK4 steps (f64 and mixed
//! precision), the checks' time steps equal and their sums equal to rounding, and a run
//! that goes unstable stopped on every rank at the whole grid's step and node. Without the
//! `mpi` feature or `mpirun` it says why it skips; one rank without mpirun is checked
//! always.

use std::process::Command;
use std::time::Duration;
use stencil_ranks::{mpirun, ok_lines};

const CHECK: &str = env!("CARGO_BIN_EXE_cavity-ranks-check");

/// How long a run may take before it counts as hung.
const LIMIT: Duration = Duration::from_secs(300);

/// The `ok` lines of a check that must succeed.
fn ok(c: &mut Command) -> usize {
    ok_lines(c, LIMIT).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn ranks_equal_one_rank_bit_for_bit_under_mpirun() {
    let Some(_) = mpirun() else { return };
    for n in [2, 3] {
        let mut c = mpirun().expect("checked above");
        c.args(["-np", &n.to_string(), CHECK]);
        assert_eq!(ok(&mut c), 3 * n, "-np {n}: every rank and case");
    }
}

#[test]
fn one_rank_runs_without_mpirun() {
    assert_eq!(ok(&mut Command::new(CHECK)), 3);
}
