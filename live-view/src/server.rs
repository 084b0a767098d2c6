//! The HTTP and WebSocket server: the page and its two assets, compiled into the binary,
//! and the frame stream at `/stream`. Nothing else is served (every other path is 404,
//! every other method 405), nothing is read from the file system, request heads that are
//! too large get 431 and malformed ones 400, and a stream from another origin is refused
//! (403), so that no other web site the user visits can drive the run; requests that name
//! their host other than by an IP address or `localhost` are refused (421), so that a web
//! site whose name resolves to this machine gets nothing either, and the page may not be
//! framed by another site.
//!
//! One thread accepts connections; each connection has a thread of its own, answers one
//! request and closes, or becomes a page's stream (`watch`). Request heads are parsed by
//! `httparse` and the WebSocket is `tungstenite`'s. A client has [`crate::http::HEAD_TIMEOUT`] to send
//! its request's head and a page [`SEND_TIMEOUT`] to take each message, however slowly it
//! reads, so that no client holds a connection's place (at most [`MOST_CONNECTIONS`]) or
//! a page's (at most [`MOST_VIEWERS`]) for longer.

use crate::http::{read_head, refuse, send_asset, write_head, Head};
use crate::protocol::Command;
use crate::shared::{Shared, UNSEEN};
use crate::Error;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tungstenite::http::{self, StatusCode};
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

/// A page's stream: a WebSocket over a connection whose writes end at a deadline.
type PageStream = WebSocket<Deadlined>;

const PAGE: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/view.js");
const STYLE: &str = include_str!("../assets/view.css");

/// The most pages streaming at once; more get 503.
const MOST_VIEWERS: usize = 8;
/// The largest message a page may send (commands are a few dozen bytes).
const LARGEST_COMMAND: usize = 4096;
/// How long a page may take to accept one message before it is dropped.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);
/// The most connections open at once (pages, assets and streams); more are closed
/// unanswered.
const MOST_CONNECTIONS: usize = 64;
/// How often the accepting thread and the streams look for work (a connection, a frame,
/// a status, the server's stop) when there is none.
const POLL: Duration = Duration::from_millis(20);

/// A running server; dropping it stops it.
pub(crate) struct Server {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Binds `address` and serves on threads of its own.
    pub fn start(address: SocketAddr, shared: Arc<Shared>) -> Result<Server, Error> {
        let bind = |e: std::io::Error| Error::Bind { address, source: e };
        let listener = TcpListener::bind(address).map_err(bind)?;
        listener.set_nonblocking(true).map_err(bind)?;
        let bound = listener.local_addr().map_err(bind)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("live-view".into())
            .spawn(move || accept(&listener, &shared, &stopped))
            .map_err(bind)?;
        Ok(Server {
            address: bound,
            stop,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Streams see the stop within `POLL` and close; nothing waits for them.
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Accepts connections until `stop`, each served on a thread of its own.
fn accept(listener: &TcpListener, shared: &Arc<Shared>, stop: &Arc<AtomicBool>) {
    let open = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::SeqCst) {
        let Ok((stream, _)) = listener.accept() else {
            // None waiting (or none to be had now, e.g. out of file descriptors).
            std::thread::sleep(POLL);
            continue;
        };
        let Some(place) = Place::take(&open, MOST_CONNECTIONS) else {
            continue;
        };
        let (shared, stop) = (shared.clone(), stop.clone());
        let _ = std::thread::Builder::new()
            .name("live-view connection".into())
            .spawn(move || {
                let _place = place;
                let _ = serve(stream, &shared, &stop);
            });
    }
}

/// One of a limited number of places (connections, pages), given back when dropped.
struct Place(Arc<AtomicUsize>);

impl Place {
    /// Takes one of `most` places counted by `taken`; `None` when all are taken.
    fn take(taken: &Arc<AtomicUsize>, most: usize) -> Option<Place> {
        taken
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < most).then_some(n + 1)
            })
            .ok()
            .map(|_| Place(taken.clone()))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers one connection: reads its request head and serves it.
fn serve(mut stream: TcpStream, shared: &Arc<Shared>, stop: &AtomicBool) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(SEND_TIMEOUT))?;
    let (head, rest) = match read_head(&mut stream)? {
        Ok(read) => read,
        Err(status) if status == StatusCode::BAD_REQUEST => {
            return refuse(stream, status, "a malformed request\n")
        }
        Err(status) => return refuse(stream, status, "the request's head is too large\n"),
    };
    if !host_allowed(head.header("host")) {
        return refuse(
            stream,
            StatusCode::MISDIRECTED_REQUEST,
            "the live view answers to IP addresses and localhost only\n",
        );
    }
    // The query, if any, names nothing here.
    let path = head.path.split('?').next().unwrap_or("");
    let asset = match path {
        "/" => Some(("text/html; charset=utf-8", PAGE)),
        "/view.js" => Some(("text/javascript; charset=utf-8", SCRIPT)),
        "/view.css" => Some(("text/css; charset=utf-8", STYLE)),
        "/stream" => None,
        _ => {
            return refuse(
                stream,
                StatusCode::NOT_FOUND,
                "not found: the live view serves /, its assets and /stream\n",
            )
        }
    };
    match (head.method.as_str(), asset) {
        ("GET", Some((kind, body))) => send_asset(stream, kind, body, true),
        ("HEAD", Some((kind, body))) => send_asset(stream, kind, body, false),
        ("GET", None) if !stop.load(Ordering::SeqCst) => {
            open_stream(stream, &head, rest, shared, stop)
        }
        ("GET", None) => Ok(()),
        _ => refuse(
            stream,
            StatusCode::METHOD_NOT_ALLOWED,
            "the live view answers GET only\n",
        ),
    }
}

/// The host a request names, without its port (`[::1]` keeps its brackets).
fn host_name(host: &str) -> Option<&str> {
    if host.starts_with('[') {
        return host.find(']').map(|end| &host[..=end]);
    }
    Some(host.rsplit_once(':').map_or(host, |(name, _)| name))
}

/// Whether a request's `Host` is an IP address or `localhost`: a web site whose name was
/// pointed at this machine ("DNS rebinding") gets nothing, whatever address the server is
/// bound to.
fn host_allowed(host: Option<&str>) -> bool {
    host.and_then(host_name).is_some_and(|h| {
        h == "localhost"
            || h.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok()
    })
}

/// Whether the request comes from the page itself: its `Origin` names the host it asked.
fn same_origin(head: &Head) -> bool {
    match (head.header("host"), head.header("origin")) {
        (Some(host), Some(origin)) => {
            origin.strip_prefix("http://").is_some_and(|o| o == host)
                || origin.strip_prefix("https://").is_some_and(|o| o == host)
        }
        // Not a browser (no Origin): a script on this machine.
        (Some(_), None) => true,
        _ => false,
    }
}

/// Turns the connection into a page's stream: checks the upgrade, the origin and that a
/// place is free, answers the handshake and streams until the page leaves.
fn open_stream(
    mut stream: TcpStream,
    head: &Head,
    rest: Vec<u8>,
    shared: &Arc<Shared>,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let mut request = http::Request::builder().method("GET").uri(&head.path);
    for (name, value) in &head.headers {
        request = request.header(name.as_str(), value.as_slice());
    }
    let handshake = request
        .body(())
        .ok()
        .and_then(|r| tungstenite::handshake::server::create_response(&r).ok());
    let Some(answer) = handshake else {
        return refuse(
            stream,
            StatusCode::BAD_REQUEST,
            "/stream is a WebSocket: a page opens it with an upgrade\n",
        );
    };
    if !same_origin(head) {
        return refuse(
            stream,
            StatusCode::FORBIDDEN,
            "the stream is for the live view's own page\n",
        );
    }
    // A page's place, taken before the upgrade and given back when the page leaves (or
    // the upgrade fails).
    let Some(_viewer) = Place::take(&shared.viewers, MOST_VIEWERS) else {
        return refuse(
            stream,
            StatusCode::SERVICE_UNAVAILABLE,
            "too many pages are watching\n",
        );
    };
    let headers: Vec<(&str, &str)> = answer
        .headers()
        .iter()
        .filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?)))
        .collect();
    write_head(&mut stream, answer.status(), &headers)?;
    stream.flush()?;
    stream.set_read_timeout(Some(POLL))?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(LARGEST_COMMAND))
        .max_frame_size(Some(LARGEST_COMMAND));
    let stream = Deadlined {
        stream,
        deadline: Instant::now(),
    };
    let socket = WebSocket::from_partially_read(stream, rest, Role::Server, Some(config));
    watch(socket, shared, stop);
    Ok(())
}

/// Streams the hello, the status and the frames to one page and applies its commands,
/// until it leaves, stops accepting messages or the server stops.
fn watch(mut socket: PageStream, shared: &Shared, stop: &AtomicBool) {
    shared.connected();
    let (mut frames_seen, mut status_seen) = (UNSEEN, UNSEEN);
    if !send(&mut socket, Message::Text(shared.hello.clone().into())) {
        return;
    }
    while !stop.load(Ordering::SeqCst) {
        if let Some(status) = shared.status.newer(&mut status_seen) {
            if !send(&mut socket, Message::Text(status.into())) {
                return;
            }
        }
        if let Some(Some(frame)) = shared.frames.newer(&mut frames_seen) {
            if !send(&mut socket, Message::Binary(frame)) {
                return;
            }
        }
        // Waits at most `POLL` (the socket's read timeout) for the page's next message;
        // what it writes (a pong, the reply to a close) has `SEND_TIMEOUT`.
        socket.get_mut().deadline = Instant::now() + SEND_TIMEOUT;
        match socket.read() {
            Ok(Message::Text(text)) => {
                // A command that does not parse is ignored, as a browser would.
                if let Ok(command) = serde_json::from_str::<Command>(&text) {
                    shared.apply(&command);
                }
            }
            Ok(Message::Close(_)) => {
                // Sends the reply tungstenite has queued.
                let _ = socket.flush();
                return;
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// Sends `message`, giving up on a page that has not taken it within [`SEND_TIMEOUT`];
/// whether it was sent.
fn send(socket: &mut PageStream, message: Message) -> bool {
    socket.get_mut().deadline = Instant::now() + SEND_TIMEOUT;
    socket.send(message).is_ok()
}

/// A connection whose writes fail once `deadline` has passed, however slowly or quickly
/// the other end takes the bytes before it (a socket's write timeout bounds each write
/// call, not a message of many).
struct Deadlined {
    stream: TcpStream,
    deadline: Instant,
}

impl Read for Deadlined {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream.read(buf)
    }
}

impl Write for Deadlined {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        self.stream.set_write_timeout(Some(left))?;
        self.stream.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}
