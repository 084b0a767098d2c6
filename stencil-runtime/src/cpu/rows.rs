//! How a launch's points are cut into rows, and the rows run on the team.
//!
//! A dense launch covers the domain `n`; a launch over blocks ([`Over::Blocks`]) covers
//! the listed blocks of a block grid, each block's rows one after another, so that a task
//! works inside one block. A [`Row`] carries global indices (what a kernel sees) and where
//! its points live in the views (a block's slot), so generated code is the same for both.

use crate::team::Team;
use std::sync::atomic::{AtomicU64, Ordering};

/// Points per chunk when a 1D domain is split for parallel work.
pub const CHUNK_1D: usize = 4096;

/// A unit of parallel work: points `i0..i1` of row (j, k), in global indices.
///
/// Point `(i, j, k)` is stored at index `i - origin[0]` of a view's row
/// `(j - origin[1], k - origin[2])`, offset by `shift` elements: for a dense launch the
/// origin and the shift are 0; for a block, the origin is the block's first point and the
/// shift the start of its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// First index on axis 0.
    pub i0: usize,
    /// One past the last index on axis 0.
    pub i1: usize,
    /// Index on axis 1.
    pub j: usize,
    /// Index on axis 2.
    pub k: usize,
    /// The global index of the first point of the storage the row lies in.
    pub origin: [usize; 3],
    /// The element offset of that storage from the views' pointers.
    pub shift: isize,
    /// The launch the row belongs to: a number of its own for each launch cut into rows
    /// ([`for_each_row`], [`reduce_rows`]), 0 for rows cut otherwise.
    pub launch: u64,
}

/// The launches cut into rows so far: each takes the next number ([`Row::launch`]).
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

impl Row {
    /// Points `i0..i1` of row (j, k) of a dense launch (origin and shift 0).
    fn dense(i0: usize, i1: usize, j: usize, k: usize) -> Row {
        Row {
            i0,
            i1,
            j,
            k,
            origin: [0; 3],
            shift: 0,
            launch: 0,
        }
    }

    /// Chunk `c` of a line of `len` points cut into chunks of `size` (the last one
    /// shorter): a dense row along axis 0.
    pub(crate) fn chunk(c: usize, size: usize, len: usize) -> Row {
        Row::dense(c * size, ((c + 1) * size).min(len), 0, 0)
    }
}

/// One block of a launch over blocks: where it lies in the domain and in the views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRun {
    /// The global index of the block's first point.
    pub origin: [usize; 3],
    /// The element offset of the block's interior point (0, 0, 0) from the views' pointers.
    pub shift: isize,
}

/// What a launch covers.
#[derive(Clone, Copy, Debug)]
pub enum Over<'a> {
    /// Every point of the domain.
    Domain,
    /// The points of these blocks of `block` points each that lie inside the domain.
    Blocks {
        /// The blocks' extents (1 on unused axes).
        block: [usize; 3],
        /// The blocks, in the order their rows (and reductions) run.
        runs: &'a [BlockRun],
    },
}

/// How a launch is cut into rows: (number of rows, row number -> Row).
fn rows(n: [usize; 3], over: Over<'_>) -> (usize, impl Fn(usize) -> Row + Sync + '_) {
    let (count, block, runs) = match over {
        Over::Domain => {
            let count = if n[1] * n[2] == 1 {
                n[0].div_ceil(CHUNK_1D)
            } else {
                n[1] * n[2]
            };
            (if n[0] == 0 { 0 } else { count }, None, &[][..])
        }
        Over::Blocks { block, runs } => (runs.len() * block[1] * block[2], Some(block), runs),
    };
    let launch = LAUNCHES.fetch_add(1, Ordering::Relaxed) + 1;
    let row = move |r: usize| match block {
        None if n[1] * n[2] == 1 => Row {
            launch,
            ..Row::chunk(r, CHUNK_1D, n[0])
        },
        None => Row {
            launch,
            ..Row::dense(0, n[0], r % n[1], r / n[1])
        },
        Some(b) => {
            let per_block = b[1] * b[2];
            let run = runs[r / per_block];
            let w = r % per_block;
            let (j, k) = (run.origin[1] + w % b[1], run.origin[2] + w / b[1]);
            let i0 = run.origin[0].min(n[0]);
            // Rows of a block that stick out of the domain are empty.
            let i1 = if j < n[1] && k < n[2] {
                (run.origin[0] + b[0]).min(n[0])
            } else {
                i0
            };
            Row {
                i0,
                i1,
                j,
                k,
                origin: run.origin,
                shift: run.shift,
                launch,
            }
        }
    };
    (count, row)
}

/// The points a launch covers at most (for deciding how to split it).
fn points(n: [usize; 3], over: Over<'_>) -> usize {
    match over {
        Over::Domain => n[0] * n[1] * n[2],
        Over::Blocks { block, runs } => runs.len() * block[0] * block[1] * block[2],
    }
}

/// Launches of fewer points run on the calling thread: even a hot team's fork-join costs
/// more than their work (a multigrid hierarchy's coarsest levels).
const SERIAL_POINTS: usize = 2048;

/// Points per task at least, so that the rows of small grids are grouped.
const TASK_POINTS: usize = 1024;

/// Tasks per thread at most: a few, so that a thread that finishes early takes another.
const TASKS_PER_THREAD: usize = 4;

/// The rows of each task when `points` points, cut into `count` rows, run in parallel
/// (`None`: on the calling thread alone).
pub(super) fn rows_per_task(points: usize, count: usize) -> Option<usize> {
    let threads = Team::global().threads();
    if points < SERIAL_POINTS || count < 2 || threads < 2 {
        return None;
    }
    let tasks = (points / TASK_POINTS).clamp(2, threads * TASKS_PER_THREAD);
    Some(count.div_ceil(tasks))
}

/// Runs `f(r)` for every `r` in `0..count`, in tasks of `per_task` consecutive values on
/// the team.
fn on_team(count: usize, per_task: usize, f: &(dyn Fn(usize) + Sync)) {
    Team::global().run(count.div_ceil(per_task), &|t| {
        (t * per_task..((t + 1) * per_task).min(count)).for_each(f)
    });
}

/// Runs `f` on every row of the launch (domain `n`, covering `over`), in parallel
/// (serially when small).
pub fn for_each_row(n: [usize; 3], over: Over<'_>, f: impl Fn(Row) + Sync + Send) {
    let (count, row) = rows(n, over);
    match rows_per_task(points(n, over), count) {
        None => (0..count).for_each(|r| f(row(r))),
        Some(per_task) => on_team(count, per_task, &|r| f(row(r))),
    }
}

/// Per-row values written by parallel tasks, each row's slot by one task only.
struct Slots<A>(Vec<std::cell::UnsafeCell<A>>);

// SAFETY: every slot is written by exactly one task and read after all tasks finished.
unsafe impl<A: Send> Sync for Slots<A> {}

impl<A> Slots<A> {
    /// Writes slot `r`.
    ///
    /// # Safety
    /// No other thread may access slot `r` meanwhile.
    unsafe fn set(&self, r: usize, value: A) {
        *self.0[r].get() = value;
    }
}

/// Runs `f` on every row of the launch in parallel and combines the per-row results in
/// row order with `combine`, starting from `identity`.
pub fn reduce_rows<A: Copy + Send + Sync>(
    n: [usize; 3],
    over: Over<'_>,
    identity: A,
    combine: impl Fn(A, A) -> A,
    f: impl Fn(Row) -> A + Sync + Send,
) -> A {
    let (count, row) = rows(n, over);
    // Per-row partials combined in row order either way: the result does not depend on
    // the split or on the number of threads.
    match rows_per_task(points(n, over), count) {
        None => (0..count).map(|r| f(row(r))).fold(identity, combine),
        Some(per_task) => {
            let slots = Slots((0..count).map(|_| identity.into()).collect());
            // SAFETY: row `r` is run by one task, which alone writes slot `r`.
            on_team(count, per_task, &|r| unsafe { slots.set(r, f(row(r))) });
            slots
                .0
                .into_iter()
                .map(std::cell::UnsafeCell::into_inner)
                .fold(identity, combine)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_rows_cover_the_blocks_inside_the_domain() {
        let n = [10, 7, 1];
        let runs = [
            BlockRun {
                origin: [8, 4, 0],
                shift: 100,
            },
            BlockRun {
                origin: [0, 0, 0],
                shift: 0,
            },
        ];
        let over = Over::Blocks {
            block: [4, 4, 1],
            runs: &runs,
        };
        let (count, row) = rows(n, over);
        assert_eq!(count, 8);
        let first: Vec<Row> = (0..4).map(&row).collect();
        // The first block's rows are clipped to the domain: 2 points wide, 3 rows tall.
        assert_eq!((first[0].i0, first[0].i1, first[0].j), (8, 10, 4));
        assert_eq!((first[2].i0, first[2].i1, first[2].j), (8, 10, 6));
        assert_eq!(first[3].i0, first[3].i1, "row 7 lies outside the domain");
        assert!(first
            .iter()
            .all(|r| r.shift == 100 && r.origin == [8, 4, 0]));
        let second = row(5);
        assert_eq!((second.i0, second.i1, second.j, second.shift), (0, 4, 1, 0));
    }
}
