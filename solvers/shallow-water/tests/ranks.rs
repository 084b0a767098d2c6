//! Shallow water over ranks: `sw-ranks-check` (lake at rest, the radial dam break, a
//! periodic channel, a wide periodic channel on blocks cut for the overlap, Malpasset at 15 m,
//! on every block and on blocks that follow the water,
//! a spreading column, a sloshing beach, one block for three ranks) under `mpirun -np 1,
//! 2, 3`, every rank's cells equal to the dense run's bit for bit, flood extents to one
//! rank's, blocks changing rank;
//! the `flood` program under `mpirun -np 2, 3` writes the files one rank writes, byte for
//! byte (the channel on every block, Malpasset on blocks that follow the water and are
//! dealt anew as it spreads), and a Malpasset run resumed over two ranks ends as one
//! rank's uninterrupted run does; a bad input stops every rank; the live view over two
//! ranks shows every rank's blocks.
//! Without the `mpi` feature or `mpirun` it says why it skips; one rank without mpirun is
//! checked always.

use live_view::{ServedRun, Watcher};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use stencil_ranks::mpirun;
use stencil_tests::ranks::{stderr_of_failure, stdout_of_success};

const CHECK: &str = env!("CARGO_BIN_EXE_sw-ranks-check");
const FLOOD: &str = env!("CARGO_BIN_EXE_flood");

/// Every file under `dir`, by path relative to it, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a readable folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("a readable file");
                out.insert(path.strip_prefix(dir).expect("inside").to_path_buf(), bytes);
            }
        }
    }
    out
}

/// The Malpasset data folder (`../shared/data/malpasset`).
fn malpasset() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset")
}

/// The Malpasset data folder, or `None` after printing that the test skips without it.
fn malpasset_or_skip() -> Option<PathBuf> {
    let data = malpasset();
    if data.exists() {
        Some(data)
    } else {
        println!("skipped: no Malpasset data at {}", data.display());
        None
    }
}

/// `flood` with `args` writes, under `mpirun -np 2` and `-np 3`, the files it writes on
/// one rank, byte for byte (but the summary's wall time and the checkpoint's initial
/// volume, a sum over the cells in another order).
fn flood_writes_alike_over_ranks(name: &str, args: &[&std::ffi::OsStr]) {
    let root = std::env::temp_dir().join(format!("flood-ranks-{name}-{}", std::process::id()));
    let out = root.join("out");
    let run = |c: &mut Command| {
        c.args(args)
            .args(["--precision", "f64", "--quiet", "--out"])
            .arg(&out);
        stdout_of_success(c);
    };
    // The same folder each time: checkpoints name the pictures by path.
    run(&mut Command::new(FLOOD));
    let one = files(&out);
    std::fs::remove_dir_all(&out).expect("cleaned");
    for n in [2, 3] {
        let mut c = mpirun().expect("checked by the caller");
        c.args(["-np", &n.to_string(), FLOOD]);
        run(&mut c);
        let split = files(&out);
        std::fs::remove_dir_all(&out).expect("cleaned");
        assert_eq!(
            one.keys().collect::<Vec<_>>(),
            split.keys().collect::<Vec<_>>(),
            "{name}, -np {n}: the same files"
        );
        for (path, bytes) in &one {
            if path.ends_with("summary.txt") || path.ends_with("checkpoint.bin") {
                continue;
            }
            assert!(
                &split[path] == bytes,
                "{name}, -np {n}: {} differs",
                path.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn flood_over_ranks_writes_what_one_rank_writes() {
    let Some(_) = mpirun() else { return };
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/channel.toml");
    flood_writes_alike_over_ranks("channel", &[scenario.as_os_str()]);
}

/// Malpasset on blocks that follow the water, dealt anew over the ranks as it spreads:
/// the pictures, VTK files, gauges and flood extent of one rank.
#[test]
fn flood_over_ranks_following_the_water_writes_what_one_rank_writes() {
    let Some(_) = mpirun() else { return };
    let Some(data) = malpasset_or_skip() else {
        return;
    };
    let args = ["malpasset", "--sparse", "--end-time", "40", "--data"];
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    all.push(data.as_os_str());
    flood_writes_alike_over_ranks("malpasset", &all);
}

/// Malpasset on blocks that follow the water, run over two ranks to 20 s and resumed over
/// two ranks from its checkpoint to 40 s, ends with the flood extents and gauge series of
/// one rank's run straight to 40 s, byte for byte.
#[test]
fn flood_resumed_over_ranks_following_the_water_ends_as_one_rank_does() {
    let Some(_) = mpirun() else { return };
    let Some(data) = malpasset_or_skip() else {
        return;
    };
    let root = std::env::temp_dir().join(format!("flood-resume-ranks-{}", std::process::id()));
    let (whole, parts) = (root.join("whole"), root.join("parts"));
    let flood = |c: &mut Command, end: &str, out: &Path| {
        c.args(["malpasset", "--sparse", "--precision", "f64", "--quiet"])
            .args(["--end-time", end, "--data"])
            .arg(&data)
            .arg("--out")
            .arg(out);
        stdout_of_success(c);
    };
    flood(&mut Command::new(FLOOD), "40", &whole);
    let over_two = || {
        let mut c = mpirun().expect("checked above");
        c.args(["-np", "2", FLOOD]);
        c
    };
    flood(&mut over_two(), "20", &parts);
    let mut resumed = over_two();
    resumed.arg("--resume").arg(parts.join("checkpoint.bin"));
    flood(&mut resumed, "40", &parts);
    let (one, split) = (files(&whole), files(&parts));
    let compared: Vec<&PathBuf> = one
        .keys()
        .filter(|p| {
            p.ends_with("max_depth.asc")
                || p.ends_with("arrival_time.asc")
                || p.starts_with("gauges")
        })
        .collect();
    assert!(
        compared.len() >= 3,
        "extents and gauges written: {compared:?}"
    );
    for path in compared {
        assert!(
            split.get(path) == Some(&one[path]),
            "{} differs after resuming over two ranks",
            path.display()
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_bad_input_stops_every_rank() {
    let Some(mut c) = mpirun() else { return };
    c.args(["-np", "2", FLOOD, "no-such-case.toml"]);
    let stderr = stderr_of_failure(&mut c);
    assert!(stderr.contains("no-such-case.toml"), "{stderr}");
    // A failure on rank 0 alone (its live view cannot take a port already taken) stops
    // the other rank too, which would otherwise wait for rank 0's word at its first look
    // at the progress.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("its address").to_string();
    let mut c = mpirun().expect("checked above");
    c.args(["-np", "2", FLOOD, "radial", "--n", "64", "--end-time", "5"])
        .args(["--sparse", "--quiet", "--backend", "cpu", "--serve", &port]);
    let stderr = stderr_of_failure(&mut c);
    assert!(stderr.contains("error on rank 0 of 2"), "{stderr}");
    assert!(stderr.contains(&port), "the address named: {stderr}");
}

#[test]
fn ranks_equal_the_dense_run_under_mpirun() {
    let Some(_) = mpirun() else { return };
    // Ten cases, and Malpasset twice where its data is.
    let cases = 10 + if malpasset().exists() { 2 } else { 0 };
    for n in [1, 2, 3] {
        let mut c = mpirun().expect("checked above");
        c.args(["-np", &n.to_string(), CHECK]);
        let stdout = stdout_of_success(&mut c);
        let ok = stdout.lines().filter(|l| l.ends_with(": ok")).count();
        assert_eq!(
            ok,
            cases * n,
            "-np {n}: every rank and case reports:\n{stdout}"
        );
        // Blocks changed rank as the water moved (the runs that follow it).
        if n > 1 {
            let taken: usize = stdout
                .lines()
                .filter_map(|l| {
                    // "..., 2 blocks taken over, clocked alike: ok" (or without the
                    // clocked check, "..., 2 blocks taken over: ok").
                    l.split(", ").find_map(|p| {
                        p.strip_suffix(" blocks taken over")
                            .or_else(|| p.strip_suffix(" blocks taken over: ok"))
                    })
                })
                .map(|k| k.parse::<usize>().expect("a count"))
                .sum();
            assert!(taken > 0, "-np {n}: no block changed rank:\n{stdout}");
        }
    }
}

#[test]
fn one_rank_runs_without_mpirun() {
    let stdout = stdout_of_success(&mut Command::new(CHECK));
    assert!(stdout.contains("rank 0 of 1, radial dam break: 25600 of 25600 cells"));
}

/// `flood --serve` over two ranks on `backend` (`c` is mpirun): rank 0 serves, and a
/// frame shows every rank's blocks summed once. The radial dam break's water covers the
/// whole square behind walls, so a frame's mean depth is the run's volume over the
/// square's area at any time: half of it if a rank's blocks were missing, more if a block
/// were counted twice. The page pauses the run (the other rank waits for rank 0's word),
/// switches to the speed, asks for a checkpoint (written by every rank together), and
/// resumes; the run then ends by itself.
fn live_view_over_two_ranks(backend: &str, end_time: &str, mut c: Command) {
    let out = std::env::temp_dir().join(format!("flood-live-{backend}-{}", std::process::id()));
    c.args([
        "-np",
        "2",
        FLOOD,
        "radial",
        "--n",
        "128",
        "--end-time",
        end_time,
    ])
    .args(["--sparse", "--quiet", "--backend", backend, "--out"])
    .arg(&out);
    let mut run = ServedRun::start(c).expect("rank 0 serves");
    let mut page = Watcher::connect(run.address(), [100, 100]).expect("a page connects");
    page.send(&serde_json::json!({ "pause": true }))
        .expect("sent");
    page.wait_for_status(|s| s["paused"] == true)
        .expect("the run pauses");
    // A new view while paused: a frame of 128 cells halved once.
    page.send(&serde_json::json!({ "view": [80, 80] }))
        .expect("sent");
    let (header, layers) = loop {
        let (h, l) = page.next_frame().expect("a frame");
        if (h["width"].as_u64(), h["height"].as_u64()) == (Some(64), Some(64)) {
            break (h, l);
        }
    };
    assert_eq!(header["field"], 0, "{header}");
    let depth = &layers[0];
    assert!(
        depth.iter().all(|&d| d > 0.5),
        "water everywhere, whichever rank holds it"
    );
    let mean_depth = depth.iter().map(|&d| f64::from(d)).sum::<f64>() / depth.len() as f64;

    page.send(&serde_json::json!({ "field": 1 })).expect("sent");
    let (speed, layers) = loop {
        let (h, l) = page.next_frame().expect("a frame");
        if h["field"] == 1 {
            break (h, l);
        }
    };
    assert!(
        layers[0].iter().all(|&s| s.is_finite() && s >= 0.0),
        "{speed}: a speed for every wet cell"
    );
    page.send(&serde_json::json!({ "checkpoint": true }))
        .expect("sent");
    page.wait_for_notice(|n| n.starts_with("checkpoint written"))
        .expect("a checkpoint over both ranks");
    assert!(out.join("checkpoint.bin").exists());
    page.send(&serde_json::json!({ "pause": false }))
        .expect("sent");
    drop(page);
    assert!(
        run.wait().expect("it ends"),
        "the served run over ranks failed"
    );

    let summary = std::fs::read_to_string(out.join("summary.txt")).expect("a summary");
    let volume: f64 = summary
        .split_whitespace()
        .skip_while(|w| *w != "volume")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("the initial volume in the summary");
    let area = 100.0 * 100.0;
    assert!(
        (mean_depth - volume / area).abs() < 1e-4 * volume / area,
        "frame mean depth {mean_depth} against the volume's {}",
        volume / area
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// [`live_view_over_two_ranks`] on the CPU (20 s of the dam break, some seconds of steps:
/// the page pauses the run long before it ends).
#[test]
fn the_live_view_over_ranks_shows_every_ranks_blocks_once() {
    let Some(c) = mpirun() else { return };
    live_view_over_two_ranks("cpu", "20", c);
}

/// [`live_view_over_two_ranks`] with each rank on a device of its own (ghosts through
/// NCCL, frames drawn on the devices); skips, saying why, without two devices.
#[test]
fn the_live_view_over_ranks_on_two_devices_shows_every_ranks_blocks_once() {
    let Some(c) = mpirun() else { return };
    if let Err(why) = stencil_runtime::Cuda::new(1) {
        println!("SKIPPED: this test needs two CUDA devices: {why}");
        return;
    }
    // Steps are fast on devices: a longer run, so that the page's pause finds it going.
    live_view_over_two_ranks("cuda", "200", c);
}
