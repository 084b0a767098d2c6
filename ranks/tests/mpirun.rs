//! The distributed check (`src/bin/ranks-check.rs`, a 2D and a 3D grid) under `mpirun -np
//! 1, 2, 3` (3: an uneven split, oversubscribing a 2-core machine): every rank's blocks
//! equal one rank's bit for bit. A rank that fails stops them all, with its error, and never hangs. Built
//! without the `mpi` feature, or without `mpirun`, the MPI tests say why they skip; the
//! single-rank program and the error for mpirun without MPI are checked always.

use std::process::Command;
use std::time::Duration;
use stencil_ranks::{mpirun, output_within};

const CHECK: &str = env!("CARGO_BIN_EXE_ranks-check");

/// Runs `c` (for at most `limit`), which must succeed: its standard output. `what` names
/// the run in a failure.
fn stdout_of_success(c: &mut Command, limit: Duration, what: &str) -> String {
    let out = output_within(c, limit).expect("it ends");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs `c` (for at most `limit`), which must fail: its standard error.
fn stderr_of_failure(c: &mut Command, limit: Duration) -> String {
    let out = output_within(c, limit).expect("it ends");
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The standard output of the check under `mpirun -np {np}`, which must succeed; `None`
/// without `mpirun`.
fn success_under_mpirun(np: usize) -> Option<String> {
    let mut c = mpirun()?;
    c.args(["-np", &np.to_string(), CHECK]);
    let what = format!("-np {np}: ");
    Some(stdout_of_success(&mut c, Duration::from_secs(120), &what))
}

/// The standard error of the check with `args` under `mpirun -np {np}`, which must fail;
/// `None` without `mpirun`.
fn failure_under_mpirun(np: usize, args: &[&str]) -> Option<String> {
    let mut c = mpirun()?;
    c.args(["-np", &np.to_string(), CHECK]).args(args);
    Some(stderr_of_failure(&mut c, Duration::from_secs(120)))
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
    let stdout = stdout_of_success(&mut Command::new(CHECK), Duration::from_secs(120), "");
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
    let stderr = stderr_of_failure(&mut c, Duration::from_secs(60));
    assert!(stderr.contains("built without MPI"), "{stderr}");
}
