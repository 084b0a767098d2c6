//! The Poisson solver over ranks: `poisson-ranks check` under `mpirun -np 1, 2, 3`, every
//! rank's slab equal to the whole grid's rows bit for bit after every cycle (2D and 3D,
//! f64 and mixed precision, red-black (launch by launch and with the fused kernels), SRJ
//! and Jacobi smoothers, V, W and F cycles,
//! Dirichlet, Neumann, penalty and periodic sides, levels gathered onto one rank or not);
//! what several ranks cannot do refused with a typed error on every rank.
//! Without the `mpi` feature or `mpirun` it says why it skips; one rank without mpirun is
//! checked always.

use std::process::Command;
use stencil_ranks::mpirun;
use stencil_tests::ranks::{every_rank_ok, ok, stderr_of_failure};

const CHECK: &str = env!("CARGO_BIN_EXE_poisson-ranks");

#[test]
fn ranks_equal_one_rank_bit_for_bit_under_mpirun() {
    every_rank_ok(CHECK, &["check"], &[1, 2, 3], 9);
}

#[test]
fn one_rank_runs_without_mpirun() {
    assert_eq!(ok(Command::new(CHECK).arg("check")), 9);
}

#[test]
fn too_many_ranks_for_the_grid_stop_every_rank() {
    let Some(mut c) = mpirun() else { return };
    // 5 nodes: 4 intervals cannot give 3 ranks slabs starting at even nodes.
    c.args(["-np", "3", CHECK, "time", "5"]);
    let stderr = stderr_of_failure(&mut c);
    assert!(
        stderr.contains("cannot give each of 3 ranks a slab"),
        "{stderr}"
    );
}
