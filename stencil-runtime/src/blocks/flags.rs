//! [`BlockFlags`]: per listed block, whether a field is non-zero there and how near its
//! sides, computed where the field lives (one launch on a device, a word per block read
//! back). A solver finds with it which blocks hold anything (water, vorticity) and which
//! neighbours it may reach, without reading the field back.

use super::field::BlockField;
use super::geometry::Geometry;
use super::list::BlockList;
use crate::cuda::memory::DeviceBuffer;
use crate::cuda::readback::Readback;
use crate::{Backend, Error, Real};
use rayon::prelude::*;

/// Where a block's field is non-zero (NaN counts as non-zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockFlags(u32);

impl BlockFlags {
    /// The flags as one word, to send to another rank ([`BlockFlags::from_bits`] reads it).
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Flags sent as [`BlockFlags::bits`].
    pub fn from_bits(bits: u32) -> BlockFlags {
        BlockFlags(bits)
    }

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
    /// any within `margin` points of each side. Waits for the result on a device (see
    /// [`FlagsReader`] to read them later instead).
    pub fn flags(&self, list: &BlockList, margin: usize) -> Result<Vec<BlockFlags>, Error> {
        match self.start_flags(list, margin)? {
            Started::Ready(flags) => Ok(flags),
            Started::Queued(words) => {
                let mut out = vec![0u32; list.len()];
                words.download(&mut out)?;
                Ok(out.into_iter().map(BlockFlags).collect())
            }
        }
    }

    /// The flags computed at once on the CPU, or queued into a word per block on a device.
    fn start_flags(&self, list: &BlockList, margin: usize) -> Result<Started, Error> {
        let (grid, generation) = list.layout();
        self.check_layout("block flags", "field", grid, generation)?;
        if !list.covers_whole_blocks() {
            return Err(Error::InvalidField(
                "block flags are per whole block: make the list of whole blocks (BlockList::new), not of regions".into(),
            ));
        }
        // The list's level's sizes (the domain the blocks' extents are cut by).
        let g = *list.geometry();
        if let Some(arena) = self.host_arena() {
            return Ok(Started::Ready(host_flags(&g, list, arena, margin)));
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
        Ok(Started::Queued(words))
    }
}

/// Flags just started: known on the CPU, or computed on a device into a word per block.
enum Started {
    Ready(Vec<BlockFlags>),
    Queued(DeviceBuffer),
}

/// The flags of the blocks of `list` in a host arena, blocks in parallel.
fn host_flags<T: Real>(
    g: &Geometry,
    list: &BlockList,
    arena: &[T],
    margin: usize,
) -> Vec<BlockFlags> {
    let strides = g.strides();
    let first = g.interior_offset();
    list.runs()
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
        .collect()
}

/// Block flags read one step late: [`FlagsReader::start`] queues their computation and
/// their copy to the host and returns at once; [`FlagsReader::finish`] waits for that copy
/// only, not for the work queued after it. A solver that decides its blocks from flags
/// started a step earlier never leaves the device idle for them. The page-locked memory
/// the flags land in is kept from one start to the next.
#[derive(Debug, Default)]
pub struct FlagsReader {
    readback: Option<Readback>,
    pending: Option<Pending>,
}

/// Flags started and not yet finished, for the list of layout `layout`.
#[derive(Debug)]
struct Pending {
    layout: (u64, u64),
    state: PendingState,
}

#[derive(Debug)]
enum PendingState {
    Ready(Vec<BlockFlags>),
    /// `len` words on their way into the read-back memory.
    Copying(usize),
}

impl FlagsReader {
    /// A reader with nothing started.
    pub fn new() -> FlagsReader {
        FlagsReader::default()
    }

    /// Starts the flags of `field` on the blocks of `list` (see [`BlockField::flags`]);
    /// flags started before and not finished are dropped.
    pub fn start<T: Real>(
        &mut self,
        field: &BlockField<T>,
        list: &BlockList,
        margin: usize,
    ) -> Result<(), Error> {
        // A copy still on its way must land before its memory is reused or freed.
        if let Some(Pending {
            state: PendingState::Copying(_),
            ..
        }) = self.pending.take()
        {
            self.readback
                .as_ref()
                .expect("allocated when started")
                .wait()?;
        }
        let state = match field.start_flags(list, margin)? {
            Started::Ready(flags) => PendingState::Ready(flags),
            Started::Queued(words) => {
                let bytes = list.len() * 4;
                if self.readback.as_ref().is_none_or(|r| r.capacity < bytes) {
                    // Room to grow before the next allocation.
                    self.readback = Some(Readback::new(bytes.max(1) * 2)?);
                }
                let readback = self.readback.as_ref().expect("allocated above");
                let stream = &words.stream;
                // SAFETY: nothing reads the memory until `finish` has waited for the copy,
                // and no other copy into it is pending (waited for above).
                unsafe { readback.queue(stream, 0, &words, bytes)? };
                readback.record(stream)?;
                // `words` is freed in stream order, after the copy.
                PendingState::Copying(list.len())
            }
        };
        self.pending = Some(Pending {
            layout: list.layout(),
            state,
        });
        Ok(())
    }

    /// Whether flags were started and not yet finished.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The flags last started, per block of `list` (which must be the list they were
    /// started on, or one of the same layout), waiting for their copy; `None` when none
    /// were started since the last finish.
    pub fn finish(&mut self, list: &BlockList) -> Result<Option<Vec<BlockFlags>>, Error> {
        let Some(pending) = self.pending.take() else {
            return Ok(None);
        };
        if pending.layout != list.layout() {
            return Err(Error::InvalidField(
                "block flags: finished for a list of another layout than they were started on; \
                 finish them before the blocks change"
                    .into(),
            ));
        }
        match pending.state {
            PendingState::Ready(flags) => Ok(Some(flags)),
            PendingState::Copying(len) => {
                let readback = self.readback.as_ref().expect("allocated when started");
                readback.wait()?;
                let words: Vec<u32> = readback.read_slice(len);
                Ok(Some(words.into_iter().map(BlockFlags).collect()))
            }
        }
    }
}
