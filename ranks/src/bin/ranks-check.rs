//! A distributed check, run under `mpirun -np N` by `tests/mpirun.rs`: every rank builds
//! its part of a partitioned block grid (2D with some blocks absent, and 3D), fills its
//! ghosts from their owners, exchanges halos and applies a Laplacian over its own blocks.
//! The result must equal, bit for bit, what one rank holding every block computes (each
//! rank computes that too), and the all-reduced maximum must equal one rank's. Prints one
//! `ok` line per rank and case. `--fail-on-rank R` makes rank R fail with bad input, to
//! show that every rank stops; `--short-message` makes rank 1 send rank 0 one value fewer
//! than rank 0 expects, which rank 0 must report.

use std::collections::HashMap;
use stencil_ranks::{partition, Op, RankLayout, Ranks};
use stencil_runtime::blocks::{Absent, HaloExchange, HaloRule, Side};
use stencil_runtime::{Backend, BlockField, BlockGrid, BlockKey, BlockList};

#[stencil_runtime::stencils]
mod kernels {
    /// The 5-point Laplacian.
    #[stencil]
    pub fn lap5<T: Real>(u: In<T>, out: Out<T>) {
        out = u[(-1, 0)] + u[(1, 0)] + u[(0, -1)] + u[(0, 1)] - 4.0 * u;
    }

    /// The 7-point Laplacian.
    #[stencil]
    pub fn lap7<T: Real>(u: In<T>, out: Out<T>) {
        out = u[(-1, 0, 0)]
            + u[(1, 0, 0)]
            + u[(0, -1, 0)]
            + u[(0, 1, 0)]
            + u[(0, 0, -1)]
            + u[(0, 0, 1)]
            - 6.0 * u;
    }

    /// The largest `|u|`.
    #[stencil(dims = [2, 3])]
    pub fn largest<T: Real>(u: In<T>, top: Max<T>) {
        top.reduce(u.abs());
    }
}

/// A domain and its blocks: 2D (some blocks absent) and 3D (all present).
struct Case {
    domain: &'static [usize],
    block: &'static [usize],
}

const CASES: [Case; 2] = [
    Case {
        domain: &[200, 150],
        block: &[32, 16],
    },
    Case {
        domain: &[40, 36, 30],
        block: &[16, 8, 8],
    },
];

type Failure = Box<dyn std::error::Error>;

/// The starting field, at any point (halo points too).
fn start(p: [isize; 3]) -> f64 {
    let (x, y, z) = (p[0] as f64, p[1] as f64, p[2] as f64);
    (0.37 * x).sin() * (1.0 + 0.01 * y) + (0.11 * y).cos() + 0.3 * (0.23 * z).sin()
}

/// On a grid holding `local` blocks: the start field, every halo made NaN and the blocks
/// of `unknown` too, then `fill` (the ghosts' messages), the halo exchange, and the
/// Laplacian over `owned`. Returns its values per owned block and its largest magnitude.
fn laplacian(
    case: &Case,
    local: &[BlockKey],
    owned: &[BlockKey],
    unknown: &[BlockKey],
    fill: impl FnOnce(&BlockGrid, &mut BlockField<f64>) -> Result<(), Failure>,
) -> Result<(HashMap<BlockKey, Vec<f64>>, f64), Failure> {
    let cpu = Backend::Cpu;
    let mut grid = BlockGrid::new(&cpu, case.domain, case.block, 1)?;
    grid.update(local, &[])?;
    let mut u = BlockField::from_fn(&grid, start)?;
    u.fill_halos(f64::NAN)?;
    let slot = grid.geometry().slot_len();
    for &k in unknown {
        u.set_slot_values(&grid, k, &vec![f64::NAN; slot])?;
    }
    fill(&grid, &mut u)?;
    let rule = HaloRule::uniform(Side::Mirror(1.0), Absent::Value(0.0));
    HaloExchange::new(&grid, &rule)?.run(&mut u)?;
    let list = BlockList::new(&grid, owned)?;
    let mut out = BlockField::zeroed(&grid)?;
    if case.domain.len() == 2 {
        kernels::lap5::launch_blocks(&cpu, &list, &u, &mut out)?;
    } else {
        kernels::lap7::launch_blocks(&cpu, &list, &u, &mut out)?;
    }
    let top = kernels::largest::launch_blocks(&cpu, &list, &out)?;
    let mut values = HashMap::new();
    for &k in owned {
        values.insert(
            k,
            out.slot_values(&grid, k)?
                .ok_or("an owned block is missing")?,
        );
    }
    Ok((values, top))
}

fn run(ranks: &Ranks) -> Result<String, Failure> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--fail-on-rank") {
        let bad: usize = args
            .get(i + 1)
            .ok_or("--fail-on-rank takes a rank")?
            .parse()?;
        if bad == ranks.rank() {
            return Err(format!("bad input on rank {bad} (asked for by --fail-on-rank)").into());
        }
    }
    if args.iter().any(|a| a == "--short-message") && ranks.size() > 1 {
        let (sends, receives) = match ranks.rank() {
            0 => (vec![], vec![(1, 4)]),
            1 => (vec![(0, vec![1.0, 2.0, 3.0])], vec![]),
            _ => (vec![], vec![]),
        };
        ranks.exchange(&sends, &receives)?;
    }
    // The device a rank takes: MPI's node rank equals Open MPI's local rank where mpirun
    // names one.
    let launched = std::env::var("OMPI_COMM_WORLD_LOCAL_RANK").ok();
    if let Some(local) = launched.and_then(|v| v.parse::<usize>().ok()) {
        if local != ranks.local_rank() {
            return Err(format!(
                "rank {}: node rank {} where mpirun says local rank {local}",
                ranks.rank(),
                ranks.local_rank()
            )
            .into());
        }
    }
    let mut lines = vec![gathered(ranks)?];
    for case in &CASES {
        lines.push(check(ranks, case)?);
    }
    Ok(lines.join("\n"))
}

/// Every rank's values gathered from their owners (entry `k` owned by rank `k % size`),
/// awkward values included: NaN, minus zero, infinities, the largest and smallest.
fn gathered(ranks: &Ranks) -> Result<String, Failure> {
    let specials = [
        f64::NAN,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        -f64::MAX,
        f64::MIN_POSITIVE,
        1.5,
    ];
    let size = ranks.size();
    let want: Vec<f64> = (0..24)
        .map(|k| specials[(k / size.max(1) + k) % specials.len()])
        .collect();
    let owned: Vec<bool> = (0..want.len()).map(|k| k % size == ranks.rank()).collect();
    // Other ranks' entries start as garbage this rank must not keep.
    let mut values: Vec<f64> = (0..want.len())
        .map(|k| if owned[k] { want[k] } else { 12345.0 })
        .collect();
    ranks.gather_owned(&owned, &mut values);
    for (k, (&got, &w)) in values.iter().zip(&want).enumerate() {
        let same = (got.is_nan() && w.is_nan()) || got.to_bits() == w.to_bits();
        if !same {
            return Err(format!("gathered entry {k} is {got:e}, its owner holds {w:e}").into());
        }
    }
    Ok(format!(
        "rank {} of {size}: {} values gathered from their owners, NaN and -0 kept",
        ranks.rank(),
        values.len()
    ))
}

/// One case on this rank against one rank holding everything; a line of what it held.
fn check(ranks: &Ranks, case: &Case) -> Result<String, Failure> {
    // In 2D some blocks absent, as on a mostly dry domain.
    let geometry = *BlockGrid::new(&Backend::Cpu, case.domain, case.block, 1)?.geometry();
    let keys: Vec<BlockKey> = geometry
        .all_keys()
        .filter(|k| case.domain.len() == 3 || (k.index[0] * 7 + k.index[1] * 3) % 5 != 0)
        .collect();
    let (want, want_top) = laplacian(case, &keys, &keys, &[], |_, _| Ok(()))?;

    let owners = partition(&keys, &vec![1.0; keys.len()], ranks.size());
    let layout = RankLayout::new(&geometry, &keys, &owners, ranks.rank());
    let ghosts: Vec<BlockKey> = layout.ghosts().map(|(k, _)| k).collect();
    let (got, mut top) = laplacian(
        case,
        &layout.local_keys(),
        layout.owned(),
        &ghosts,
        |grid, u| {
            layout.fill_ghosts(ranks, grid, &mut [u])?;
            Ok(())
        },
    )?;
    let mut tops = [top];
    ranks.all_reduce(&mut tops, Op::Max);
    top = tops[0];
    for k in layout.owned() {
        let (a, b) = (&got[k], &want[k]);
        if a.iter().zip(b).any(|(x, y)| x.to_bits() != y.to_bits()) {
            return Err(format!("block {k:?} differs from one rank's").into());
        }
    }
    if top != want_top {
        return Err(format!("the all-reduced maximum {top} is not one rank's {want_top}").into());
    }
    // Every block is some rank's: the owned counts add up to all of them.
    let mut count = [layout.owned().len() as f64];
    ranks.all_reduce(&mut count, Op::Sum);
    if count[0] as usize != keys.len() {
        return Err(format!("{} blocks owned in all, of {}", count[0], keys.len()).into());
    }
    Ok(format!(
        "rank {} of {}, {}D: {} blocks, {} ghosts from ranks {:?}, {} values sent per field: ok",
        ranks.rank(),
        ranks.size(),
        case.domain.len(),
        layout.owned().len(),
        ghosts.len(),
        layout.neighbour_ranks(),
        layout.values_sent()
    ))
}

fn main() {
    let ranks = match Ranks::from_env() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    match run(&ranks) {
        Ok(line) => println!("{line}"),
        Err(e) => ranks.abort(&e),
    }
}
