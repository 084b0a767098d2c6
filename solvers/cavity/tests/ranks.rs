//! The cavity over ranks: `cavity-ranks-check` under `mpirun -np 1, 2, 3`, every rank's
//! slab equal to the whole grid's rows bit for bit after 24 to 40 RK4 steps (f64 and mixed
//! precision), the checks' time steps equal and their sums equal to rounding, and a run
//! that goes unstable stopped on every rank at the whole grid's step and node; the
//! `cavity` program under `mpirun -np 2, 3` writes the files one rank writes, byte for
//! byte, and resumes from its checkpoint likewise, and serves its live view from rank 0
//! (frames of the whole grid, the run unchanged); a bad request stops every rank. Without
//! the `mpi` feature or `mpirun` it says why it skips; one rank without mpirun is checked
//! always.

use live_view::{ServedRun, Watcher};
use std::path::Path;
use std::process::Command;
use stencil_ranks::mpirun;
use stencil_tests::ranks::{every_rank_ok, ok, stderr_of_failure, stdout_of_success};

const CHECK: &str = env!("CARGO_BIN_EXE_cavity-ranks-check");
const CAVITY: &str = env!("CARGO_BIN_EXE_cavity");

/// Runs `c` (the `cavity` program, maybe under mpirun) on 65 x 65 nodes to `t_end` into
/// `out`, resuming with `resume`; it must succeed.
fn cavity_run(c: &mut Command, out: &Path, t_end: &str, resume: bool) {
    c.args([
        "--n",
        "65",
        "--re",
        "100",
        "--backend",
        "cpu",
        "--t-end",
        t_end,
        "--out",
    ])
    .arg(out);
    if resume {
        c.arg("--resume");
    }
    stdout_of_success(c);
}

/// The files a run leaves whose bytes do not depend on the wall clock.
const SAME_FILES: [&str; 6] = [
    "checkpoint.bin",
    "centreline.csv",
    "cavity.vtk",
    "stream_function.png",
    "vorticity.png",
    "centreline.png",
];

#[test]
fn the_program_over_ranks_writes_what_one_rank_writes() {
    let Some(_) = mpirun() else { return };
    let root = std::env::temp_dir().join(format!("cavity-ranks-{}", std::process::id()));
    let one = root.join("one");
    cavity_run(&mut Command::new(CAVITY), &one, "1.5", false);
    cavity_run(&mut Command::new(CAVITY), &one, "2", true);
    for n in [2, 3] {
        let split = root.join(format!("np{n}"));
        for (t_end, resume) in [("1.5", false), ("2", true)] {
            let mut c = mpirun().expect("checked above");
            c.args(["-np", &n.to_string(), CAVITY]);
            cavity_run(&mut c, &split, t_end, resume);
        }
        for f in SAME_FILES {
            let (a, b) = (std::fs::read(one.join(f)), std::fs::read(split.join(f)));
            assert!(
                a.expect("one rank's file") == b.expect("the ranks' file"),
                "-np {n}: {f} differs"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_bad_request_stops_every_rank() {
    let Some(mut c) = mpirun() else { return };
    c.args(["-np", "2", CAVITY, "--n", "30", "--backend", "cpu"]);
    let stderr = stderr_of_failure(&mut c);
    assert!(stderr.contains("2^k + 1"), "{stderr}");
    // What runs on one rank only is refused over several, on every rank.
    let mut c = mpirun().expect("checked above");
    c.args(["-np", "2", CAVITY, "--adaptive", "--backend", "cpu"]);
    let stderr = stderr_of_failure(&mut c);
    assert!(stderr.contains("without mpirun"), "{stderr}");
    // A failure on rank 0 alone (its live view cannot take a port already taken) stops
    // the other rank too, which would otherwise wait in the run's first collective call.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("its address").to_string();
    let mut c = mpirun().expect("checked above");
    c.args([
        "-np",
        "2",
        CAVITY,
        "--n",
        "33",
        "--backend",
        "cpu",
        "--serve",
        &port,
    ]);
    let stderr = stderr_of_failure(&mut c);
    assert!(stderr.contains("error on rank 0 of 2"), "{stderr}");
}

#[test]
fn ranks_equal_one_rank_bit_for_bit_under_mpirun() {
    every_rank_ok(CHECK, &[], &[2, 3], 3);
}

#[test]
fn one_rank_runs_without_mpirun() {
    assert_eq!(ok(&mut Command::new(CHECK)), 3);
}

#[test]
fn the_live_view_over_ranks_shows_the_whole_grid_and_changes_nothing() {
    let Some(_) = mpirun() else { return };
    let root = std::env::temp_dir().join(format!("cavity-live-ranks-{}", std::process::id()));
    let (plain, served) = (root.join("plain"), root.join("served"));
    let args = [
        "--n",
        "33",
        "--t-end",
        "100",
        // Small time steps keep the run going until the page has connected.
        "--cfl",
        "0.2",
        "--check-every",
        "1",
        "--backend",
        "cpu",
    ];
    let mut c = Command::new(CAVITY);
    c.args(args).arg("--out").arg(&plain);
    stdout_of_success(&mut c);
    let mut c = mpirun().expect("checked above");
    c.args(["-np", "2", CAVITY])
        .args(args)
        .arg("--out")
        .arg(&served);
    let mut run = ServedRun::start(c).expect("rank 0 serves");
    let mut page = Watcher::connect(run.address(), [64, 64]).expect("a page connects");
    let (header, layers) = page.next_frame().expect("a frame");
    // The frame covers the whole grid (33 x 33 nodes, whichever rank holds them).
    let size = (header["width"].as_u64(), header["height"].as_u64());
    assert_eq!(size, (Some(33), Some(33)), "{header}");
    assert!(
        !layers.is_empty() && layers.iter().all(|l| l.len() == 33 * 33),
        "{header}"
    );
    drop(page);
    assert!(run.wait().expect("it ends"), "the served run failed");
    let a = std::fs::read(plain.join("checkpoint.bin")).expect("one rank's checkpoint");
    let b = std::fs::read(served.join("checkpoint.bin")).expect("the ranks' checkpoint");
    assert!(a == b, "the served run over ranks differs from one rank's");
    let _ = std::fs::remove_dir_all(&root);
}
