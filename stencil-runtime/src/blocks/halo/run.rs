//! Running a planned halo exchange on the CPU (the device runs the generated kernel,
//! `kernels-gen`'s `llvm::halo`, which does the same).

use super::plan::{Mode, Plan, COMPANION, NO_SOURCE, OWN_VALUE};
use crate::team::Team;
use crate::Real;

/// Structured blocks per task.
const BLOCKS_PER_TASK: usize = 16;

/// Entries per task.
const ENTRIES_PER_TASK: usize = 4096;

/// A pointer shared by the tasks of an exchange.
struct SendPtr<T>(*mut T);
// SAFETY: the tasks write disjoint elements (see `on_host`).
unsafe impl<T> Sync for SendPtr<T> {}

/// Fills the halos of `arena` by `plan`, absent values from `companion` where the plan
/// asks (the caller checked it is given then).
pub(super) fn on_host<T: Real>(plan: &Plan, arena: &mut [T], companion: Option<&[T]>) {
    let ops: Vec<(T, T)> = plan
        .ops
        .iter()
        .map(|&(a, b)| (T::from_f64(a), T::from_f64(b)))
        .collect();
    let len = arena.len();
    let slot_len = plan.slot_len;
    let base = SendPtr(arena.as_mut_ptr());
    // Without a companion, the absent value (zero for a companion plan).
    let absent = ops.get(plan.absent_op as usize).map_or(T::zero(), |o| o.1);
    let read_companion = |dst: usize| companion.map_or(absent, |c| c[dst]);
    // Every destination is a halo point (or a point past the domain) named once, every
    // source an interior point: no two tasks write the same element and none reads an
    // element another writes. The caller checked that the arena (and the companion)
    // holds every element the plan names (`Plan::reach`), so no task can fail: a panic
    // inside the team's tasks would not unwind cleanly.
    on_team(&plan.table, plan.stride * BLOCKS_PER_TASK, |_, rows| {
        let base = &base;
        for row in rows.chunks_exact(plan.stride) {
            let own = row[0] as usize * slot_len;
            for t in plan.template.chunks_exact(4) {
                let (dst_off, dir, src_off, near) =
                    (t[0] as usize, t[1] as usize, t[2] as usize, t[3] as usize);
                let dst = own + dst_off;
                let neighbour = row[1 + dir];
                let src = if neighbour >= 0 {
                    Some(neighbour as usize * slot_len + src_off)
                } else if neighbour == -1 && plan.mode == Mode::Clamp {
                    Some(own + near)
                } else {
                    None
                };
                debug_assert!(dst < len && src.is_none_or(|s| s < len));
                // SAFETY: in bounds (checked); disjoint writes (see above).
                unsafe {
                    let v = match (src, plan.mode) {
                        (Some(s), _) => *base.0.add(s),
                        _ if neighbour < -1 => ops[(-2 - neighbour) as usize].1,
                        (None, Mode::Companion) => read_companion(dst),
                        (None, _) => ops[plan.absent_op as usize].1,
                    };
                    *base.0.add(dst) = v;
                }
            }
        }
    });
    let own: Vec<T> = plan.own.iter().map(|&v| T::from_f64(v)).collect();
    on_team(&plan.entries, 3 * ENTRIES_PER_TASK, |c, chunk| {
        let base = &base;
        for (k, e) in chunk.chunks_exact(3).enumerate() {
            let (dst, src, op) = (e[0] as usize, e[1], e[2]);
            debug_assert!(dst < len && (src == NO_SOURCE || (src as usize) < len));
            // SAFETY: in bounds (checked); disjoint writes (see above).
            unsafe {
                let v = match op {
                    OWN_VALUE => own[c * ENTRIES_PER_TASK + k],
                    COMPANION => read_companion(dst),
                    _ => {
                        let (scale, add) = ops[op as usize];
                        if src == NO_SOURCE {
                            add
                        } else {
                            scale * *base.0.add(src as usize) + add
                        }
                    }
                };
                *base.0.add(dst) = v;
            }
        }
    });
    on_team(&plan.weighted, 3 * ENTRIES_PER_TASK, |_, chunk| {
        let base = &base;
        for e in chunk.chunks_exact(3) {
            let (dst, first, count) = (e[0] as usize, e[1] as usize, e[2] as usize);
            let terms = &plan.sources[first..first + count];
            debug_assert!(dst < len && terms.iter().all(|&(s, _)| (s as usize) < len));
            // SAFETY: in bounds (checked); disjoint writes, and every source is a
            // point of a block, never a destination (see above).
            unsafe {
                let mut v = T::zero();
                for &(s, w) in terms {
                    v = v + T::from_f64(w) * *base.0.add(s as usize);
                }
                *base.0.add(dst) = v;
            }
        }
    });
}

/// Runs `work(c, chunk)` for every chunk `c` of `items` (`per` items each, the last
/// maybe fewer) on the CPU team that runs the kernels: an exchange between two launches
/// costs what a launch does, not a wake-up of another pool.
fn on_team<I: Sync>(items: &[I], per: usize, work: impl Fn(usize, &[I]) + Sync) {
    let chunks = items.len().div_ceil(per.max(1));
    if chunks == 0 {
        return;
    }
    Team::global().run(chunks, &|c| {
        let end = ((c + 1) * per).min(items.len());
        work(c, &items[c * per..end]);
    });
}
