//! The HTTP and WebSocket server: the page and its two assets, compiled into the binary,
//! and the frame stream at `/stream`. Nothing else is served (every other path is 404,
//! every other method 405), nothing is read from the file system, requests with huge
//! heads are refused by hyper (431), and a stream from another origin is refused (403),
//! so that no other web site the user visits can drive the run; requests that name their
//! host other than by an IP address or `localhost` are refused (421), so that a web site
//! whose name resolves to this machine gets nothing either, and the page may not be
//! framed by another site.

use crate::protocol::Command;
use crate::shared::Shared;
use crate::Error;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

const PAGE: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/view.js");
const STYLE: &str = include_str!("../assets/view.css");

/// The most pages streaming at once; more get 503.
const MOST_VIEWERS: usize = 8;
/// The largest message a page may send (commands are a few dozen bytes).
const LARGEST_COMMAND: usize = 4096;
/// How long a page may take to accept one message before it is dropped.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// A running server; dropping it stops it.
pub(crate) struct Server {
    address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Binds `address` and serves on a thread of its own.
    pub fn start(address: SocketAddr, shared: Arc<Shared>) -> Result<Server, Error> {
        let bind = |e: std::io::Error| Error::Bind { address, source: e };
        let listener = std::net::TcpListener::bind(address).map_err(bind)?;
        listener.set_nonblocking(true).map_err(bind)?;
        let bound = listener.local_addr().map_err(bind)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(bind)?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = Router::new()
            .route("/", get(page))
            .route("/view.js", get(script))
            .route("/view.css", get(style))
            .route("/stream", get(stream))
            .fallback(not_found)
            .layer(axum::middleware::from_fn(check_host))
            .with_state(shared);
        let thread = std::thread::Builder::new()
            .name("live-view".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let serve = std::future::IntoFuture::into_future(axum::serve(listener, app));
                    tokio::select! {
                        _ = serve => {}
                        _ = stopped => {}
                    }
                });
                // Streams to pages that stopped reading end here, not with the run.
                runtime.shutdown_timeout(Duration::from_millis(200));
            })
            .map_err(bind)?;
        Ok(Server {
            address: bound,
            stop: Some(stop),
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
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
            ),
            (header::X_FRAME_OPTIONS, "DENY"),
        ],
        body,
    )
        .into_response()
}

async fn page() -> Response {
    asset("text/html; charset=utf-8", PAGE)
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        "not found: the live view serves /, its assets and /stream\n",
    )
        .into_response()
}

/// The host a request names, without its port (`[::1]` keeps its brackets).
fn host_name(headers: &HeaderMap) -> Option<&str> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    if host.starts_with('[') {
        return host.find(']').map(|end| &host[..=end]);
    }
    Some(host.rsplit_once(':').map_or(host, |(name, _)| name))
}

/// Refuses (421) a request that names its host by anything but an IP address or
/// `localhost`: a web site whose name was pointed at this machine ("DNS rebinding") gets
/// nothing, whatever address the server is bound to.
async fn check_host(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let allowed = host_name(request.headers()).is_some_and(|h| {
        h == "localhost"
            || h.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok()
    });
    if !allowed {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            "the live view answers to IP addresses and localhost only\n",
        )
            .into_response();
    }
    next.run(request).await
}

/// Whether the request comes from the page itself: its `Origin` names the host it asked.
fn same_origin(headers: &HeaderMap) -> bool {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
    match (host, origin) {
        (Some(host), Some(origin)) => {
            origin.strip_prefix("http://").is_some_and(|o| o == host)
                || origin.strip_prefix("https://").is_some_and(|o| o == host)
        }
        // Not a browser (no Origin): a script on this machine.
        (Some(_), None) => true,
        _ => false,
    }
}

async fn stream(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    if !same_origin(&headers) {
        return (
            StatusCode::FORBIDDEN,
            "the stream is for the live view's own page\n",
        )
            .into_response();
    }
    let Some(slot) = Viewer::reserve(&shared) else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many pages are watching\n",
        )
            .into_response();
    };
    upgrade
        .max_message_size(LARGEST_COMMAND)
        .max_frame_size(LARGEST_COMMAND)
        .on_upgrade(move |socket| watch(socket, shared, slot))
}

/// Streams the hello, the status and the frames to one page and applies its commands,
/// until it leaves or stops accepting messages.
async fn watch(mut socket: WebSocket, shared: Arc<Shared>, _slot: Viewer) {
    shared.connected();
    let mut frames = shared.frames.subscribe();
    let mut status = shared.status.subscribe();
    let first = [
        Some(Message::Text(shared.hello.clone().into())),
        Some(Message::Text(status.borrow_and_update().clone().into())),
        frames.borrow_and_update().clone().map(Message::Binary),
    ];
    let mut open = true;
    for m in first.into_iter().flatten() {
        open = open && send(&mut socket, m).await;
    }
    while open {
        open = tokio::select! {
            message = socket.recv() => match message {
                Some(Ok(Message::Text(text))) => {
                    // A command that does not parse is ignored, as a browser would.
                    if let Ok(command) = serde_json::from_str::<Command>(&text) {
                        shared.apply(&command);
                    }
                    true
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => false,
                Some(Ok(_)) => true,
            },
            changed = frames.changed() => {
                let frame = frames.borrow_and_update().clone();
                match (changed, frame) {
                    (Ok(()), Some(f)) => send(&mut socket, Message::Binary(f)).await,
                    (Ok(()), None) => true,
                    (Err(_), _) => false,
                }
            }
            changed = status.changed() => {
                let text = status.borrow_and_update().clone();
                changed.is_ok() && send(&mut socket, Message::Text(text.into())).await
            }
        };
    }
}

/// A page's place among the [`MOST_VIEWERS`], taken before the upgrade and given back when
/// dropped (the page left, or the upgrade failed).
struct Viewer(Arc<Shared>);

impl Viewer {
    fn reserve(shared: &Arc<Shared>) -> Option<Viewer> {
        shared
            .take_viewer(MOST_VIEWERS)
            .then(|| Viewer(shared.clone()))
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        self.0.disconnected();
    }
}

/// Sends `message`, giving up on a page that does not take it within [`SEND_TIMEOUT`].
async fn send(socket: &mut WebSocket, message: Message) -> bool {
    matches!(
        tokio::time::timeout(SEND_TIMEOUT, socket.send(message)).await,
        Ok(Ok(()))
    )
}
