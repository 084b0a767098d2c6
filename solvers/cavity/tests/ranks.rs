//! The cavity over ranks: `cavity-ranks-check` under `mpirun -np 1, 2, 3`, every rank's
//! slab equal to the whole grid's rows bit for bit after 24 to 40 RK4 steps (f64 and mixed
//! precision), the checks' time steps equal and their sums equal to rounding, and a run
//! that goes unstable stopped on every rank at the whole grid's step and node. Without the
//! `mpi` feature or `mpirun` it says why it skips; one rank without mpirun is checked
//! always.

use std::process::Command;
use stencil_tests::ranks::{every_rank_ok, ok};

const CHECK: &str = env!("CARGO_BIN_EXE_cavity-ranks-check");

#[test]
fn ranks_equal_one_rank_bit_for_bit_under_mpirun() {
    every_rank_ok(CHECK, &[], &[2, 3], 3);
}

#[test]
fn one_rank_runs_without_mpirun() {
    assert_eq!(ok(&mut Command::new(CHECK)), 3);
}
