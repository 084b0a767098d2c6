//! The program around the solver: a scenario file runs end to end and writes every
//! output (pictures, GIF, VTK, grids, gauges, summary); a run resumed from a checkpoint
//! ends bit for bit where the uninterrupted run does; the command line names bad input.

use shallow_water::{FloodError, Raster, Run, RunOptions, Scenario, Storage};
use std::path::{Path, PathBuf};
use stencil_runtime::{Backend, Real};

/// The example scenario: a channel with a dam break, an inflow hydrograph, an open
/// outlet and two gauges.
fn channel() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/channel.toml");
    std::fs::read_to_string(path).unwrap()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flood-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn scenario(text: &str) -> Scenario {
    Scenario::parse(Path::new("channel.toml"), text).unwrap()
}

fn options(out: &Path) -> RunOptions {
    stored(out, Storage::Dense)
}

fn stored(out: &Path, storage: Storage) -> RunOptions {
    RunOptions {
        out: out.to_path_buf(),
        progress: false,
        storage,
        serve: None,
    }
}

/// The scenario `text` resumed in precision `T` from the checkpoint in `out`, stored as
/// `storage`, writing its outputs to `out`.
fn resume<T: Real>(text: &str, out: &Path, storage: Storage) -> Result<Run<T>, FloodError> {
    let checkpoint = out.join("checkpoint.bin");
    Run::<T>::resume(
        &Backend::Cpu,
        scenario(text),
        stored(out, storage),
        &checkpoint,
    )
}

/// The example channel twice as long with a dry bed below the reservoir: most of it dry
/// at first, the front crossing blocks as it goes.
fn dry_channel() -> String {
    channel()
        .replace("nx = 80", "nx = 160")
        .replace("depth = 0.2\n", "depth = 0.0\n")
}

#[test]
fn a_scenario_writes_every_output() {
    let out = fresh_dir("outputs");
    let summary = Run::<f32>::new(&Backend::Cpu, scenario(&channel()), options(&out))
        .unwrap()
        .run()
        .unwrap();
    println!("{summary}");
    assert_eq!(summary.time, 4.0);
    assert!(!summary.closed);
    for file in [
        "pictures/depth_0001.png",
        "pictures/depth_0002.png",
        "vtk/state_0002.vtk",
        "flood.gif",
        "checkpoint.bin",
        "summary.txt",
    ] {
        assert!(out.join(file).is_file(), "{file} was not written");
    }
    let picture = image::open(out.join("pictures/depth_0002.png")).unwrap();
    assert_eq!((picture.width(), picture.height()), (80, 20));
    // The front has passed the near gauge: its largest depth lies between the pool's
    // and the reservoir's, and it arrived after the start.
    let deepest = Raster::read(&out.join("max_depth.asc")).unwrap();
    let near = deepest.values[10 * 80 + 24];
    assert!(near > 0.5 && near < 2.0, "{near}");
    // The arrival of 0.5 m: 0 in the reservoir, soon after the start at the near gauge,
    // never (NODATA) at the east end.
    let arrival = std::fs::read_to_string(out.join("arrival_time.asc")).unwrap();
    let row: Vec<f64> = arrival
        .lines()
        .nth(6 + 9)
        .unwrap()
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    println!("arrival times along row 10: {row:?}");
    assert_eq!(row[0], 0.0);
    assert!(row[24] > 0.0 && row[24] < 2.0, "{}", row[24]);
    assert_eq!(row[79], -9999.0);
    let csv = std::fs::read_to_string(out.join("gauges/near.csv")).unwrap();
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(2)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 9, "samples at 0, 0.5, ..., 4 s");
    assert_eq!(rows[0][1], 0.2f32 as f64);
    assert!(rows[8][1] > 0.3 && rows[8][3] > 0.1, "{:?}", rows[8]);
    std::fs::remove_dir_all(&out).unwrap();
}

/// The example channel's first half, to its first output time (2 s), in f32 into `out`
/// (its checkpoint `out/checkpoint.bin`).
fn first_half(out: &Path) {
    let half = channel()
        .replace("end_time = 4.0", "end_time = 2.0")
        .replace("times = [2.0, 4.0]", "times = [2.0]");
    Run::<f32>::new(&Backend::Cpu, scenario(&half), options(out))
        .unwrap()
        .run()
        .unwrap();
}

#[test]
fn a_resumed_run_ends_where_the_uninterrupted_one_does() {
    let whole = fresh_dir("whole");
    let parts = fresh_dir("parts");
    let a = Run::<f32>::new(&Backend::Cpu, scenario(&channel()), options(&whole))
        .unwrap()
        .run()
        .unwrap();
    // The first half (to the first output time), then the rest from its checkpoint.
    first_half(&parts);
    let b = resume::<f32>(&channel(), &parts, Storage::Dense)
        .unwrap()
        .run()
        .unwrap();
    assert_eq!((a.steps, a.final_volume), (b.steps, b.final_volume));
    for file in [
        "vtk/state_0002.vtk",
        "max_depth.asc",
        "arrival_time.asc",
        "gauges/far.csv",
    ] {
        let (x, y) = (
            std::fs::read(whole.join(file)),
            std::fs::read(parts.join(file)),
        );
        assert!(x.unwrap() == y.unwrap(), "{file} differs after resuming");
    }
    // A checkpoint of another precision is refused with a reason.
    let e = resume::<f64>(&channel(), &parts, Storage::Dense)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("checkpoint.bin") && e.contains("f32"), "{e}");
    std::fs::remove_dir_all(&whole).unwrap();
    std::fs::remove_dir_all(&parts).unwrap();
}

/// A run resumed with other output times (another end time, other frames) writes those
/// after its checkpoint's time, numbered on from the files already written.
#[test]
fn a_run_resumed_with_other_output_times_writes_those_after_its_checkpoint() {
    let parts = fresh_dir("other-times");
    first_half(&parts);
    // Outputs at 1, 1.5, 3 and 4 s: the first two lie before the checkpoint (2 s), the
    // others after it (the saved run's next output index, 1, would name 1.5 s).
    let more = channel().replace("times = [2.0, 4.0]", "times = [1.0, 1.5, 3.0, 4.0]");
    resume::<f32>(&more, &parts, Storage::Dense)
        .unwrap()
        .run()
        .unwrap();
    let pictures: Vec<String> = std::fs::read_dir(parts.join("pictures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut pictures = pictures;
    pictures.sort();
    assert_eq!(
        pictures,
        ["depth_0001.png", "depth_0002.png", "depth_0003.png"],
        "the 2 s picture, then those of 3 and 4 s"
    );
    // Each state file's title (its second line) holds its time.
    let times: Vec<f64> = (1..=3)
        .map(|k| {
            let vtk = std::fs::read(parts.join(format!("vtk/state_{k:04}.vtk"))).unwrap();
            let title = vtk.split(|&b| b == b'\n').nth(1).unwrap_or_default();
            let title = String::from_utf8_lossy(title);
            let t = title.trim_start_matches("shallow water at t = ");
            t.trim_end_matches(" s").parse().unwrap()
        })
        .collect();
    for (t, want) in times.iter().zip([2.0, 3.0, 4.0]) {
        assert!((t - want).abs() < 1e-9, "{times:?}");
    }
    std::fs::remove_dir_all(&parts).unwrap();
}

#[test]
fn the_command_line_names_bad_input() {
    let flood = env!("CARGO_BIN_EXE_flood");
    let dir = fresh_dir("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        channel().replace("east = \"open\"", "east = \"sponge\""),
    )
    .unwrap();
    // A terrain whose header announces far more values than the file holds.
    let huge = dir.join("huge");
    std::fs::create_dir_all(&huge).unwrap();
    std::fs::write(
        huge.join("topo.asc"),
        "ncols 100000\nnrows 100000\nxllcorner 0\nyllcorner 0\ncellsize 15\n1 2 3\n",
    )
    .unwrap();
    let cases = [
        (vec!["nowhere".to_string()], "`nowhere`"),
        (vec![bad.display().to_string()], "boundaries.east"),
        (
            vec![
                "malpasset".into(),
                "--data".into(),
                dir.display().to_string(),
            ],
            "topo.asc",
        ),
        (vec!["thacker".into(), "--n".into(), "0".into()], "grid"),
        // Too many cells to count, and more than any memory: errors, not aborts.
        (
            vec!["thacker".into(), "--n".into(), "5000000000".into()],
            "`grid` = 5000000000 x 5000000000 is invalid",
        ),
        (
            vec!["radial".into(), "--n".into(), "100000000".into()],
            "out of host memory",
        ),
        (
            vec!["stoker".into(), "--end-time".into(), "-1".into()],
            "`--end-time` = -1 is invalid",
        ),
        (
            vec![
                "malpasset".into(),
                "--data".into(),
                huge.display().to_string(),
            ],
            "more than the file",
        ),
    ];
    for (args, expected) in cases {
        let out = std::process::Command::new(flood)
            .args(&args)
            .arg("--out")
            .arg(dir.join("out"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            stderr.contains(expected),
            "{args:?}: `{expected}` not in {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    }
    // A domain with no water at all (Thacker's paraboloid on 2 x 2 cells) runs; it was a
    // bogus instability at step 0 when sparse storage was chosen for it.
    let out = std::process::Command::new(flood)
        .args(["thacker", "--n", "2", "--end-time", "0.01", "--quiet"])
        .args(["--backend", "cpu", "--out"])
        .arg(dir.join("dry"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "a dry domain: {stderr}");
    // A checkpoint past the asked end time is refused, not reported as that time reached.
    let past = dir.join("past");
    let stoker = |end: &str, resume: bool| {
        let mut c = std::process::Command::new(flood);
        c.args(["stoker", "--n", "50", "--end-time", end, "--quiet"])
            .args(["--backend", "cpu", "--out"])
            .arg(&past);
        if resume {
            c.arg("--resume").arg(past.join("checkpoint.bin"));
        }
        c.output().unwrap()
    };
    assert!(stoker("0.01", false).status.success());
    let out = stoker("0.005", true);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("past this run's end time"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sparse_run_writes_what_a_dense_one_does() {
    let dense = fresh_dir("dense");
    let sparse = fresh_dir("sparse");
    let parts = fresh_dir("sparse-parts");
    let run = |text: &str, out: &Path, storage| {
        Run::<f64>::new(&Backend::Cpu, scenario(text), stored(out, storage))
            .unwrap()
            .run()
            .unwrap()
    };
    let a = run(&dry_channel(), &dense, Storage::Dense);
    let b = run(&dry_channel(), &sparse, Storage::Sparse);
    assert_eq!((a.steps, a.max_depth), (b.steps, b.max_depth));
    // Half a run, then the rest from its checkpoint, sparse.
    let half = dry_channel()
        .replace("end_time = 4.0", "end_time = 2.0")
        .replace("times = [2.0, 4.0]", "times = [2.0]");
    run(&half, &parts, Storage::Sparse);
    let c = resume::<f64>(&dry_channel(), &parts, Storage::Sparse)
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(a.steps, c.steps);
    for file in [
        "vtk/state_0001.vtk",
        "vtk/state_0002.vtk",
        "pictures/depth_0002.png",
        "max_depth.asc",
        "arrival_time.asc",
        "gauges/near.csv",
        "gauges/far.csv",
    ] {
        let want = std::fs::read(dense.join(file)).unwrap();
        for (how, dir) in [("sparse", &sparse), ("resumed sparse", &parts)] {
            let got = std::fs::read(dir.join(file)).unwrap();
            assert!(
                want == got,
                "{file} of the {how} run differs from the dense run's"
            );
        }
    }
    for dir in [dense, sparse, parts] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}
