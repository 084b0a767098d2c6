//! The live view's server against a scripted run and scripted pages: what it serves, what
//! it refuses, pausing, checkpoints, and that a page that never reads never slows the run.

use live_view::{Description, FieldInfo, Frame, LiveView, Palette, Progress};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tungstenite::Message;

fn description() -> Description {
    Description {
        title: "scripted run".into(),
        fields: vec![FieldInfo {
            name: "ramp".into(),
            unit: "1".into(),
            range: [0.0, 1.0],
            palette: Palette::Sequential,
        }],
        marks: vec![],
        aspect: 2.0,
        clock: "t".into(),
    }
}

/// A run on a thread of its own: steps every 0.2 ms, drawing a `width` x `height` ramp
/// shifted by the step, until `stop`. Counts its steps and the checkpoints it wrote.
struct Run {
    address: SocketAddr,
    steps: Arc<AtomicU64>,
    checkpoints: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Run {
    fn start(width: usize, height: usize) -> Run {
        let mut view = LiveView::serve("127.0.0.1:0".parse().unwrap(), &description()).unwrap();
        let address = view.address();
        let steps = Arc::new(AtomicU64::new(0));
        let checkpoints = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, c, st) = (steps.clone(), checkpoints.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut step = 0u64;
            while !st.load(Ordering::SeqCst) {
                step += 1;
                s.store(step, Ordering::SeqCst);
                let progress = Progress {
                    time: step as f64 * 0.5,
                    step,
                    fraction: 0.0,
                };
                let draw = |r: &live_view::FrameRequest| {
                    let v = (0..width * height)
                        .map(|k| (k as u64 + step) as f32)
                        .collect();
                    Ok(Frame::values(r.field, width, height, v))
                };
                let write = || {
                    c.fetch_add(1, Ordering::SeqCst);
                    Ok("checkpoint written".to_string())
                };
                view.tick::<live_view::Error>(progress, draw, write)
                    .unwrap();
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        Run {
            address,
            steps,
            checkpoints,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The raw HTTP response to `request`.
fn http(address: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(address).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(request);
    let mut out = vec![];
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn status_line(response: &str) -> &str {
    response.lines().next().unwrap_or("")
}

#[test]
fn serves_the_page_and_its_assets_and_nothing_else() {
    let run = Run::start(4, 2);
    let get = |path: &str| {
        http(
            run.address,
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
    };
    let page = get("/");
    assert_eq!(status_line(&page), "HTTP/1.1 200 OK");
    assert!(page.contains("<canvas id=\"view\""));
    assert!(get("/view.js").contains("new WebSocket"));
    assert!(get("/view.css").contains("text/css"));
    for path in [
        "/etc/passwd",
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/view.js/..",
        "/index.html",
    ] {
        assert_eq!(status_line(&get(path)), "HTTP/1.1 404 Not Found", "{path}");
    }
    let post = http(
        run.address,
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
    );
    assert_eq!(status_line(&post), "HTTP/1.1 405 Method Not Allowed");
}

#[test]
fn malformed_and_oversized_requests_get_an_error_status_and_the_run_goes_on() {
    let run = Run::start(4, 2);
    let huge = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    assert_eq!(
        status_line(&http(run.address, huge.as_bytes())),
        "HTTP/1.1 431 Request Header Fields Too Large"
    );
    let many: String = (0..500).map(|k| format!("X-{k}: {k}\r\n")).collect();
    let many = format!("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}\r\n");
    assert!(status_line(&http(run.address, many.as_bytes())).starts_with("HTTP/1.1 4"));
    assert!(status_line(&http(run.address, b"NOT A REQUEST\r\n\r\n")).starts_with("HTTP/1.1 400"));
    // Bytes outside ASCII in a header are the client's business: an answer, no harm.
    let odd = http(
        run.address,
        b"GET / HTTP/1.1\r\nHost: \xff\xfe\r\nConnection: close\r\n\r\n",
    );
    assert!(status_line(&odd).starts_with("HTTP/1.1 "), "{odd}");
    // A request naming another host (DNS rebinding) is refused, page and stream alike.
    let rebound = "GET / HTTP/1.1\r\nHost: attacker.example:8080\r\nConnection: close\r\n\r\n";
    assert_eq!(
        status_line(&http(run.address, rebound.as_bytes())),
        "HTTP/1.1 421 Misdirected Request"
    );
    let localhost = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    assert_eq!(
        status_line(&http(run.address, localhost.as_bytes())),
        "HTTP/1.1 200 OK"
    );
    // A stream asked for by another web site's page is refused.
    let foreign = "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://elsewhere.example\r\nConnection: close, Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    assert_eq!(
        status_line(&http(run.address, foreign.as_bytes())),
        "HTTP/1.1 403 Forbidden"
    );
    let before = run.steps.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(100));
    assert!(run.steps.load(Ordering::SeqCst) > before, "the run stopped");
}

#[test]
fn the_stream_takes_eight_pages_and_a_websocket_upgrade() {
    let run = Run::start(4, 2);
    let plain = "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    assert_eq!(
        status_line(&http(run.address, plain.as_bytes())),
        "HTTP/1.1 400 Bad Request"
    );
    let mut pages: Vec<Page> = (0..8).map(|_| page(run.address)).collect();
    for p in &mut pages {
        next(p, "hello");
    }
    let ninth = "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    assert_eq!(
        status_line(&http(run.address, ninth.as_bytes())),
        "HTTP/1.1 503 Service Unavailable"
    );
    // A page that leaves frees its place.
    drop(pages.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut s = TcpStream::connect(run.address).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(ninth.as_bytes()).unwrap();
        let mut line = [0u8; 12];
        s.read_exact(&mut line).unwrap();
        if &line == b"HTTP/1.1 101" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a page's place was not given back"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A page's stream: the messages it receives, and commands it sends.
type Page = tungstenite::WebSocket<TcpStream>;

/// Opens a page's stream; each read waits at most 10 s.
fn page(address: SocketAddr) -> Page {
    let stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    tungstenite::client(format!("ws://{address}/stream"), stream)
        .unwrap()
        .0
}

/// Sends a command.
fn send(ws: &mut Page, text: &str) {
    ws.send(Message::Text(text.into())).unwrap();
}

/// The next text message of `kind`, or the next frame's header (`kind == "frame"`) and
/// first value.
fn next(ws: &mut Page, kind: &str) -> (serde_json::Value, f32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "no {kind} message in 10 s");
        match ws.read().unwrap() {
            Message::Text(t) => {
                let v: serde_json::Value = serde_json::from_str(&t).unwrap();
                if v["kind"] == kind {
                    return (v, f32::NAN);
                }
            }
            Message::Binary(b) if kind == "frame" => {
                let len = u32::from_le_bytes(b[..4].try_into().unwrap()) as usize;
                let header: serde_json::Value = serde_json::from_slice(&b[4..4 + len]).unwrap();
                let at = 4 + len.div_ceil(4) * 4;
                let first = f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
                let n = header["width"].as_u64().unwrap() * header["height"].as_u64().unwrap();
                assert_eq!(b.len(), at + 4 * n as usize);
                return (header, first);
            }
            _ => {}
        }
    }
}

#[test]
fn a_page_gets_frames_pauses_resumes_and_asks_for_checkpoints() {
    let run = Run::start(4, 2);
    let mut ws = page(run.address);
    let (hello, _) = next(&mut ws, "hello");
    assert_eq!(hello["title"], "scripted run");
    assert_eq!(hello["fields"][0]["palette"], "sequential");
    let (a, first_a) = next(&mut ws, "frame");
    let (b, first_b) = next(&mut ws, "frame");
    assert_eq!(
        (a["width"].as_u64(), a["height"].as_u64()),
        (Some(4), Some(2))
    );
    assert!(first_b > first_a, "frames show the run advancing");
    assert!(b["status"]["time"].as_f64() > a["status"]["time"].as_f64());

    send(&mut ws, r#"{"pause": true}"#);
    loop {
        let (s, _) = next(&mut ws, "status");
        if s["status"]["paused"] == true {
            break;
        }
    }
    let held = run.steps.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(400));
    assert!(
        run.steps.load(Ordering::SeqCst) <= held + 1,
        "the run went on while paused"
    );

    // A checkpoint while paused.
    send(&mut ws, r#"{"checkpoint": true}"#);
    loop {
        let (s, _) = next(&mut ws, "status");
        if s["status"]["notice"] == "checkpoint written" {
            break;
        }
    }
    assert_eq!(run.checkpoints.load(Ordering::SeqCst), 1);
    // Asked again at once: one checkpoint is enough.
    send(&mut ws, r#"{"checkpoint": true}"#);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(run.checkpoints.load(Ordering::SeqCst), 1);
    assert!(
        run.steps.load(Ordering::SeqCst) <= held + 1,
        "the run went on after a checkpoint while paused"
    );
    // Garbage and unknown commands are ignored.
    send(&mut ws, "{not json");
    send(&mut ws, r#"{"delete": "/"}"#);
    send(&mut ws, r#"{"pause": false}"#);
    let deadline = Instant::now() + Duration::from_secs(20);
    while run.steps.load(Ordering::SeqCst) <= held + 10 {
        assert!(Instant::now() < deadline, "the run did not resume");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A message above the limit closes this page's stream, nothing else.
    let _ = ws.send(Message::Text("x".repeat(1 << 16).into()));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(
            Instant::now() < deadline,
            "an oversized message left the stream open"
        );
        match ws.read() {
            // Waited 10 s without a message: still open.
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) | Ok(Message::Close(_)) => break,
            Ok(_) => {}
        }
    }
    let before = run.steps.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(100));
    assert!(run.steps.load(Ordering::SeqCst) > before);
}

/// Steps the run takes in `span`.
fn steps_in(run: &Run, span: Duration) -> u64 {
    let start = run.steps.load(Ordering::SeqCst);
    std::thread::sleep(span);
    run.steps.load(Ordering::SeqCst) - start
}

#[test]
fn a_page_that_never_reads_does_not_slow_the_run() {
    // Frames of 4 MB: a page that never reads fills its socket within a few frames.
    let run = Run::start(1024, 1024);
    let alone = steps_in(&run, Duration::from_secs(1));
    // Pages that connect and never read a byte: frames pile up in no queue, and after 5 s
    // of a blocked send the server drops them.
    let idle: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut s = TcpStream::connect(run.address).unwrap();
            let req = "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
            s.write_all(req.as_bytes()).unwrap();
            s
        })
        .collect();
    let watched = steps_in(&run, Duration::from_secs(7));
    // Making frames takes at most a few percent of the run; blocked pages take nothing.
    assert!(
        watched as f64 / 7.0 > 0.5 * alone as f64,
        "{watched} steps in 7 s with idle pages, {alone} in 1 s without"
    );
    drop(idle);
}

#[test]
fn a_bad_address_is_a_clear_error() {
    assert!(matches!(
        live_view::address("localhost"),
        Err(live_view::Error::Address(_))
    ));
    assert_eq!(
        live_view::address("").unwrap().to_string(),
        live_view::DEFAULT_ADDRESS
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let e = LiveView::serve(taken.local_addr().unwrap(), &description())
        .err()
        .unwrap();
    assert!(e.to_string().contains("pick another with --serve"), "{e}");
}

#[test]
fn an_interrupt_ends_a_pause() {
    let flag = Arc::new(AtomicBool::new(false));
    let view = LiveView::serve("127.0.0.1:0".parse().unwrap(), &description())
        .unwrap()
        .interrupted_by(flag.clone());
    let mut page = live_view::Watcher::connect(view.address(), [8, 8]).unwrap();
    let (steps, done) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let (s, d) = (steps.clone(), done.clone());
    let run = std::thread::spawn(move || {
        let mut view = view;
        let mut step = 0;
        while !d.load(Ordering::SeqCst) {
            step += 1;
            let progress = Progress {
                time: step as f64,
                step,
                fraction: 0.0,
            };
            let draw = |q: &live_view::FrameRequest| Ok(Frame::values(q.field, 1, 1, vec![0.0]));
            view.tick::<live_view::Error>(progress, draw, || Ok(String::new()))
                .unwrap();
            s.store(step, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    page.send(&serde_json::json!({ "pause": true })).unwrap();
    page.wait_for_status(|s| s["paused"] == true).unwrap();
    let held = steps.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        steps.load(Ordering::SeqCst) <= held + 1,
        "the pause did not hold the run"
    );
    flag.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(20);
    while steps.load(Ordering::SeqCst) <= held + 5 {
        assert!(
            Instant::now() < deadline,
            "the interrupt did not end the pause"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    done.store(true, Ordering::SeqCst);
    run.join().unwrap();
}

#[test]
fn heads_split_anywhere_queries_and_head_requests_are_understood() {
    let run = Run::start(4, 2);
    // The head in two writes, split inside its blank line.
    let mut s = TcpStream::connect(run.address).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /view.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    s.write_all(b"\n").unwrap();
    let mut out = vec![];
    let _ = s.read_to_end(&mut out);
    assert!(String::from_utf8_lossy(&out).starts_with("HTTP/1.1 200 OK"));
    let get = |request: &str| http(run.address, request.as_bytes());
    // A query names nothing.
    let page = get("GET /?v=2 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assert_eq!(status_line(&page), "HTTP/1.1 200 OK");
    // HEAD: the headers alone.
    let head = get("HEAD /view.js HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assert_eq!(status_line(&head), "HTTP/1.1 200 OK");
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    // Lines ended by a bare line feed.
    let bare = get("GET / HTTP/1.1\nHost: 127.0.0.1\n\n");
    assert_eq!(status_line(&bare), "HTTP/1.1 200 OK");
}

#[test]
fn a_client_that_sends_its_head_slowly_is_cut_off() {
    let run = Run::start(4, 2);
    let mut s = TcpStream::connect(run.address).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let start = Instant::now();
    let mut sent = 0;
    // A byte a second: each read comes well within any per-read timeout.
    let request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaa";
    let closed = loop {
        if s.write_all(&request[sent..sent + 1]).is_err() {
            break true;
        }
        sent += 1;
        let mut b = [0u8; 64];
        match s.read(&mut b) {
            Ok(0) => break true,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            _ => {}
        }
        if start.elapsed() > Duration::from_secs(15) || sent == request.len() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(800));
    };
    assert!(
        closed,
        "a head sent a byte a second was still being read after {sent} bytes"
    );
    assert!(start.elapsed() < Duration::from_secs(8));
}
