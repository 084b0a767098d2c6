//! The row buffers of staged values (`back/rust/staged.rs` in the compiler), kept per
//! thread and reused from row to row: a row takes its thread's buffers, fills and reads
//! them, and gives them back when it ends, so that a launch allocates and clears them once
//! per thread instead of once per row.

use std::cell::Cell;

thread_local! {
    /// The buffers of this thread's last row, or none.
    static POOL: Cell<Vec<Vec<u64>>> = const { Cell::new(Vec::new()) };
}

/// A row's staged buffers, taken from the thread's pool and given back on drop.
pub struct StageBuffers {
    buffers: Vec<Vec<u64>>,
}

impl StageBuffers {
    /// The calling thread's buffers (empty the first time).
    pub fn take() -> StageBuffers {
        StageBuffers {
            buffers: POOL.with(Cell::take),
        }
    }

    /// The start of buffer `index`, with room for `len` values of `T` (a value of at most
    /// 8 bytes: a real, an integer or a boolean). Memory that a buffer gains is zeroed
    /// (a valid value of each of those types), and what a row writes stays for the next.
    /// The pointer stays valid until this `StageBuffers` is dropped, provided each index
    /// is asked for once.
    pub fn buffer<T: Copy>(&mut self, index: usize, len: usize) -> *mut T {
        const {
            assert!(std::mem::size_of::<T>() <= 8 && std::mem::align_of::<T>() <= 8);
        }
        if self.buffers.len() <= index {
            self.buffers.resize_with(index + 1, Vec::new);
        }
        let words = (len * std::mem::size_of::<T>()).div_ceil(8);
        let buffer = &mut self.buffers[index];
        if buffer.len() < words {
            buffer.resize(words, 0);
        }
        buffer.as_mut_ptr() as *mut T
    }
}

impl Drop for StageBuffers {
    fn drop(&mut self) {
        let buffers = std::mem::take(&mut self.buffers);
        POOL.with(|pool| pool.set(buffers));
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
}
