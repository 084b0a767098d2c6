//! Reductions finished on the device: per-thread-block partials, combined by final
//! passes of [`FINAL_BLOCK`] threads until one value is left, then read back, left
//! unread, or queued for a deferred read.

use super::{elem_bytes, launch_raw, Arg, CudaLaunch, KernelCode, Params, Reduce, DENSE_TILES_Z};
use crate::cuda::memory::DeviceBuffer;
use crate::cuda::module::function;
use crate::{Error, Precision};

/// Threads per block of the passes that combine reduction partials.
const FINAL_BLOCK: u32 = 1024;

impl CudaLaunch<'_> {
    /// The reductions' values from their per-block `partials` (`blocks` each): NaN when
    /// left unread, NaN with the values queued for [`Cuda::read_deferred`] when deferred,
    /// else combined on the device and read back (waiting).
    pub(super) fn values(
        &self,
        partials: Vec<DeviceBuffer>,
        blocks: usize,
    ) -> Result<Vec<f64>, Error> {
        let count = partials.len();
        if self.cuda.unread_reductions {
            return Ok(vec![f64::NAN; count]);
        }
        if let Some(kept) = &self.cuda.kept {
            for (&(op, p), buf) in self.reductions.iter().zip(partials) {
                kept.keep(self.combine(op, p, buf, blocks)?, p);
            }
            return Ok(vec![f64::NAN; count]);
        }
        if let Some(queue) = &self.cuda.deferred {
            let mut finals = Vec::with_capacity(count);
            for (&(op, p), buf) in self.reductions.iter().zip(partials) {
                finals.push((self.combine(op, p, buf, blocks)?, p));
            }
            queue.push(&finals)?;
            return Ok(vec![f64::NAN; count]);
        }
        let mut values = Vec::with_capacity(count);
        for (&(op, p), buf) in self.reductions.iter().zip(partials) {
            values.push(self.finish(op, p, buf, blocks)?);
        }
        Ok(values)
    }

    /// One partials buffer per reduction, one element per thread block.
    pub(super) fn partials(&self, grid: [u32; 3]) -> Result<Vec<DeviceBuffer>, Error> {
        let blocks: usize = grid.iter().map(|&g| g as usize).product();
        self.reductions
            .iter()
            .map(|&(_, p)| {
                DeviceBuffer::new(
                    self.cuda.stream(),
                    blocks * elem_bytes(p),
                    &format!("the reduction partials of `{}`", self.code.name),
                )
            })
            .collect()
    }

    /// Combines `blocks` partials of a reduction on the device, in a fixed order, and
    /// returns the value.
    pub(super) fn finish(
        &self,
        op: Reduce,
        p: Precision,
        partials: DeviceBuffer,
        count: usize,
    ) -> Result<f64, Error> {
        let last = self.combine(op, p, partials, count)?;
        let value = match p {
            Precision::F32 => {
                let mut v = [0f32];
                last.download(&mut v).map_err(|e| self.failed(e))?;
                v[0] as f64
            }
            Precision::F64 => {
                let mut v = [0f64];
                last.download(&mut v).map_err(|e| self.failed(e))?;
                v[0]
            }
        };
        Ok(value)
    }

    /// Queues the passes that combine `count` partials of a reduction on the device, in a
    /// fixed order; returns the buffer whose first element will hold the value.
    pub(super) fn combine(
        &self,
        op: Reduce,
        p: Precision,
        partials: DeviceBuffer,
        mut count: usize,
    ) -> Result<DeviceBuffer, Error> {
        let code = final_pass(op);
        let ptx = code.ptx(p);
        let f = function(&self.cuda.stream().device, code.name, ptx, 1, 1)?;
        let mut current = partials;
        while count > 1 {
            let blocks = count.div_ceil(FINAL_BLOCK as usize);
            let next = DeviceBuffer::new(
                self.cuda.stream(),
                blocks * elem_bytes(p),
                &format!("the reduction partials of `{}`", self.code.name),
            )?;
            let mut params = Params::default();
            for v in [
                count as u64,
                1,
                1,
                current.ptr,
                count as u64,
                count as u64,
                next.ptr,
                0, // no block list
                DENSE_TILES_Z,
            ] {
                params.push(Arg::Wide(v));
            }
            // SAFETY: the final-pass kernels take (n0, n1, n2, partials, sy, sz, result, block
            // list, tiles along z), and `current` holds `count` elements, `next` one per block.
            unsafe {
                launch_raw(
                    self.cuda,
                    code.name,
                    f,
                    [blocks as u32, 1, 1],
                    [FINAL_BLOCK, 1, 1],
                    0,
                    &mut params,
                )?
            };
            current = next;
            count = blocks;
        }
        Ok(current)
    }
}

/// Whether the kernels that combine partials carry SASS for `device` (then so, as a rule,
/// does every kernel of the program: the build asked for it), so that nothing need wait for
/// the driver's PTX compiler.
pub(crate) fn final_passes_have_sass(device: &crate::cuda::driver::Device) -> bool {
    crate::cuda::module::uses_sass(device, &final_pass(Reduce::Sum).f32).is_some()
}

/// Loads the kernels that combine partials, in both precisions, on `device` (ahead of the
/// first reduction; errors are left for that reduction to report).
pub(crate) fn load_final_passes(device: &crate::cuda::driver::Device) {
    for op in [Reduce::Sum, Reduce::Max, Reduce::Min] {
        let code = final_pass(op);
        for p in [Precision::F32, Precision::F64] {
            let _ = function(device, code.name, code.ptx(p), 1, 1);
        }
    }
}

/// The kernel that combines partials of a reduction: written in the stencil language.
fn final_pass(op: Reduce) -> &'static KernelCode {
    use crate::cuda::partials::kernels as k;
    match op {
        Reduce::Sum => &k::sum::CODE,
        Reduce::Max => &k::max::CODE,
        Reduce::Min => &k::min::CODE,
    }
}
