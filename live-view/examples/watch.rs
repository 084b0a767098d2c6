//! A scripted page: watches a live view until the run ends, as a browser at the default
//! refresh would, and reports the frames it got. Used to measure what watching costs a run:
//!
//! ```text
//! flood malpasset --serve 127.0.0.1:8080 &
//! cargo run --release -p live-view --example watch -- 127.0.0.1:8080
//! ```

use live_view::{Received, Watcher};
use std::time::Instant;

fn main() {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| live_view::DEFAULT_ADDRESS.into());
    let address = match live_view::address(&address) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    // The run may still be starting: try for a while.
    let start = Instant::now();
    let mut watcher = loop {
        match Watcher::connect(address, [1280, 720]) {
            Ok(w) => break w,
            Err(e) if start.elapsed().as_secs() > 60 => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
        }
    };
    let (mut frames, mut bytes, mut last) = (0u64, 0usize, None);
    loop {
        match watcher.receive() {
            Ok(Some(Received::Frame { header, layers })) => {
                frames += 1;
                bytes += layers.iter().map(|l| 4 * l.len()).sum::<usize>();
                last = Some(header);
            }
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "watched {seconds:.2} s: {frames} frames ({:.1} a second), {:.1} MB of values",
        frames as f64 / seconds.max(1e-9),
        bytes as f64 / 1e6
    );
    if let Some(h) = last {
        println!(
            "last frame: {} x {}, status {}",
            h["width"], h["height"], h["status"]
        );
    }
}
