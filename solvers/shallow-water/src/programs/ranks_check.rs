//! Shallow water over ranks, run under `mpirun -np N` by `tests/ranks.rs`: every rank
//! steps its part of each case beside the dense run of the whole domain, with every block
//! present (`SparseShallowWater::over_ranks`) and with the blocks following the water
//! and dealt anew as it moves (`RankBlocks::FollowWater`, whose lines
//! say how many layouts the run went through and how many blocks the rank took over); every step's time step must agree, and the state gathered from all
//! ranks (and cells probed on every rank) must equal the dense run's bit for bit; the all-reduced volume must equal the dense one to 1e-12.
//! A channel periodic along x checks ghosts across the domain's ends. Prints one `ok`
//! line per rank and case. With `--device` every rank runs on the device of its local
//! rank (ghosts through NCCL), beside the dense run on the same device.

use crate::{
    cases, Boundaries, Boundary, Grid, Physics, RankBlocks, Setup, ShallowWater,
    SparseShallowWater, Terrain, Water,
};
use std::sync::Arc;
use stencil_ranks::Ranks;
use stencil_runtime::Backend;

type Failure = Box<dyn std::error::Error>;

fn run(ranks: &Arc<Ranks>, backend: &Backend) -> Result<Vec<String>, Failure> {
    use RankBlocks::{Every, EveryOf, FollowWater};
    let radial = || cases::radial(160).map(|c| c.setup);
    let big = EveryOf([128, 128]);
    let mut runs = vec![
        ("lake at rest", cases::lake_at_rest(96)?.setup, 10, Every),
        ("radial dam break", radial()?, 30, Every),
        // Blocks larger than a rank's share along one axis.
        ("radial dam break, blocks 128 x 128", radial()?, 30, big),
        ("periodic channel", periodic_channel()?, 40, Every),
        // Blocks large enough to be cut into cores and strips for the overlap; the last
        // ones too thin to keep a core.
        (
            "wide channel, blocks cut",
            wide_channel()?,
            12,
            EveryOf([1024, 64]),
        ),
        ("radial dam break, following", radial()?, 30, FollowWater),
        // The water spreads over blocks that start dry: blocks are added and dealt anew.
        (
            "spreading column, following",
            spreading_column()?,
            150,
            FollowWater,
        ),
        (
            "periodic channel, following",
            periodic_channel()?,
            40,
            FollowWater,
        ),
        // The shore runs up and down the beach: the present blocks change with it, and the
        // flood extent must come out as one rank's.
        (
            "sloshing beach, following",
            sloshing_beach()?,
            1500,
            FollowWater,
        ),
        // One block in all: ranks without blocks take part in every collective.
        ("one block, following", one_block()?, 20, FollowWater),
    ];
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/malpasset");
    if data.exists() {
        let malpasset = cases::malpasset(&data)?.setup;
        runs.push(("malpasset 15 m", malpasset.clone(), 10, Every));
        runs.push(("malpasset 15 m, following", malpasset, 40, FollowWater));
    }
    let mut lines = Vec::new();
    for (name, setup, steps, blocks) in runs {
        let follows = blocks == FollowWater;
        let mut dense = ShallowWater::<f64>::new(backend, &setup)?;
        let mut split =
            SparseShallowWater::<f64>::over_ranks(backend, &setup, ranks.clone(), blocks)?;
        // A following run's flood extent is one rank's sparse run's.
        let mut alone = match follows {
            true => Some(SparseShallowWater::<f64>::new(backend, &setup)?),
            false => None,
        };
        for flow in alone.iter_mut().chain([&mut split]) {
            flow.track_flood(0.01)?;
        }
        for step in 0..steps {
            let (a, b) = (dense.step(f64::INFINITY)?, split.step(f64::INFINITY)?);
            if a.to_bits() != b.to_bits() {
                return Err(format!("{name}: step {step} is {b} s over ranks, {a} s dense").into());
            }
            if let Some(alone) = &mut alone {
                alone.step(f64::INFINITY)?;
            }
        }
        if let Some(alone) = &alone {
            let bits = |e: Option<[Vec<f64>; 2]>| {
                e.map(|e| e.map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()))
            };
            if bits(alone.flood_extent()?) != bits(split.flood_extent()?) {
                return Err(
                    format!("{name}: the flood extent over ranks is not one rank's").into(),
                );
            }
        }
        // Every cell, gathered from its owner.
        let (want, got) = (dense.state()?, split.state()?);
        let cells = split.owned_cells();
        for c in 0..want[0].len() {
            for k in 0..3 {
                if want[k][c].to_bits() != got[k][c].to_bits() {
                    return Err(format!(
                        "{name}: field {k} of cell {c} is {} over ranks, {} dense",
                        got[k][c], want[k][c]
                    )
                    .into());
                }
            }
        }
        // A cell probed on every rank gives its owner's values.
        let g = *dense.grid();
        for (i, j) in [(0, 0), (g.nx / 2, g.ny / 2), (g.nx - 1, g.ny - 1)] {
            let bed = dense.cell_bed(i, j)?;
            let (a, b) = (dense.probe_over(i, j, bed)?, split.probe_over(i, j, bed)?);
            if a != b {
                return Err(format!(
                    "{name}: cell ({i}, {j}) probes {b:?} over ranks, {a:?} dense"
                )
                .into());
            }
        }
        let (a, b) = (dense.survey()?.volume, split.survey()?.volume);
        if (a - b).abs() > 1e-12 * a.abs() {
            return Err(format!("{name}: volume {b} over ranks, {a} dense").into());
        }
        // Steps decided where the state lives (the clock): over ranks on devices the
        // speeds are all-reduced by NCCL on the devices, on the CPU by MPI on the hosts
        // (and so for runs following the water, unless `STENCIL_FOLLOW_CLOCKED=1` lets
        // their devices decide). The same steps and cells as the dense run's clock.
        let clocked = if setup.boundaries.steady() {
            let mut dense = ShallowWater::<f64>::new(backend, &setup)?;
            let mut split =
                SparseShallowWater::<f64>::over_ranks(backend, &setup, ranks.clone(), blocks)?;
            dense.advance_steps(steps as u64)?;
            split.advance_steps(steps as u64)?;
            let (a, b) = ((dense.time(), dense.steps()), (split.time(), split.steps()));
            if a.0.to_bits() != b.0.to_bits() || a.1 != b.1 {
                return Err(format!(
                    "{name}: clocked over ranks at {b:?} (time, steps), dense at {a:?}"
                )
                .into());
            }
            let (want, got) = (dense.state()?, split.state()?);
            let same = (0..3).all(|k| {
                want[k]
                    .iter()
                    .zip(&got[k])
                    .all(|(x, y)| x.to_bits() == y.to_bits())
            });
            if !same {
                return Err(
                    format!("{name}: clocked over ranks, a cell differs from dense").into(),
                );
            }
            ", clocked alike"
        } else {
            ""
        };
        let following = if follows {
            format!(
                ", {} layouts, {} blocks taken over",
                split.layout_changes().0 + 1,
                split.blocks_taken_over()
            )
        } else {
            String::new()
        };
        lines.push(format!(
            "rank {} of {}, {name}: {} of {} cells, {steps} steps{following}{clocked}: ok",
            ranks.rank(),
            ranks.size(),
            cells.len(),
            want[0].len()
        ));
    }
    Ok(lines)
}

/// A channel periodic along x, walls along y, with a raised disc of water near the west
/// end. 193 cells: three blocks of 64 and a last one of a single cell, so that the wrap
/// across the ends reaches past the next block (the halo is 2).
fn periodic_channel() -> Result<Setup, Failure> {
    let grid = Grid::new(193, 40, 1.0, 1.0, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |x, _| 0.1 * (x / 10.0).sin())?;
    let water = Water::from_surface(&terrain, |x, y| {
        1.0 + 0.2 * ((((x - 6.0).powi(2) + (y - 20.0).powi(2)) < 30.0) as i32 as f64)
    });
    Ok(channel(terrain, water))
}

/// `water` over `terrain` in a channel periodic along x, walls north and south.
fn channel(terrain: Terrain, water: Water) -> Setup {
    let boundaries = Boundaries {
        west: Boundary::Periodic,
        east: Boundary::Periodic,
        south: Boundary::Wall,
        north: Boundary::Wall,
    };
    Setup::new(terrain, water, boundaries, Physics::default())
}

/// A channel of 2100 x 100 cells periodic along x over a wavy bed, its surface wavy
/// everywhere (walls north and south).
fn wide_channel() -> Result<Setup, Failure> {
    let grid = Grid::new(2100, 100, 1.0, 1.0, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |x, y| 0.1 * (x / 13.0).sin() * (y / 9.0).cos())?;
    let water = Water::from_surface(&terrain, |x, y| {
        1.0 + 0.2 * (x / 7.0).sin() * (y / 5.0).cos()
    });
    Ok(channel(terrain, water))
}

/// A column of water in the south-west of a dry, gently sloping basin of 256 x 192 cells
/// (walls): it spreads over blocks that start dry and absent.
fn spreading_column() -> Result<Setup, Failure> {
    let grid = Grid::new(256, 192, 1.0, 1.0, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |x, y| 0.002 * (x + 0.5 * y))?;
    let water = Water::from_surface(&terrain, |x, y| {
        let inside = (x - 40.0).powi(2) + (y - 40.0).powi(2) < 400.0;
        if inside {
            1.5
        } else {
            f64::NEG_INFINITY
        }
    });
    let walls = Boundaries::all(Boundary::Wall);
    Ok(Setup::new(terrain, water, walls, Physics::default()))
}

/// A basin of 512 x 32 cells whose bed rises from -1 m in the west to 1 m in the east
/// (walls), its shore half way, with a raised surface in the west: the water runs up the
/// beach and back down, so the blocks near the shore change.
fn sloshing_beach() -> Result<Setup, Failure> {
    let grid = Grid::new(512, 32, 1.0, 1.0, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |x, _| -1.0 + 2.0 * x / 512.0)?;
    let water = Water::from_surface(&terrain, |x, _| if x < 100.0 { 0.6 } else { 0.0 });
    let walls = Boundaries::all(Boundary::Wall);
    Ok(Setup::new(terrain, water, walls, Physics::default()))
}

/// A pool of 64 x 32 cells (one block) with a raised disc of water, walls around.
fn one_block() -> Result<Setup, Failure> {
    let grid = Grid::new(64, 32, 1.0, 1.0, 0.0, 0.0)?;
    let terrain = Terrain::from_fn(grid, |x, _| 0.01 * x)?;
    let water = Water::from_surface(&terrain, |x, y| {
        let inside = (x - 20.0).powi(2) + (y - 16.0).powi(2) < 36.0;
        if inside {
            1.2
        } else {
            1.0
        }
    });
    let walls = Boundaries::all(Boundary::Wall);
    Ok(Setup::new(terrain, water, walls, Physics::default()))
}

/// The program: its command line from the process's arguments.
pub fn main() {
    let (ranks, backend) = stencil_ranks::check_program();
    match run(&ranks, &backend) {
        Ok(lines) => println!("{}", lines.join("\n")),
        Err(e) => ranks.abort(&e),
    }
}
