//! Validation against Ghia, Ghia & Shin (1982) at Re = 100, and grid convergence.

use cavity::{Cavity, Config, Outcome, Profiles, Reference};
use stencil_runtime::Backend;

fn steady_profiles(n: usize) -> Profiles {
    let config = Config {
        re: 100.0,
        n,
        ..Config::default()
    };
    let mut flow = Cavity::new(&Backend::Cpu, &config).expect("cavity");
    let outcome = flow.run(|_, _| true).expect("run");
    assert_eq!(outcome, Outcome::Steady);
    flow.poisson_solve_exactly().expect("final solve");
    Profiles::of(&mut flow).expect("profiles")
}

#[test]
fn re100_matches_ghia_on_129_and_converges_under_refinement() {
    let path = Reference::find(100.0).expect("../shared/data/cavity/ghia1982_re100.csv");
    let ghia = Reference::load(&path).expect("reference");
    let sizes = [33, 65, 129];
    let profiles: Vec<Profiles> = sizes.iter().map(|&n| steady_profiles(n)).collect();
    for (n, p) in sizes.iter().zip(&profiles) {
        let c = ghia.compare(p);
        println!(
            "{n:>4}^2: max |u - u_ghia| = {:.4}, max |v - v_ghia| = {:.4}",
            c.u_error, c.v_error
        );
    }
    // Every reference point within 0.02 of the lid speed on 129^2.
    let fine = ghia.compare(&profiles[2]);
    assert!(
        fine.max_error() < 0.02,
        "129^2 is {:.4} from Ghia et al. (worst point {:?})",
        fine.max_error(),
        fine.worst
    );
    // Refinement converges: at the reference points, the change from 65 to 129 is well
    // below the change from 33 to 65 (second order gives a ratio of 4).
    let points: Vec<(bool, f64)> = ghia
        .u_vertical
        .iter()
        .map(|p| (true, p.0))
        .chain(ghia.v_horizontal.iter().map(|p| (false, p.0)))
        .collect();
    let change = |a: &Profiles, b: &Profiles| {
        points
            .iter()
            .map(|&(vertical, at)| {
                (a.interpolate(vertical, at) - b.interpolate(vertical, at)).abs()
            })
            .fold(0.0, f64::max)
    };
    let (coarse, fine) = (
        change(&profiles[0], &profiles[1]),
        change(&profiles[1], &profiles[2]),
    );
    println!(
        "largest change 33 -> 65: {coarse:.5}, 65 -> 129: {fine:.5}, ratio {:.2}",
        coarse / fine
    );
    assert!(
        coarse / fine > 2.5,
        "changes {coarse:e} then {fine:e}: not converging"
    );
}
