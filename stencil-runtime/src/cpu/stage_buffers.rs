//! The row buffers of staged values (`back/rust/staged.rs` in the compiler), kept per
//! thread and reused from row to row: a row takes its thread's buffers, fills and reads
//! them, and gives them back when it ends, so that a launch allocates and clears them once
//! per thread instead of once per row. A row that follows the thread's last one along
//! axis 1 in the same launch may take some of that row's buffers as they are
//! ([`StageBuffers::follows`]): a stage read at row offsets 0 and 1 is computed once per
//! row, not twice.

use super::Row;
use std::cell::Cell;

/// A thread's buffers, and the row whose values they hold.
#[derive(Default)]
struct Pool {
    buffers: Vec<Vec<u64>>,
    holds: Option<Row>,
}

thread_local! {
    /// The buffers of this thread's last row.
    static POOL: Cell<Pool> = Cell::new(Pool::default());
}

/// A row's staged buffers, taken from the thread's pool and given back on drop.
pub struct StageBuffers {
    pool: Pool,
}

impl StageBuffers {
    /// The calling thread's buffers (empty the first time).
    pub fn take() -> StageBuffers {
        StageBuffers {
            pool: POOL.with(Cell::take),
        }
    }

    /// Records that the buffers will hold row `r`'s values, and says whether they held
    /// those of the row before it along axis 1 in the same launch (same stretch, same
    /// plane, same block); then each pair `(to, from)` of `rolls` is swapped, in order, so
    /// that buffer `to` holds what `from` held. The compiler lists a buffer of row offset
    /// `dy` with the same stage's at `dy + 1`, over the same stretch. Rows of no launch
    /// (`launch` 0) follow none.
    pub fn follows(&mut self, r: &Row, rolls: &[(usize, usize)]) -> bool {
        let before = self.pool.holds.replace(*r);
        let buffers = &mut self.pool.buffers;
        let follows = r.launch != 0
            && r.j > 0
            && before == Some(Row { j: r.j - 1, ..*r })
            && rolls.iter().all(|&(to, from)| to.max(from) < buffers.len());
        if follows {
            for &(to, from) in rolls {
                buffers.swap(to, from);
            }
        }
        follows
    }

    /// The start of buffer `index`, with room for `len` values of `T` (a value of at most
    /// 8 bytes: a real, an integer or a boolean). Memory that a buffer gains is zeroed,
    /// and what a row writes stays for the next, whatever kernel that runs: a caller must
    /// write each value before it reads it (the generated code fills a buffer's whole
    /// stretch first, or takes it whole from the row before in the same launch).
    /// The pointer stays valid until this `StageBuffers` is dropped, provided each index
    /// is asked for once.
    pub fn buffer<T: Copy>(&mut self, index: usize, len: usize) -> *mut T {
        const {
            assert!(std::mem::size_of::<T>() <= 8 && std::mem::align_of::<T>() <= 8);
        }
        let buffers = &mut self.pool.buffers;
        if buffers.len() <= index {
            buffers.resize_with(index + 1, Vec::new);
        }
        let words = (len * std::mem::size_of::<T>()).div_ceil(8);
        let buffer = &mut buffers[index];
        if buffer.len() < words {
            buffer.resize(words, 0);
        }
        buffer.as_mut_ptr() as *mut T
    }
}

impl Drop for StageBuffers {
    fn drop(&mut self) {
        let pool = std::mem::take(&mut self.pool);
        POOL.with(|p| p.set(pool));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_gets_its_buffers_back_with_what_it_wrote() {
        let first = {
            let mut b = StageBuffers::take();
            let p = b.buffer::<f64>(1, 10);
            // SAFETY: room for 10 values.
            unsafe { *p.add(9) = 2.5 };
            p as usize
        };
        let mut b = StageBuffers::take();
        let p = b.buffer::<f64>(1, 10);
        assert_eq!(p as usize, first, "the same memory");
        // SAFETY: room for 10 values, written by the last row.
        assert_eq!(unsafe { *p.add(9) }, 2.5);
        // A new buffer and a longer one are zeroed.
        let q = b.buffer::<bool>(3, 100);
        // SAFETY: room for 100 values, zeroed: `false`.
        assert!(!unsafe { *q.add(99) });
        let p = b.buffer::<f64>(1, 1000);
        // SAFETY: room for 1000 values, the new ones zeroed.
        assert_eq!(unsafe { *p.add(999) }, 0.0);
    }

    fn row(launch: u64, j: usize) -> Row {
        Row {
            i0: 0,
            i1: 8,
            j,
            k: 0,
            origin: [0; 3],
            shift: 0,
            launch,
        }
    }

    #[test]
    fn only_the_next_row_of_the_same_launch_takes_the_buffers_before() {
        {
            let mut b = StageBuffers::take();
            b.follows(&row(7, 3), &[]);
            let (low, high) = (b.buffer::<f32>(0, 8), b.buffer::<f32>(1, 8));
            // SAFETY: room for 8 values each.
            unsafe { (*low, *high) = (1.0, 2.0) };
        }
        {
            let mut b = StageBuffers::take();
            assert!(b.follows(&row(7, 4), &[(0, 1)]));
            let low = b.buffer::<f32>(0, 8);
            // SAFETY: room for 8 values; the row before wrote the first of buffer 1.
            assert_eq!(unsafe { *low }, 2.0, "buffer 0 holds what buffer 1 held");
        }
        for (launch, j) in [(7, 6), (8, 6)] {
            let mut b = StageBuffers::take();
            assert!(!b.follows(&row(launch, j), &[(0, 1)]), "{launch} {j}");
        }
        let mut b = StageBuffers::take();
        assert!(!b.follows(&row(0, 1), &[]), "rows of no launch follow none");
        assert!(!b.follows(&row(0, 2), &[]));
    }
}
