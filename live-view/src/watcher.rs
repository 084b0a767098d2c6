//! [`Watcher`]: a scripted page, for tests and for measuring what watching costs a run
//! (`cargo run --example watch`). It speaks the page's protocol over a plain WebSocket.

use crate::Error;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use tungstenite::{Message, WebSocket};

/// What a watcher received.
#[derive(Clone, Debug)]
pub enum Received {
    /// The run's description (the hello message, as JSON).
    Hello(serde_json::Value),
    /// A status message's status.
    Status(serde_json::Value),
    /// A frame: its header and its layers' values.
    Frame {
        /// The frame's header (field, width, height, layers, status).
        header: serde_json::Value,
        /// Each layer's values.
        layers: Vec<Vec<f32>>,
    },
}

/// A connection to a live view's stream, as a page makes it.
pub struct Watcher {
    socket: WebSocket<TcpStream>,
}

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Frame(format!("watcher: {what}: {e}"))
}

impl Watcher {
    /// Connects to the live view at `address` and asks for frames that fit `view`.
    pub fn connect(address: SocketAddr, view: [usize; 2]) -> Result<Watcher, Error> {
        let stream = TcpStream::connect_timeout(&address, Duration::from_secs(10))
            .map_err(|e| failed("connecting", e))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .map_err(|e| failed("connecting", e))?;
        let (socket, _) = tungstenite::client(format!("ws://{address}/stream"), stream)
            .map_err(|e| failed("opening the stream", e))?;
        let mut w = Watcher { socket };
        w.send(&serde_json::json!({ "view": view }))?;
        Ok(w)
    }

    /// Sends a command (see [`crate::Command`]).
    pub fn send(&mut self, command: &serde_json::Value) -> Result<(), Error> {
        self.socket
            .send(Message::Text(command.to_string().into()))
            .map_err(|e| failed("sending", e))
    }

    /// The next message; `None` once the run has closed the stream.
    pub fn receive(&mut self) -> Result<Option<Received>, Error> {
        loop {
            let message = match self.socket.read() {
                Ok(m) => m,
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    return Ok(None)
                }
                Err(tungstenite::Error::Io(e))
                    if e.kind() == std::io::ErrorKind::UnexpectedEof
                        || e.kind() == std::io::ErrorKind::ConnectionReset =>
                {
                    return Ok(None)
                }
                Err(tungstenite::Error::Protocol(_)) => return Ok(None),
                Err(e) => return Err(failed("receiving", e)),
            };
            match message {
                Message::Text(text) => {
                    let v: serde_json::Value =
                        serde_json::from_str(&text).map_err(|e| failed("a text message", e))?;
                    match v["kind"].as_str() {
                        Some("hello") => return Ok(Some(Received::Hello(v))),
                        Some("status") => return Ok(Some(Received::Status(v["status"].clone()))),
                        _ => {}
                    }
                }
                Message::Binary(bytes) => return decode(&bytes).map(Some),
                Message::Close(_) => return Ok(None),
                _ => {}
            }
        }
    }

    /// The next frame's header and layers, skipping other messages; an error if the run
    /// closes the stream first.
    pub fn next_frame(&mut self) -> Result<(serde_json::Value, Vec<Vec<f32>>), Error> {
        loop {
            if let Received::Frame { header, layers } = self.next()? {
                return Ok((header, layers));
            }
        }
    }

    /// The next status message's status that `accept` takes (a notice or a state the
    /// page waits for), skipping other messages; an error if the run closes the stream
    /// first.
    pub fn wait_for_status(
        &mut self,
        mut accept: impl FnMut(&serde_json::Value) -> bool,
    ) -> Result<serde_json::Value, Error> {
        loop {
            if let Received::Status(s) = self.next()? {
                if accept(&s) {
                    return Ok(s);
                }
            }
        }
    }

    /// The next status notice (the line a run shows after a command, e.g. that a
    /// checkpoint was written) that `accept` takes, skipping other messages; an error if
    /// the run closes the stream first.
    pub fn wait_for_notice(&mut self, accept: impl Fn(&str) -> bool) -> Result<String, Error> {
        let status = self.wait_for_status(|s| s["notice"].as_str().is_some_and(&accept))?;
        Ok(status["notice"].as_str().unwrap_or_default().to_string())
    }

    /// The next message; an error once the run has closed the stream.
    fn next(&mut self) -> Result<Received, Error> {
        self.receive()?
            .ok_or_else(|| failed("waiting", "the run closed the stream"))
    }
}

/// A frame message's header and layers (see the format in [`crate::protocol`]).
fn decode(bytes: &[u8]) -> Result<Received, Error> {
    let bad = |what: &str| failed("a frame", what);
    let len = bytes
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| bad("shorter than its length"))?;
    let header: serde_json::Value = bytes
        .get(4..4 + len)
        .and_then(|h| serde_json::from_slice(h).ok())
        .ok_or_else(|| bad("no header"))?;
    let n = header["width"].as_u64().unwrap_or(0) as usize
        * header["height"].as_u64().unwrap_or(0) as usize;
    let kinds = header["layers"].as_array().map_or(0, |l| l.len());
    let start = 4 + len.div_ceil(4) * 4;
    if bytes.len() != start + 4 * n * kinds {
        return Err(bad("its length does not match its header"));
    }
    let layers = (0..kinds)
        .map(|k| {
            bytes[start + 4 * n * k..start + 4 * n * (k + 1)]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .collect();
    Ok(Received::Frame { header, layers })
}
