//! The solvers' check programs over several ranks, for their tests: each rank of a run
//! prints a line ending in `: ok` per case that agrees with one rank.

use std::process::Command;
use std::time::Duration;
use stencil_ranks::{failure_within, mpirun, ok_lines, success_within};

/// How long a run may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(300);

/// The `ok` lines of a run of a check program that must succeed within [`LIMIT`] (a failure
/// panics with its output).
pub fn ok(command: &mut Command) -> usize {
    ok_lines(command, LIMIT).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `program` with `args` under `mpirun -np n` for each `n` of `ranks` and checks that
/// every rank reports each of its `cases` as ok; without `mpirun` (or the `mpi` feature)
/// it prints why it skips.
pub fn every_rank_ok(program: &str, args: &[&str], ranks: &[usize], cases: usize) {
    let Some(_) = mpirun() else { return };
    for &n in ranks {
        let mut c = mpirun().expect("checked above");
        c.args(["-np", &n.to_string(), program]).args(args);
        assert_eq!(ok(&mut c), cases * n, "-np {n}: every rank and case");
    }
}

/// Runs `command`, which must succeed within [`LIMIT`] (a failure panics with its output):
/// its standard output.
pub fn stdout_of_success(command: &mut Command) -> String {
    success_within(command, LIMIT).unwrap_or_else(|e| panic!("{command:?}: {e}"))
}

/// Runs `command`, which must fail within [`LIMIT`]: its standard error.
pub fn stderr_of_failure(command: &mut Command) -> String {
    failure_within(command, LIMIT).unwrap_or_else(|e| panic!("{e}"))
}
