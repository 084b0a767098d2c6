//! HTTP/1.1 for the live view's server, the little it needs: a request's head read within a
//! time limit and parsed by `httparse`, and answers written whole on a connection that is
//! then closed (no keep-alive: the page is three requests and a stream).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use tungstenite::http::StatusCode;

/// The largest request head (request line and headers) read; a larger one gets 431.
const LARGEST_HEAD: usize = 16 * 1024;
/// The most headers a request may have; more get 431.
const MOST_HEADERS: usize = 64;
/// How long a client may take to send its request's head, in all.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// What the server needs of a request's head.
pub(crate) struct Head {
    /// The method, as sent.
    pub method: String,
    /// The request's target, the query included.
    pub path: String,
    /// Every header, as sent.
    pub headers: Vec<(String, Vec<u8>)>,
}

impl Head {
    /// A header's value as text, if it has one.
    pub fn header(&self, name: &str) -> Option<&str> {
        let (_, value) = self
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))?;
        std::str::from_utf8(value).ok()
    }
}

/// Reads and parses a request's head, within [`HEAD_TIMEOUT`] in all: the head and what
/// came after it in the same reads, or the status that refuses it (400 malformed, 431 too
/// large or of too many headers).
pub(crate) fn read_head(
    stream: &mut TcpStream,
) -> std::io::Result<Result<(Head, Vec<u8>), StatusCode>> {
    let until = Instant::now() + HEAD_TIMEOUT;
    let mut bytes = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        // Never more than one byte past the largest head.
        let want = (LARGEST_HEAD + 1 - bytes.len()).min(chunk.len());
        let n = stream.read(&mut chunk[..want])?;
        if n == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        bytes.extend_from_slice(&chunk[..n]);
        match parse_head(&bytes) {
            Ok(Some((head, end))) if end <= LARGEST_HEAD => {
                return Ok(Ok((head, bytes.split_off(end))))
            }
            Ok(Some(_)) => return Ok(Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)),
            Ok(None) if bytes.len() > LARGEST_HEAD => {
                return Ok(Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE))
            }
            Ok(None) => {}
            Err(status) => return Ok(Err(status)),
        }
    }
}

/// The request's method, path and headers and where its head ends, `None` while the head
/// is not yet whole, or the status that refuses it.
fn parse_head(bytes: &[u8]) -> Result<Option<(Head, usize)>, StatusCode> {
    let mut headers = [httparse::EMPTY_HEADER; MOST_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let end = match request.parse(bytes) {
        Ok(httparse::Status::Complete(end)) => end,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
        }
        Err(_) => return Err(StatusCode::BAD_REQUEST),
    };
    let (Some(method), Some(path)) = (request.method, request.path) else {
        return Err(StatusCode::BAD_REQUEST);
    };
    let head = Head {
        method: method.to_string(),
        path: path.to_string(),
        headers: request
            .headers
            .iter()
            .map(|h| (h.name.to_string(), h.value.to_vec()))
            .collect(),
    };
    Ok(Some((head, end)))
}

/// Writes a response's status line and headers (and the blank line after them).
pub(crate) fn write_head(
    stream: &mut TcpStream,
    status: StatusCode,
    headers: &[(&str, &str)],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())
}

/// Answers with one of the assets compiled in (its headers alone for a HEAD request), then
/// closes.
pub(crate) fn send_asset(
    mut stream: TcpStream,
    kind: &str,
    body: &str,
    with_body: bool,
) -> std::io::Result<()> {
    let length = body.len().to_string();
    write_head(
        &mut stream,
        StatusCode::OK,
        &[
            ("Content-Type", kind),
            ("Content-Length", &length),
            ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
            (
                "Content-Security-Policy",
                "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
            ),
            ("X-Frame-Options", "DENY"),
            ("Connection", "close"),
        ],
    )?;
    if with_body {
        stream.write_all(body.as_bytes())?;
    }
    close(stream)
}

/// Answers with an error `status` and a line of text saying why, then closes.
pub(crate) fn refuse(mut stream: TcpStream, status: StatusCode, why: &str) -> std::io::Result<()> {
    let length = why.len().to_string();
    let mut headers = vec![
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Length", length.as_str()),
        ("Connection", "close"),
    ];
    if status == StatusCode::METHOD_NOT_ALLOWED {
        headers.push(("Allow", "GET"));
    }
    write_head(&mut stream, status, &headers)?;
    stream.write_all(why.as_bytes())?;
    close(stream)
}

/// Closes a connection once the client has stopped sending (or after a second), so that
/// it reads the answer rather than a reset connection.
pub(crate) fn close(mut stream: TcpStream) -> std::io::Result<()> {
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let until = Instant::now() + Duration::from_secs(1);
    stream.set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut sink = [0u8; 16 * 1024];
    while Instant::now() < until {
        match stream.read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    Ok(())
}
