//! Bad input is a clear error before any work; an unstable run stops with the step and the
//! place.

use cavity::{Cavity, CavityError, Config};
use std::process::Command;
use stencil_runtime::Backend;
use stencil_tests::ranks::stderr_of_failure;

fn refused(config: Config, option: &str) {
    match Cavity::new(&Backend::Cpu, &config) {
        Err(CavityError::Config { name, .. }) => assert_eq!(name, option),
        Err(e) => panic!("{option}: wrong error {e}"),
        Ok(_) => panic!("{option}: accepted"),
    }
}

#[test]
fn bad_options_are_refused() {
    let ok = Config::default();
    refused(
        Config {
            re: 0.0,
            ..ok.clone()
        },
        "re",
    );
    refused(
        Config {
            re: -5.0,
            ..ok.clone()
        },
        "re",
    );
    refused(
        Config {
            re: f64::NAN,
            ..ok.clone()
        },
        "re",
    );
    refused(
        Config {
            n: 100,
            ..ok.clone()
        },
        "n",
    );
    refused(Config { n: 5, ..ok.clone() }, "n");
    refused(
        Config {
            tolerance: 0.0,
            ..ok.clone()
        },
        "tolerance",
    );
    refused(
        Config {
            tolerance: 2.0,
            ..ok.clone()
        },
        "tolerance",
    );
    refused(
        Config {
            cfl: 0.0,
            ..ok.clone()
        },
        "cfl",
    );
    refused(
        Config {
            poisson_cycles: 0,
            ..ok.clone()
        },
        "poisson_cycles",
    );
    refused(
        Config {
            check_every: 0,
            ..ok.clone()
        },
        "check_every",
    );
}

#[test]
fn an_unwritable_output_folder_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let e = cavity::prepare_output(&file.join("results")).unwrap_err();
    assert!(
        e.to_string().contains("cannot create the output folder"),
        "{e}"
    );
}

#[test]
fn an_unstable_run_stops_with_the_step_and_the_place() {
    let config = Config {
        re: 100.0,
        n: 33,
        cfl: 3.0,
        check_every: 5,
        ..Config::default()
    };
    let mut flow = Cavity::new(&Backend::Cpu, &config).expect("cavity");
    match flow.run(|_, _| true) {
        Err(CavityError::Unstable { at, .. }) => {
            assert!(at.step > 0 && at.step % 5 == 0);
            assert!(at.i < 33 && at.j < 33);
        }
        other => panic!("expected instability, got {other:?}"),
    }
}

#[test]
fn the_program_names_bad_arguments_before_any_work() {
    let program = env!("CARGO_BIN_EXE_cavity");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let cases: [(&[&str], &str); 12] = [
        (&["--re", "0"], "option `re` = 0 is invalid"),
        (&["--re", "-1"], "option `re` = -1 is invalid"),
        (&["--t-end", "-2"], "option `t_end` = -2 is invalid"),
        // More nodes than any memory holds: an error, not a capacity-overflow panic.
        (&["--n", "1073741825"], "is too large"),
        (&["--n", "100"], "option `n` = 100 is invalid"),
        (&["--tol", "5"], "option `tolerance` = 5 is invalid"),
        (&["--resume"], "reading checkpoint"),
        (&["--adaptive", "--eps", "2"], "option `eps` = 2 is invalid"),
        (
            &["--adaptive", "--n", "33", "--levels", "9"],
            "option `levels` = 9 is invalid",
        ),
        (
            &["--adaptive", "--t-end", "1"],
            "option `t_end` = given is invalid",
        ),
        (
            &["--adaptive", "--checkpoint-every=0"],
            "option `checkpoint_every` = 0",
        ),
        (&["--adaptive", "--resume"], "checkpoint-adaptive.bin"),
    ];
    for (args, expected) in cases {
        let o = Command::new(program)
            .args(args)
            .arg("--out")
            .arg(&out)
            .arg("--backend")
            .arg("cpu")
            .output()
            .expect("run cavity");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // A checkpoint past the asked end time is refused, not reported as that time reached.
    let past = dir.path().join("past");
    let o = Command::new(program)
        .args(["--n", "33", "--t-end", "0.05", "--backend", "cpu", "--out"])
        .arg(&past)
        .output()
        .expect("run cavity");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = stderr_of_failure(
        Command::new(program)
            .args([
                "--n",
                "33",
                "--t-end",
                "0.01",
                "--resume",
                "--backend",
                "cpu",
            ])
            .arg("--out")
            .arg(&past),
    );
    assert!(stderr.contains("past --t-end 0.01"), "{stderr}");
}
