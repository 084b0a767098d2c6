//! [`ServedRun`]: a program started with `--serve 127.0.0.1:0`, for tests and scripts that
//! watch it: the address it serves, read from its output, and the process, stopped when
//! dropped.

use crate::Error;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// The line a serving program prints, before the address and a slash.
pub const SERVING_AT: &str = "live view at http://";

/// A running program that serves a live view; killed when dropped.
pub struct ServedRun {
    child: Child,
    address: SocketAddr,
}

impl ServedRun {
    /// Starts `program` with `--serve 127.0.0.1:0` added to its arguments and waits for
    /// the line saying where it serves. Its standard output is read (and dropped) from
    /// then on, so that it never blocks on a full pipe.
    pub fn start(mut program: Command) -> Result<ServedRun, Error> {
        let failed = |e: String| Error::Frame(format!("starting a served run: {e}"));
        let mut child = program
            .args(["--serve", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| failed(e.to_string()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| failed("no output".into()))?;
        let mut lines = BufReader::new(stdout).lines();
        let mut run = ServedRun {
            child,
            address: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        run.address = loop {
            let Some(Ok(line)) = lines.next() else {
                return Err(failed("it ended before saying where it serves".into()));
            };
            if let Some(rest) = line.strip_prefix(SERVING_AT) {
                break rest
                    .trim_end_matches('/')
                    .parse()
                    .map_err(|_| failed(format!("not an address: {rest}")))?;
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        Ok(run)
    }

    /// The address it serves.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Waits for it to end by itself; whether it succeeded.
    pub fn wait(&mut self) -> Result<bool, Error> {
        self.child
            .wait()
            .map(|s| s.success())
            .map_err(|e| Error::Frame(format!("waiting for a served run: {e}")))
    }
}

impl Drop for ServedRun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
