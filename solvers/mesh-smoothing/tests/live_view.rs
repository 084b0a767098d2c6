//! `smooth --serve`: a scripted page watches the mesh's quality and asks for a checkpoint,
//! a mesh that `smooth` reads back.

use live_view::{Received, Watcher};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

struct Run(Child);

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_page_watches_the_quality_and_asks_for_a_checkpoint() {
    let out = tempfile::tempdir().unwrap();
    let mesh = out.path().join("mesh.vtu");
    let mut child = Command::new(env!("CARGO_BIN_EXE_smooth"))
        .args([
            "--generate",
            "40",
            "--sweeps",
            "1000000",
            "--picture",
            "0",
            "--backend",
            "cpu",
        ])
        .args(["--out", mesh.to_str().unwrap(), "--serve", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let _run = Run(child);
    let address = loop {
        let line = lines.next().expect("smooth prints its address").unwrap();
        if let Some(rest) = line.strip_prefix("live view at http://") {
            break rest.trim_end_matches('/').parse().unwrap();
        }
    };
    std::thread::spawn(move || for _ in lines {});

    let mut w = Watcher::connect(address, [400, 300]).unwrap();
    let (header, layers) = loop {
        if let Received::Frame { header, layers } = w.receive().unwrap().unwrap() {
            break (header, layers);
        }
    };
    // The unit square fits 300 pixels.
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(300), Some(300))
    );
    assert_eq!(header["layers"][1], "lines");
    let inside: Vec<f32> = layers[0].iter().copied().filter(|q| !q.is_nan()).collect();
    assert!(
        inside.len() > 300 * 300 * 9 / 10,
        "the mesh covers its picture"
    );
    assert!(inside.iter().all(|&q| (0.0..=1.0).contains(&q)));
    assert!(layers[1].contains(&1.0), "edges are drawn");

    w.send(&serde_json::json!({ "checkpoint": true })).unwrap();
    loop {
        if let Received::Status(s) = w.receive().unwrap().unwrap() {
            if s["notice"]
                .as_str()
                .is_some_and(|n| n.contains("checkpoint.vtu"))
            {
                break;
            }
        }
    }
    let saved = mesh_smoothing::vtu::read_mesh(&out.path().join("mesh.checkpoint.vtu")).unwrap();
    assert_eq!(saved.points.len(), 40 * 40);
}
