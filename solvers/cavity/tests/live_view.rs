//! `cavity --serve`: the live view in a real browser (headless Chromium), and a run that
//! serves bad requests and an idle page ending exactly as one that serves nothing.

use live_view::{ServedRun, Watcher};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `cavity` with `args` on the CPU, serving a live view.
fn serve(args: &[&str]) -> ServedRun {
    let mut cavity = Command::new(env!("CARGO_BIN_EXE_cavity"));
    cavity.args(args).args(["--backend", "cpu"]);
    ServedRun::start(cavity).expect("cavity serves")
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("CHROME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    path.exists().then_some(path)
}

/// Polls `f` every 100 ms until it gives a value, for at most `limit`.
fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn the_page_shows_the_run_live_and_pauses_it() {
    let Some(chrome) = chromium() else {
        println!(
            "skipped: no Chromium at /usr/bin/chromium (apt-get install chromium, or set CHROME)"
        );
        return;
    };
    use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
    use headless_chrome::{Browser, LaunchOptions};

    let out = tempfile::tempdir().unwrap();
    let out_arg = out.path().to_str().unwrap();
    // A tolerance nothing meets: the run goes on until the test drops it, however long
    // the browser takes to start (a run that reached steady state would send no frames).
    // Small time steps keep the flow changing for a while after the page connects: with
    // the default ones a fast machine reached a picture that no longer changes (t = 55)
    // before a browser had started.
    let run = serve(&[
        "--cfl",
        "0.02",
        "--n",
        "65",
        "--t-end",
        "1e6",
        "--tol",
        "1e-300",
        "--check-every",
        "10",
        "--out",
        out_arg,
    ]);

    let options = LaunchOptions::default_builder()
        .path(Some(chrome))
        .headless(true)
        .sandbox(false)
        .window_size(Some((1100, 800)))
        .args(
            [
                "--disable-dev-shm-usage",
                "--disable-quic",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ]
            .iter()
            .map(std::ffi::OsStr::new)
            .collect(),
        )
        .idle_browser_timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let browser = Browser::new(options).unwrap();
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));
    tab.navigate_to(&format!("http://{}/", run.address()))
        .unwrap()
        .wait_until_navigated()
        .unwrap();

    let eval = |js: &str| -> Option<serde_json::Value> {
        tab.evaluate(js, false).ok().and_then(|r| r.value)
    };
    let number = |js: &str| eval(js).and_then(|v| v.as_f64());
    // What the canvas shows, as a hash of its pixels.
    let picture = r#"(() => { const v = document.getElementById('view'); const d = v.getContext('2d')
        .getImageData(0, 0, v.width, v.height).data; let h = 0;
        for (let k = 0; k < d.length; k += 7) h = (h * 31 + d[k]) | 0; return h; })()"#;
    let shown_time = "Number(document.getElementById('time').textContent)";

    let first = wait_for(Duration::from_secs(60), || {
        number("window.liveFrames").filter(|&n| n >= 1.0)
    })
    .expect("the page drew no frame within 60 s");
    let (pixels, time) = (number(picture).unwrap(), number(shown_time).unwrap());
    let (later_pixels, later_time) = wait_for(Duration::from_secs(60), || {
        let frames = number("window.liveFrames")?;
        let p = number(picture)?;
        let t = number(shown_time)?;
        (frames > first && p != pixels && t > time).then_some((p, t))
    })
    .expect("no second, different frame with a later time within 60 s");
    assert!(later_time > time && later_pixels != pixels);
    assert_eq!(
        eval("document.getElementById('title').textContent").unwrap(),
        "lid-driven cavity, Re = 100, 65 x 65 nodes"
    );

    tab.wait_for_element("#pause").unwrap().click().unwrap();
    wait_for(Duration::from_secs(20), || {
        (eval("document.getElementById('state').textContent")? == "paused").then_some(())
    })
    .expect("the page never showed the run paused");
    let held = number(shown_time).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        number(shown_time).unwrap(),
        held,
        "the simulated time went on while paused"
    );
    assert_eq!(
        eval("document.getElementById('pause').textContent").unwrap(),
        "Resume"
    );

    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("live-view-cavity.png");
    std::fs::write(&shot, &png).unwrap();
    println!("screenshot: {}", shot.display());
    assert!(png.len() > 10_000, "a screenshot of {} bytes", png.len());
}

/// The raw response to `request` (empty if the server closed without one).
fn http(address: SocketAddr, request: &[u8]) -> String {
    let Ok(mut s) = TcpStream::connect(address) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = s.write_all(request);
    let mut out = vec![];
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn bad_requests_and_an_idle_page_leave_the_results_unchanged() {
    let args = ["--n", "33", "--t-end", "20", "--check-every", "1"];
    let plain = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_cavity"))
        .args(args)
        .args(["--backend", "cpu", "--out", plain.path().to_str().unwrap()])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());

    let served = tempfile::tempdir().unwrap();
    let mut full = args.to_vec();
    full.extend(["--out", served.path().to_str().unwrap()]);
    let mut run = serve(&full);
    let address = run.address();
    // Hold the run while the bad requests come, so that they meet it running.
    let mut page = Watcher::connect(address, [64, 64]).unwrap();
    page.send(&serde_json::json!({ "pause": true })).unwrap();
    // A page that connects and never reads.
    let mut idle = TcpStream::connect(address).unwrap();
    idle.write_all(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").unwrap();
    let answers = [
        http(
            address,
            b"GET /nothing/here HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        ),
        http(
            address,
            format!(
                "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: {}\r\n\r\n",
                "y".repeat(1 << 20)
            )
            .as_bytes(),
        ),
        http(address, b"\x00\x01garbage\r\n\r\n"),
    ];
    assert!(answers[0].starts_with("HTTP/1.1 404"), "{}", answers[0]);
    assert!(answers[1].starts_with("HTTP/1.1 431"), "{}", answers[1]);
    assert!(answers[2].starts_with("HTTP/1.1 400"), "{}", answers[2]);
    page.send(&serde_json::json!({ "pause": false })).unwrap();
    assert!(run.wait().unwrap(), "the served run failed");
    drop(idle);

    let a = cavity::Checkpoint::read(&plain.path().join("checkpoint.bin")).unwrap();
    let b = cavity::Checkpoint::read(&served.path().join("checkpoint.bin")).unwrap();
    assert_eq!((a.step, a.time), (b.step, b.time));
    assert!(a.w == b.w && a.psi == b.psi, "served and plain runs differ");
}
