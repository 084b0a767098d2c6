//! Shallow water over ranks: `sw-ranks-check` (lake at rest, the radial dam break,
//! Malpasset at 15 m) under `mpirun -np 1, 2, 3`, every rank's cells equal to the dense
//! run's bit for bit, and periodic sides over several ranks refused with a typed error.
//! Without the `mpi` feature or `mpirun` it says why it skips; one rank without mpirun is
//! checked always.

use std::process::Command;

const CHECK: &str = env!("CARGO_BIN_EXE_sw-ranks-check");

#[test]
fn ranks_equal_the_dense_run_under_mpirun() {
    if !cfg!(feature = "mpi") {
        println!("SKIPPED: built without the `mpi` feature (cargo test -p shallow-water --features mpi --test ranks)");
        return;
    }
    if !Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        println!("SKIPPED: no mpirun (Debian: apt install openmpi-bin libopenmpi-dev)");
        return;
    }
    for n in [1, 2, 3] {
        let out = Command::new("mpirun")
            .args([
                "--allow-run-as-root",
                "--oversubscribe",
                "-np",
                &n.to_string(),
                CHECK,
            ])
            .output()
            .expect("mpirun runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "-np {n}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ok = stdout.lines().filter(|l| l.ends_with(": ok")).count();
        assert!(
            ok >= 2 * n,
            "-np {n}: every rank and case reports:\n{stdout}"
        );
    }
}

#[test]
fn one_rank_runs_without_mpirun() {
    let out = Command::new(CHECK).output().expect("the check runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("rank 0 of 1, radial dam break: 25600 of 25600 cells"));
}
