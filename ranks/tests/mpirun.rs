//! The distributed check (`src/bin/ranks-check.rs`, a 2D and a 3D grid) under `mpirun -np
//! 1, 2, 3` (3: an uneven split, oversubscribing a 2-core machine): every rank's blocks
//! equal one rank's bit for bit. A rank that fails stops them all, with its error, and never hangs. Built
//! without the `mpi` feature, or without `mpirun`, the MPI tests say why they skip; the
//! single-rank program and the error for mpirun without MPI are checked always.

use std::process::Command;
use std::time::Duration;
use stencil_ranks::{failure_within, mpirun, success_within};

const CHECK: &str = env!("CARGO_BIN_EXE_ranks-check");

/// The standard output of the check under `mpirun -np {np}`, which must succeed; `None`
/// without `mpirun`.
fn success_under_mpirun(np: usize) -> Option<String> {
    let mut c = mpirun()?;
    c.args(["-np", &np.to_string(), CHECK]);
    let stdout = success_within(&mut c, Duration::from_secs(120));
    Some(stdout.unwrap_or_else(|e| panic!("-np {np}: {e}")))
}

/// The standard error of the check with `args` under `mpirun -np {np}`, which must fail;
/// `None` without `mpirun`.
fn failure_under_mpirun(np: usize, args: &[&str]) -> Option<String> {
    let mut c = mpirun()?;
    c.args(["-np", &np.to_string(), CHECK]).args(args);
    Some(failure_within(&mut c, Duration::from_secs(120)).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn every_rank_equals_one_rank_under_mpirun() {
    for n in [1, 2, 3] {
        let Some(stdout) = success_under_mpirun(n) else {
            return;
        };
        // A 2D and a 3D case per rank.
        let ok = stdout.lines().filter(|l| l.ends_with(": ok")).count();
        assert_eq!(ok, 2 * n, "-np {n}: every rank reports:\n{stdout}");
        // Values gathered from their owners, NaN and minus zero included.
        let gathered = stdout
            .matches("gathered from their owners, NaN and -0 kept")
            .count();
        assert_eq!(gathered, n, "-np {n}:\n{stdout}");
        if n > 1 {
            assert!(
                !stdout.contains(" 0 ghosts"),
                "ranks exchange ghosts:\n{stdout}"
            );
        }
    }
}

#[test]
fn a_failing_rank_stops_every_rank_with_its_error() {
    let Some(stderr) = failure_under_mpirun(3, &["--fail-on-rank", "1"]) else {
        return;
    };
    assert!(
        stderr.contains("error on rank 1 of 3: bad input on rank 1"),
        "{stderr}"
    );
}

#[test]
fn a_short_message_is_an_error_that_names_it() {
    let Some(stderr) = failure_under_mpirun(2, &["--short-message"]) else {
        return;
    };
    assert!(
        stderr.contains("error on rank 0 of 2: rank 1 sent 3 values where 4 were expected"),
        "{stderr}"
    );
}

#[test]
fn one_rank_runs_without_mpirun() {
    let stdout = success_within(&mut Command::new(CHECK), Duration::from_secs(120));
    let stdout = stdout.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        stdout.contains("rank 0 of 1, 2D: 56 blocks, 0 ghosts"),
        "{stdout}"
    );
    assert!(
        stdout.contains("rank 0 of 1, 3D: 60 blocks, 0 ghosts"),
        "{stdout}"
    );
}

#[test]
fn several_ranks_without_mpi_is_a_clear_error() {
    if cfg!(feature = "mpi") {
        println!("SKIPPED: built with MPI (this checks the build without it)");
        return;
    }
    let mut c = Command::new(CHECK);
    c.env("OMPI_COMM_WORLD_SIZE", "2");
    let stderr = failure_within(&mut c, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    assert!(stderr.contains("built without MPI"), "{stderr}");
}
