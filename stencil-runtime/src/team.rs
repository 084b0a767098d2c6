//! A team of threads kept hot between CPU launches: the fork-join under every row launch.
//!
//! A kernel on a small grid (a multigrid level of a few thousand points, the cavity's
//! 129 x 129 nodes) takes tens of microseconds. Handing it to rayon's pool from the
//! program's thread costs about as much (the job is injected into the pool, sleeping
//! workers are woken, the caller blocks on a latch), so such launches used to run on one
//! core. The team makes a launch cost about a microsecond: its helper threads spin for a
//! while after each launch waiting for the next, the calling thread works on the launch
//! itself, and tasks are claimed from one atomic counter. Helpers that have waited long
//! (a program writing its output, say) park and are woken by the next launch.
//!
//! One launch runs on the team at a time; a launch from another thread while the team is
//! busy (tests run in parallel, a kernel launched from inside a task) runs on its own
//! thread instead. Which thread runs a task never changes what the task computes.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, OnceLock};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// How long a helper spins for the next launch before it parks.
const SPIN: Duration = Duration::from_micros(300);

/// The work of one launch: `count` tasks, each run once by `run(task)`.
struct Job<'a> {
    run: &'a (dyn Fn(usize) + Sync),
    count: usize,
    /// Tasks finished.
    finished: AtomicUsize,
}

/// State shared by the caller of a launch and the helpers.
struct Shared {
    /// The launch's number in the high 32 bits and the next unclaimed task in the low 32;
    /// a launch is closed (no task can be claimed) once its tasks are all claimed.
    claim: AtomicU64,
    /// The open launch's job (a `*const Job` erased to an address), valid while
    /// `claim` carries its number and for as long as `active` is not 0.
    job: AtomicUsize,
    /// Helpers reading the current job: the caller returns only when none is.
    active: AtomicUsize,
    /// Whether a launch is running (one at a time).
    busy: AtomicBool,
    /// Helpers parked, waiting for an unpark.
    parked: Vec<AtomicBool>,
    /// The helpers' threads (to unpark them).
    threads: OnceLock<Vec<Thread>>,
}

/// The team: `helpers` threads beside the caller.
pub(crate) struct Team {
    shared: Arc<Shared>,
    helpers: usize,
}

thread_local! {
    /// Whether this thread is running a task of the team (then launches run on it).
    static IN_TASK: Cell<bool> = const { Cell::new(false) };
}

const TASK_BITS: u32 = 32;
const TASK_MASK: u64 = (1 << TASK_BITS) - 1;

impl Team {
    /// The process's team: as many threads in all as rayon's pool has (so
    /// `RAYON_NUM_THREADS` sets both).
    pub(crate) fn global() -> &'static Team {
        static TEAM: OnceLock<Team> = OnceLock::new();
        TEAM.get_or_init(|| Team::new(rayon::current_num_threads().saturating_sub(1)))
    }

    fn new(helpers: usize) -> Team {
        let shared = Arc::new(Shared {
            claim: AtomicU64::new(0),
            job: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
            parked: (0..helpers).map(|_| AtomicBool::new(false)).collect(),
            threads: OnceLock::new(),
        });
        let mut threads = Vec::with_capacity(helpers);
        for h in 0..helpers {
            let s = Arc::clone(&shared);
            let spawned = thread::Builder::new()
                .name(format!("stencil-cpu-{}", h + 1))
                .spawn(move || helper(&s, h));
            match spawned {
                Ok(handle) => threads.push(handle.thread().clone()),
                // Without the thread the team is smaller; the work still gets done.
                Err(_) => break,
            }
        }
        let helpers = threads.len();
        let _ = shared.threads.set(threads);
        Team { shared, helpers }
    }

    /// Threads that work on a launch: the helpers and the caller.
    pub(crate) fn threads(&self) -> usize {
        self.helpers + 1
    }

    /// Runs `run(t)` for every task `t` in `0..count`, on the team when it is free (and
    /// on the calling thread alone otherwise). Returns when every task has finished.
    pub(crate) fn run(&self, count: usize, run: &(dyn Fn(usize) + Sync)) {
        let s = &*self.shared;
        let serial = count <= 1
            || self.helpers == 0
            || count as u64 > TASK_MASK
            || IN_TASK.with(Cell::get)
            || s.busy
                .compare_exchange(false, true, SeqCst, SeqCst)
                .is_err();
        if serial {
            (0..count).for_each(run);
            return;
        }
        let job = Job {
            run,
            count,
            finished: AtomicUsize::new(0),
        };
        // Publish the job, then open the launch under a new number.
        s.job.store(&job as *const Job as usize, SeqCst);
        let number = (s.claim.load(SeqCst) >> TASK_BITS) + 1;
        s.claim.store(number << TASK_BITS, SeqCst);
        if let Some(threads) = s.threads.get() {
            for (h, parked) in s.parked.iter().enumerate() {
                if parked.swap(false, SeqCst) {
                    threads[h].unpark();
                }
            }
        }
        IN_TASK.with(|t| t.set(true));
        work(s, &job, number);
        IN_TASK.with(|t| t.set(false));
        // Close the launch (no helper can claim or enter it now), then wait for the
        // tasks claimed by helpers and for every helper that entered to leave.
        s.claim.store((number << TASK_BITS) | TASK_MASK, SeqCst);
        while job.finished.load(SeqCst) < count || s.active.load(SeqCst) != 0 {
            std::hint::spin_loop();
        }
        s.busy.store(false, SeqCst);
    }
}

/// Claims and runs tasks of launch `number` until none is left.
fn work(s: &Shared, job: &Job, number: u64) {
    loop {
        let claim = s.claim.load(SeqCst);
        let task = claim & TASK_MASK;
        if claim >> TASK_BITS != number || task >= job.count as u64 {
            return;
        }
        if s.claim
            .compare_exchange_weak(claim, claim + 1, SeqCst, SeqCst)
            .is_ok()
        {
            (job.run)(task as usize);
            job.finished.fetch_add(1, SeqCst);
        }
    }
}

/// A helper's life: wait for a launch newer than the last one it saw, work on it, repeat;
/// park after spinning for [`SPIN`] with nothing to do.
fn helper(s: &Shared, h: usize) {
    IN_TASK.with(|t| t.set(true));
    let mut seen = 0u64;
    let mut idle_since = Instant::now();
    let mut polls = 0u32;
    loop {
        let claim = s.claim.load(SeqCst);
        let number = claim >> TASK_BITS;
        let open = claim & TASK_MASK != TASK_MASK;
        if number != seen && open {
            seen = number;
            // Enter, then check the launch is still open: the caller closes it before it
            // waits for `active`, so a helper that entered an open launch holds its job
            // alive, and one that finds it closed never touches the job.
            s.active.fetch_add(1, SeqCst);
            if s.claim.load(SeqCst) >> TASK_BITS == number
                && s.claim.load(SeqCst) & TASK_MASK != TASK_MASK
            {
                // SAFETY: the launch is open and this helper is counted in `active`: the
                // caller's `Job` lives until `active` falls to 0.
                let job = unsafe { &*(s.job.load(SeqCst) as *const Job) };
                work(s, job, number);
            }
            s.active.fetch_sub(1, SeqCst);
            idle_since = Instant::now();
            continue;
        }
        polls = polls.wrapping_add(1);
        if !polls.is_multiple_of(64) || idle_since.elapsed() < SPIN {
            std::hint::spin_loop();
            continue;
        }
        // Park: say so, check once more that no launch opened meanwhile, then sleep until
        // a launch unparks this helper (or spuriously: the loop checks again).
        s.parked[h].store(true, SeqCst);
        let claim = s.claim.load(SeqCst);
        if claim >> TASK_BITS == seen || claim & TASK_MASK == TASK_MASK {
            thread::park_timeout(Duration::from_millis(50));
        }
        s.parked[h].store(false, SeqCst);
        idle_since = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_runs_once_whatever_the_launch_size() {
        let team = Team::new(3);
        for count in [0usize, 1, 2, 7, 64, 1000] {
            let hits: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
            team.run(count, &|t| {
                hits[t].fetch_add(1, SeqCst);
            });
            assert!(hits.iter().all(|h| h.load(SeqCst) == 1), "count {count}");
        }
    }

    #[test]
    fn launches_from_several_threads_and_from_tasks_all_finish() {
        let team = Arc::new(Team::new(2));
        let total = AtomicUsize::new(0);
        thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..200 {
                        team.run(10, &|_| {
                            // A launch from inside a task runs on that task's thread.
                            team.run(3, &|_| {
                                total.fetch_add(1, SeqCst);
                            });
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(SeqCst), 4 * 200 * 10 * 3);
    }

    #[test]
    fn helpers_wake_after_parking() {
        let team = Team::new(1);
        thread::sleep(SPIN * 4);
        let count = AtomicUsize::new(0);
        team.run(100, &|_| {
            count.fetch_add(1, SeqCst);
        });
        assert_eq!(count.load(SeqCst), 100);
    }
}
