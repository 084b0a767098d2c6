//! [`BlockFlags`]: per listed block, whether a field is non-zero there and how near its
//! sides, computed where the field lives (one launch on a device, a word per block read
//! back). A solver finds with it which blocks hold anything (water, vorticity) and which
//! neighbours it may reach, without reading the field back.

use super::field::BlockField;
use super::list::BlockList;
use crate::cuda::memory::DeviceBuffer;
use crate::{Backend, Error, Real};
use rayon::prelude::*;

/// Where a block's field is non-zero (NaN counts as non-zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockFlags(u32);

impl BlockFlags {
    /// The flags of a block non-zero everywhere (every bit set).
    pub fn everywhere() -> BlockFlags {
        BlockFlags(u32::MAX >> 25)
    }

    /// Whether any point of the block (inside the domain) is non-zero.
    pub fn any(self) -> bool {
        self.0 & 1 != 0
    }

    /// Whether a non-zero point lies within the margin of the block's `side` (0: low,
    /// 1: high) along `axis`.
    pub fn near(self, axis: usize, side: usize) -> bool {
        self.0 & (1 << (1 + 2 * axis + side)) != 0
    }

    /// The flags of one point at local index `p` of a block of size `block`.
    fn of_point(p: [usize; 3], block: [usize; 3], margin: usize) -> BlockFlags {
        let mut bits = 1;
        for a in 0..3 {
            if p[a] < margin {
                bits |= 1 << (1 + 2 * a);
            }
            if p[a] + margin >= block[a] {
                bits |= 1 << (2 + 2 * a);
            }
        }
        BlockFlags(bits)
    }
}

impl<T: Real> BlockField<T> {
    /// Per block of `list` (in its order), where the field is non-zero: any point, and
    /// any within `margin` points of each side. Waits for the result on a device.
    pub fn flags(&self, list: &BlockList, margin: usize) -> Result<Vec<BlockFlags>, Error> {
        let (grid, generation) = list.layout();
        self.check_layout("block flags", "field", grid, generation)?;
        let g = *self.geometry();
        if let Some(arena) = self.host_arena() {
            let strides = g.strides();
            let first = g.interior_offset();
            return Ok(list
                .runs()
                .par_iter()
                .map(|run| {
                    let mut flags = 0;
                    let extent = [0, 1, 2].map(|a| g.block[a].min(g.domain[a] - run.origin[a]));
                    for k in 0..extent[2] {
                        for j in 0..extent[1] {
                            let row = run.shift as usize + first + j * strides[0] + k * strides[1];
                            for (i, v) in arena[row..row + extent[0]].iter().enumerate() {
                                if *v != T::zero() || v.is_nan() {
                                    flags |= BlockFlags::of_point([i, j, k], g.block, margin).0;
                                }
                            }
                        }
                    }
                    BlockFlags(flags)
                })
                .collect());
        }
        let (Backend::Cuda(cuda), Some(arena), Some(records)) =
            (self.backend(), self.device_arena(), list.device_records())
        else {
            return Err(Error::InvalidField(
                "block flags: the field and the block list live on different backends".into(),
            ));
        };
        let words = DeviceBuffer::zeroed(cuda.stream(), list.len().max(1) * 4, "block flags")?;
        // SAFETY: the list is of the field's layout (checked above): its records name
        // slots of the arena; `words` holds a word per block.
        unsafe {
            crate::cuda::queue_block_flags(
                cuda,
                T::PRECISION,
                &g,
                list.len(),
                records,
                margin,
                arena,
                words.ptr,
            )?;
        }
        let mut out = vec![0u32; list.len()];
        words.download(&mut out)?;
        Ok(out.into_iter().map(BlockFlags).collect())
    }
}
