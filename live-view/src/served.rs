//! [`ServedRun`]: a program started with `--serve 127.0.0.1:0`, for tests and scripts that
//! watch it: the address it serves, read from its output, and the process, stopped when
//! dropped.

use crate::Error;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// The line a serving program prints, before the address and a slash.
pub const SERVING_AT: &str = "live view at http://";

/// How long a program may take to say where it serves.
const STARTING: std::time::Duration = std::time::Duration::from_secs(120);

/// A running program that serves a live view; killed when dropped.
pub struct ServedRun {
    child: Child,
    address: SocketAddr,
}

impl ServedRun {
    /// Starts `program` with `--serve 127.0.0.1:0` added to its arguments and waits for
    /// the line saying where it serves (at most two minutes). Its standard output is read
    /// (and dropped) from then on, so that it never blocks on a full pipe.
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
        let mut run = ServedRun {
            child,
            address: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        // The output is read on a thread of its own (to the end, so that the program never
        // blocks on a full pipe); the address comes back through a channel.
        let (found, address) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut found = Some(found);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix(SERVING_AT) {
                    if let Some(f) = found.take() {
                        let _ = f.send(rest.trim_end_matches('/').to_string());
                    }
                }
            }
        });
        let text = address.recv_timeout(STARTING).map_err(|_| {
            failed(format!(
                "it did not say where it serves within {} s (or ended first)",
                STARTING.as_secs()
            ))
        })?;
        run.address = text
            .parse()
            .map_err(|_| failed(format!("not an address: {text}")))?;
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
