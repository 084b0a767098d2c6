//! Starting a program over several ranks, for tests and tools.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// Runs `command` to its end and returns its output, killing it and returning an error
/// after `limit`: a run over ranks that hangs is a failure, not a stuck test.
pub fn output_within(command: &mut Command, limit: Duration) -> Result<Output, String> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{command:?} did not start: {e}"))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{command:?} did not end within {limit:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("{command:?}: {e}")),
        }
    }
    child
        .wait_with_output()
        .map_err(|e| format!("{command:?}: {e}"))
}
