//! `smooth --serve`: a scripted page watches the mesh's quality and asks for a checkpoint,
//! a mesh that `smooth` reads back.

use live_view::{ServedRun, Watcher};
use std::process::Command;

#[test]
fn a_page_watches_the_quality_and_asks_for_a_checkpoint() {
    let out = tempfile::tempdir().unwrap();
    let mesh = out.path().join("mesh.vtu");
    let mut smooth = Command::new(env!("CARGO_BIN_EXE_smooth"));
    smooth.args(["--generate", "40", "--sweeps", "1000000", "--picture", "0"]);
    smooth.args(["--backend", "cpu", "--out", mesh.to_str().unwrap()]);
    let run = ServedRun::start(smooth).unwrap();

    let mut w = Watcher::connect(run.address(), [400, 300]).unwrap();
    // The unit square fits 300 pixels (a frame drawn before the run read the page's view
    // is larger).
    let (header, layers) = loop {
        let (header, layers) = w.next_frame().unwrap();
        if (header["width"].as_u64(), header["height"].as_u64()) == (Some(300), Some(300)) {
            break (header, layers);
        }
    };
    assert_eq!(header["layers"][1], "lines");
    let inside: Vec<f32> = layers[0].iter().copied().filter(|q| !q.is_nan()).collect();
    assert!(
        inside.len() > 300 * 300 * 9 / 10,
        "the mesh covers its picture"
    );
    assert!(inside.iter().all(|&q| (0.0..=1.0).contains(&q)));
    assert!(layers[1].contains(&1.0), "edges are drawn");

    w.send(&serde_json::json!({ "checkpoint": true })).unwrap();
    w.wait_for_notice(|n| n.contains("checkpoint.vtu")).unwrap();
    let saved = mesh_smoothing::vtu::read_mesh(&out.path().join("mesh.checkpoint.vtu")).unwrap();
    assert_eq!(saved.points.len(), 40 * 40);
}
