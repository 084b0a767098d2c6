//! Copying a block field's present blocks into a dense field of the same domain, where
//! both live (one strided copy per block on a device, queued without waiting): how a
//! sparse run hands a field to code written for dense fields, such as the live view's
//! downsampling, without a trip through the host.

use super::field::BlockField;
use super::grid::BlockGrid;
use crate::cuda::{Place, RowCopy};
use crate::{Backend, Error, Field, Real};

impl<T: Real> BlockField<T> {
    /// Copies the interior points of every present block into `dense` (a field of the
    /// grid's domain, in the same memory), leaving its other points as they are.
    pub fn copy_into_dense(&self, grid: &BlockGrid, dense: &mut Field<T>) -> Result<(), Error> {
        self.check(grid, "BlockField::copy_into_dense", "field")?;
        let g = *self.geometry();
        if dense.extent() != &g.domain[..g.dims] {
            return Err(Error::InvalidField(format!(
                "BlockField::copy_into_dense: the dense field's extent {:?} is not the grid's domain {:?}",
                dense.extent(),
                &g.domain[..g.dims]
            )));
        }
        let [sy, sz] = g.strides();
        let [dy, dz] = dense.strides();
        // The points of each block inside the domain: its runs of rows.
        let blocks: Vec<(usize, [usize; 3], [usize; 3])> = grid
            .blocks()
            .map(|(slot, info)| {
                let o = g.origin(info.key);
                let size = [0, 1, 2].map(|a| g.block[a].min(g.domain[a] - o[a]));
                (slot, o, size)
            })
            .collect();
        let first = g.interior_offset();
        match (self.host_arena(), dense.is_host()) {
            (Some(arena), true) => {
                let origin = dense.origin();
                let values = dense.as_mut_slice()?;
                for (slot, o, size) in blocks {
                    for k in 0..size[2] {
                        for j in 0..size[1] {
                            let from = slot * g.slot_len() + first + j * sy + k * sz;
                            let to = origin + o[0] + (o[1] + j) * dy + (o[2] + k) * dz;
                            values[to..to + size[0]].copy_from_slice(&arena[from..from + size[0]]);
                        }
                    }
                }
                Ok(())
            }
            (None, false) => {
                let (Some(arena), Some((ordinal, to_ptr, _)), Backend::Cuda(cuda)) =
                    (self.device_arena(), dense.device_args(), self.backend())
                else {
                    return Err(Error::InvalidField(
                        "BlockField::copy_into_dense: the fields live on different devices".into(),
                    ));
                };
                let stream = cuda.stream();
                if stream.device.ordinal != ordinal {
                    return Err(Error::InvalidField(
                        "BlockField::copy_into_dense: the fields live on different devices".into(),
                    ));
                }
                // The copies are ordered with the dense field's other work only on one
                // stream.
                if !dense
                    .device_stream()
                    .is_some_and(|s| std::sync::Arc::ptr_eq(s, stream))
                {
                    return Err(Error::InvalidField(
                        "BlockField::copy_into_dense: the fields were made on different streams of the device: make both on one backend"
                            .into(),
                    ));
                }
                let size_t = std::mem::size_of::<T>();
                for (slot, o, size) in blocks {
                    for k in 0..size[2] {
                        let from = (slot * g.slot_len() + first + k * sz) * size_t;
                        let to = (o[0] + o[1] * dy + (o[2] + k) * dz) * size_t;
                        // SAFETY: the source rows lie in the block's slot of the arena and
                        // the destination rows inside the dense field (same domain, checked
                        // above); both are device memory that outlives the queued copy on
                        // the arena's stream, which the field's later uses follow.
                        unsafe {
                            RowCopy {
                                row_bytes: size[0] * size_t,
                                rows: size[1],
                                src: (Place::Device(arena + from as u64), sy * size_t),
                                dst: (Place::Device(to_ptr + to as u64), dy * size_t),
                            }
                            .queue(stream)?;
                        }
                    }
                }
                Ok(())
            }
            _ => Err(Error::InvalidField(
                "BlockField::copy_into_dense: one field is on the host and the other on a device"
                    .into(),
            )),
        }
    }
}
