//! The `smooth` program: bad options are errors that name them before any work, never a
//! panic or an abort.

use std::process::Command;
use stencil_tests::ranks::stderr_of_failure;

#[test]
fn bad_options_are_named_before_any_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out.vtu");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["--generate", "-4"], "invalid value '-4'"),
        (&["--generate", "2"], "3 to 65535 vertices per side"),
        (&["--generate", "100000000"], "3 to 65535 vertices per side"),
        (
            &["--generate", "10", "--metric-grid", "1"],
            "--metric-grid 1",
        ),
        (
            &["--generate", "10", "--metric-grid", "100000000"],
            "--metric-grid 100000000",
        ),
        (
            &["--generate", "10", "--texture"],
            "give --metric-grid N too",
        ),
        (&["--generate", "10", "--picture", "100000000"], "--picture"),
        (
            &["--generate", "10", "--out", "/proc/x/y.vtu"],
            "cannot create it",
        ),
        (
            &["--generate", "10", "--out", "smoothed.txt"],
            "a `.vtu` file",
        ),
    ];
    for (args, expected) in cases {
        let mut smooth = Command::new(env!("CARGO_BIN_EXE_smooth"));
        if !args.contains(&"--out") {
            smooth.args(["--out", out]);
        }
        let o = smooth
            .args(["--backend", "cpu"])
            .args(args)
            .output()
            .expect("run smooth");
        let stderr = String::from_utf8_lossy(&o.stderr);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !stdout.contains("sweep"),
            "{args:?} did work first: {stdout}"
        );
    }
    // A folder given as the output file.
    let stderr = stderr_of_failure(
        Command::new(env!("CARGO_BIN_EXE_smooth"))
            .args(["--backend", "cpu", "--generate", "10", "--out"])
            .arg(dir.path()),
    );
    assert!(stderr.contains("not a folder"), "{stderr}");
}
