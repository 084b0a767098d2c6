//! The Malpasset case reads the terrain of ../shared/data/malpasset and starts: the
//! reservoir holds the README's 49.0 million m^3 to within 4%, and a few steps keep the depth
//! non-negative and the volume (closed by walls) constant.

use shallow_water::{cases, ShallowWater};
use std::path::Path;
use stencil_runtime::Backend;

#[test]
fn malpasset_starts_and_conserves_its_water() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset");
    if !dir.exists() {
        println!("SKIPPED: no Malpasset data at {}", dir.display());
        return;
    }
    let case = cases::malpasset(&dir).unwrap();
    let g = *case.setup.terrain.grid();
    assert_eq!((g.nx, g.ny, g.dx), (1151, 615, 15.0));
    // The reservoir alone: wet cells whose surface is at 100 m.
    let reservoir: f64 = case
        .setup
        .water
        .surface
        .iter()
        .enumerate()
        .filter(|(_, &w)| w == 100.0)
        .map(|(k, w)| (w - case.setup.terrain.cell(k % g.nx, k / g.nx)).max(0.0) * g.cell_area())
        .sum();
    println!("reservoir volume {:.2} million m^3", reservoir / 1e6);
    // 47.65 million m^3 measured: the corners average the reservoir's edge cells with
    // the 150 m wall cells around it, which raises the bed along the shore a little.
    assert!((reservoir / 49.0e6 - 1.0).abs() < 0.04, "{reservoir}");
    let mut flow = ShallowWater::<f64>::new(&Backend::Cpu, &case.setup).unwrap();
    for _ in 0..10 {
        flow.step(f64::INFINITY).unwrap();
    }
    let s = flow.check().unwrap();
    let drift = (s.volume - flow.initial_volume()).abs() / flow.initial_volume();
    println!(
        "after 10 steps (t = {:.3} s): {s:?}, drift {drift:e}",
        flow.time()
    );
    assert!(s.min_depth >= 0.0 && drift < 1e-13, "{s:?} {drift:e}");
}
