//! The meshes of ../shared/data/meshes (zlib-compressed, base64-appended `.vtu`) read
//! with their metric; the element quality in the metric agrees with the quality stored
//! in smooth_2d.vtu; a file without a metric is refused by name; a written mesh reads
//! back.

use mesh_smoothing::quality::{min_mean, qualities};
use mesh_smoothing::vtu::{self, VtuFile};
use std::path::{Path, PathBuf};

fn shared(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/meshes")
        .join(name);
    if p.exists() {
        Some(p)
    } else {
        println!("SKIPPED: no {}", p.display());
        None
    }
}

#[test]
fn smooth_2d_reads_with_its_metric_and_quality() {
    let Some(path) = shared("smooth_2d.vtu") else {
        return;
    };
    let file = VtuFile::read(&path).unwrap();
    let mesh = file.mesh(&path).unwrap();
    assert_eq!((mesh.points.len(), mesh.triangles.len()), (9958, 19560));
    let q = qualities(&mesh);
    let (min, mean) = min_mean(&q);
    let stored = &file.cell_data["quality"].values;
    let worst = q
        .iter()
        .zip(stored)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let (smin, smean) = min_mean(stored);
    println!("quality: ours min {min:.4} mean {mean:.4}; stored min {smin:.4} mean {smean:.4}; largest difference {worst:.2e}");
    // 1.3e-5 measured: the file stores the points in f32 (its quality was computed from
    // the f64 positions).
    assert!(worst < 1e-4, "{worst}");
}

#[test]
fn a_mesh_without_a_metric_is_refused_by_name() {
    let Some(path) = shared("box20x20.vtu") else {
        return;
    };
    let file = VtuFile::read(&path).unwrap();
    assert_eq!(file.triangles.len(), 800);
    let e = file.mesh(&path).unwrap_err().to_string();
    assert!(e.contains("box20x20.vtu") && e.contains("Metric"), "{e}");
}

#[test]
fn a_written_mesh_reads_back() {
    let Some(path) = shared("smooth_2d.vtu") else {
        return;
    };
    let mesh = vtu::read_mesh(&path).unwrap();
    let q = qualities(&mesh);
    let out = std::env::temp_dir().join(format!("roundtrip-{}.vtu", std::process::id()));
    vtu::write(&out, &mesh, &[("quality", &q)]).unwrap();
    let back = VtuFile::read(&out).unwrap();
    let again = back.mesh(&out).unwrap();
    assert_eq!(again.triangles, mesh.triangles);
    assert_eq!(again.points, mesh.points);
    assert_eq!(back.cell_data["quality"].values, q);
    std::fs::remove_file(&out).unwrap();
}
