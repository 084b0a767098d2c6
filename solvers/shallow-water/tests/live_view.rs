//! `flood --serve`: a scripted page watches a sparse run, switches to the speed, and asks
//! for a checkpoint. (The browser test is the cavity's, `solvers/cavity/tests/live_view.rs`.)

use live_view::{Received, ServedRun, Watcher};
use std::process::Command;

#[test]
fn a_page_watches_a_sparse_flood_and_asks_for_a_checkpoint() {
    let out = tempfile::tempdir().unwrap();
    let mut flood = Command::new(env!("CARGO_BIN_EXE_flood"));
    flood.args([
        "radial",
        "--n",
        "128",
        "--end-time",
        "1e6",
        "--sparse",
        "--quiet",
    ]);
    flood.args(["--backend", "cpu", "--out", out.path().to_str().unwrap()]);
    let run = ServedRun::start(flood).unwrap();

    let mut w = Watcher::connect(run.address(), [100, 100]).unwrap();
    let Received::Hello(hello) = w.receive().unwrap().unwrap() else {
        panic!("no hello first")
    };
    assert_eq!(hello["fields"][0]["name"], "depth");
    assert_eq!(hello["fields"][1]["name"], "speed");
    // 128 cells fit 100 pixels after one halving (a frame drawn before the run read the
    // page's view is larger).
    let (first, layers) = loop {
        let (h, l) = w.next_frame().unwrap();
        if (h["width"].as_u64(), h["height"].as_u64()) == (Some(64), Some(64)) {
            break (h, l);
        }
    };
    assert_eq!(first["layers"][0], "values");
    assert!(layers[0].iter().all(|&h| h >= 0.0) && layers[0].iter().any(|&h| h > 0.1));
    let (second, _) = w.next_frame().unwrap();
    assert!(second["status"]["time"].as_f64() > first["status"]["time"].as_f64());

    w.send(&serde_json::json!({ "field": 1 })).unwrap();
    let (speed, layers) = loop {
        let (h, l) = w.next_frame().unwrap();
        if h["field"] == 1 {
            break (h, l);
        }
    };
    assert_eq!(speed["layers"].as_array().unwrap().len(), 1);
    assert!(layers[0].iter().all(|&s| s.is_nan() || s >= 0.0));

    w.send(&serde_json::json!({ "checkpoint": true })).unwrap();
    w.wait_for_notice(|n| n.starts_with("checkpoint written"))
        .unwrap();
    assert!(out.path().join("checkpoint.bin").exists());
}
