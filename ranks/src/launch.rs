//! Starting a program over several ranks, for tests and tools.

use std::process::Command;

/// `mpirun` with the options a CI container needs (running as root, more ranks than
/// cores), or `None` after printing why runs over several ranks are skipped: this crate was
/// built without the `mpi` feature, or there is no `mpirun`.
pub fn mpirun() -> Option<Command> {
    if !cfg!(feature = "mpi") {
        println!("SKIPPED: built without the `mpi` feature (add `--features mpi`)");
        return None;
    }
    let found = Command::new("mpirun").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        println!("SKIPPED: no mpirun (Debian: apt install openmpi-bin libopenmpi-dev)");
        return None;
    }
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe"]);
    Some(c)
}
