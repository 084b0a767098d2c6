//! Checkpoints resume bit-for-bit; a checkpoint of another configuration, of the other
//! kind (adaptive) or a damaged one is refused before any work.

use cavity::{Cavity, CavityError, Checkpoint, Config, Until};
use stencil_runtime::Backend;

fn config() -> Config {
    Config {
        re: 400.0,
        n: 33,
        check_every: 10,
        until: Until::Time(100.0),
        ..Config::default()
    }
}

/// Runs `flow` until `steps` steps (a multiple of the check interval) are done.
fn run_to(flow: &mut Cavity, steps: u64) {
    flow.run(|f, _| f.step < steps).expect("run");
    assert_eq!(flow.step, steps);
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn a_resumed_run_is_bit_for_bit_the_uninterrupted_one() {
    let cpu = Backend::Cpu;
    let mut straight = Cavity::new(&cpu, &config()).expect("cavity");
    run_to(&mut straight, 300);

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("checkpoint.bin");
    let mut first = Cavity::new(&cpu, &config()).expect("cavity");
    run_to(&mut first, 150);
    Checkpoint::of(&first)
        .expect("state")
        .write(&path)
        .expect("write");
    drop(first);

    let mut resumed = Cavity::new(&cpu, &config()).expect("cavity");
    Checkpoint::read(&path)
        .expect("read")
        .restore(&mut resumed)
        .expect("restore");
    assert_eq!(resumed.step, 150);
    run_to(&mut resumed, 300);
    assert_eq!(resumed.time.to_bits(), straight.time.to_bits());
    assert_eq!(resumed.dt.to_bits(), straight.dt.to_bits());
    assert!(bits(&resumed.w.interior().unwrap()) == bits(&straight.w.interior().unwrap()));
    assert!(bits(&resumed.psi.interior().unwrap()) == bits(&straight.psi.interior().unwrap()));
}

#[test]
fn checkpoints_of_other_configurations_or_damaged_ones_are_refused() {
    let cpu = Backend::Cpu;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("checkpoint.bin");
    let mut flow = Cavity::new(&cpu, &config()).expect("cavity");
    run_to(&mut flow, 10);
    let saved = Checkpoint::of(&flow).expect("state");
    saved.write(&path).expect("write");

    let other = Config {
        re: 1000.0,
        ..config()
    };
    let e = Checkpoint::read(&path)
        .unwrap()
        .matches(&other)
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("re is 400 there and 1000 here"), "{text}");
    let other = Config { n: 65, ..config() };
    let mut bigger = Cavity::new(&cpu, &other).expect("cavity");
    assert!(matches!(
        saved.restore(&mut bigger),
        Err(CavityError::Checkpoint(_))
    ));
    // Changing when to stop is allowed.
    let later = Config {
        until: Until::Steady,
        tolerance: 1e-3,
        ..config()
    };
    saved.matches(&later).expect("stop criteria may change");
    // The other kind of checkpoint is refused by its format.
    let e = cavity::adaptive::AdaptiveCheckpoint::read(&path).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("has format `stencil cavity checkpoint 1`"),
        "{text}"
    );

    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = Checkpoint::read(&path).unwrap_err().to_string();
    assert!(e.contains("damaged") && e.contains("truncated?"), "{e}");
    std::fs::write(&path, b"not a checkpoint at all").unwrap();
    assert!(Checkpoint::read(&path).is_err());
}
