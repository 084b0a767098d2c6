//! Starting a program over several ranks, for tests and tools.

use crate::Ranks;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use stencil_runtime::Backend;

/// What a check or timing program run under `mpirun` starts with: its ranks (a failure
/// to start them is printed and ends the process with status 2) and its backend: the
/// device of its local rank when `--device` is among its arguments (a failure there stops
/// every rank), else the CPU.
pub fn check_program() -> (Arc<Ranks>, Backend) {
    #[allow(clippy::arc_with_non_send_sync)]
    let ranks = Arc::new(Ranks::from_env().unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    }));
    let backend = if std::env::args().any(|a| a == "--device") {
        Backend::cuda(ranks.local_rank()).unwrap_or_else(|e| ranks.abort(&e))
    } else {
        Backend::Cpu
    };
    (ranks, backend)
}

/// Runs a check program to its end within `limit` and counts the lines of its output
/// that end in `: ok`; its output, in an error, when it fails or does not end.
pub fn ok_lines(command: &mut Command, limit: Duration) -> Result<usize, String> {
    let stdout = success_within(command, limit)?;
    Ok(stdout.lines().filter(|l| l.ends_with(": ok")).count())
}

/// Runs `command` to its end within `limit`: its standard output; its output, in an error,
/// when it fails or does not end.
pub fn success_within(command: &mut Command, limit: Duration) -> Result<String, String> {
    let out = output_within(command, limit)?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(stdout)
}

/// Runs `command`, which is to fail, to its end within `limit`: its standard error; an
/// error when it succeeds (with its standard output) or does not end.
pub fn failure_within(command: &mut Command, limit: Duration) -> Result<String, String> {
    let out = output_within(command, limit)?;
    if out.status.success() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        return Err(format!("{command:?} succeeded: {stdout}"));
    }
    Ok(String::from_utf8_lossy(&out.stderr).into_owned())
}

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
