//! Launching a kernel's embedded PTX: arguments in the compiler's calling convention
//! (`kernels_gen::llvm`), the launch shape (`shape.rs`), reductions finished on the device
//! (`reduce.rs`), and launches over the blocks of a block grid (`blocks.rs`); what a
//! kernel's code is (`code.rs`).

use crate::cuda::memory::DeviceBuffer;
use crate::cuda::module::function;
use crate::cuda::tune::LaunchShape;
use crate::cuda::Cuda;
use crate::Element;
use crate::{Error, Field, Precision, Real};

mod blocks;
mod code;
mod raw;
mod reduce;
mod shape;
pub use blocks::{block_flags_code, halo_exchange_code, halo_weighted_code, pack_points_code};
pub(crate) use blocks::{
    queue_block_flags, queue_halo_exchange, queue_points, HaloLaunch, PointLaunch, HALO_FIELDS,
};
pub use code::{KernelCode, Ptx, Sass, Staging, Tiles, DEFAULT_SHARED_BYTES};
use raw::{launch_raw, Params};
pub(crate) use reduce::{final_passes_have_sass, load_final_passes};

/// The operation of a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// `Sum<T>`.
    Sum,
    /// `Max<T>`.
    Max,
    /// `Min<T>`.
    Min,
}

/// One launch parameter.
#[derive(Clone, Copy)]
enum Arg {
    /// An 8-byte value (extent, pointer, stride, `f64`, `i64`).
    Wide(u64),
    /// A 4-byte value (`f32`, `bool`).
    Narrow(u32),
    /// The partials buffer of reduction `r`.
    Partials(usize),
}

/// A kernel launch being assembled by generated code: parameters in declaration order,
/// then [`CudaLaunch::run`].
pub struct CudaLaunch<'a> {
    cuda: &'a Cuda,
    code: &'static KernelCode,
    precision: Precision,
    args: Vec<Arg>,
    reductions: Vec<(Reduce, Precision)>,
    /// Whether every field allows the vector entries (16-byte aligned rows).
    aligned: bool,
    /// Whether the sampled grids are read through textures (None before the first grid).
    textured: Option<bool>,
    /// A launch over blocks: the device address of the block records and the tiles along
    /// z per block (`blocks.rs`); `None` for a dense launch.
    block_list: Option<(u64, u64)>,
}

/// Threads per block of a vertex kernel.
pub const VERTEX_BLOCK: u32 = 128;

/// The tiles along z per block that a dense launch passes for its (absent) block list:
/// thread block `c` along z is then tile `c` of block 0 (see the codegen's `blocks.rs`).
const DENSE_TILES_Z: u64 = u32::MAX as u64;

impl<'a> CudaLaunch<'a> {
    /// Starts a launch of `code` at `precision` (the kernel's `T`).
    pub fn new(cuda: &'a Cuda, code: &'static KernelCode, precision: Precision) -> Self {
        CudaLaunch {
            cuda,
            code,
            precision,
            args: Vec::new(),
            reductions: Vec::new(),
            aligned: true,
            textured: None,
            block_list: None,
        }
    }

    /// The PTX this launch runs: the precision's, in its texture variant when the sampled
    /// grids have hardware filtering.
    fn ptx(&self) -> &'static Ptx {
        match (self.textured, &self.code.texture) {
            (Some(true), Some([f32, f64])) => match self.precision {
                Precision::F32 => f32,
                Precision::F64 => f64,
            },
            _ => self.code.ptx(self.precision),
        }
    }

    /// A sampled grid, which must live on this backend's device. All the grids of a launch
    /// must have the same [`crate::Filtering`].
    pub fn sampled<T: Real>(
        &mut self,
        param: &'static str,
        g: &crate::SampledGrid<T>,
    ) -> Result<(), Error> {
        let Some(device) = g.device_args(self.cuda.ordinal()) else {
            return Err(Error::Residency {
                kernel: self.code.name.to_string(),
                field: param.to_string(),
                have: g.location(),
                want: format!(
                    "CUDA device {} ({})",
                    self.cuda.ordinal(),
                    self.cuda.device_name()
                ),
            });
        };
        let textured = g.filtering() == crate::Filtering::Hardware;
        if *self.textured.get_or_insert(textured) != textured {
            return Err(Error::Launch {
                kernel: self.code.name.to_string(),
                cause: format!(
                    "sampled grid `{param}` is filtered differently from the launch's other grids; give them all hardware filtering or none"
                ),
            });
        }
        if textured && self.code.texture.is_none() {
            return Err(Error::Launch {
                kernel: self.code.name.to_string(),
                cause: "the kernel was built without a texture variant".into(),
            });
        }
        self.args.push(Arg::Wide(device.handle));
        self.args.extend(device.extent.map(Arg::Wide));
        for v in device.origin.into_iter().chain(device.inverse_spacing) {
            self.real(v);
        }
        Ok(())
    }

    /// A field parameter, which must live on this backend's device.
    pub fn field<T: Element>(&mut self, param: &'static str, f: &Field<T>) -> Result<(), Error> {
        let wrong = |have: String| Error::Residency {
            kernel: self.code.name.to_string(),
            field: param.to_string(),
            have,
            want: format!(
                "CUDA device {} ({})",
                self.cuda.ordinal(),
                self.cuda.device_name()
            ),
        };
        match f.device_args() {
            Some((ordinal, ptr, strides)) if ordinal == self.cuda.ordinal() => {
                if let Some(s) = too_wide_stride(f.dims(), strides) {
                    return Err(Error::InvalidField(format!(
                        "field `{param}` of kernel `{}` has a stride of {s} elements; CUDA kernels take row and plane strides below 2^32 elements: split the field into smaller ones",
                        self.code.name
                    )));
                }
                // Vector accesses need each row of every field aligned to the vector.
                let v = self.ptx().vector as usize;
                let bytes = (v * std::mem::size_of::<T>()) as u64;
                self.aligned &= ptr % bytes == 0 && strides.iter().all(|s| s % v == 0);
                self.args.push(Arg::Wide(ptr));
                self.args.push(Arg::Wide(strides[0] as u64));
                self.args.push(Arg::Wide(strides[1] as u64));
                Ok(())
            }
            _ => Err(wrong(f.location())),
        }
    }

    /// A `Value<T>` parameter, which must live on this backend's device: the kernel reads
    /// it from there when it starts.
    pub fn held<T: Real>(&mut self, param: &'static str, v: &crate::Value<T>) -> Result<(), Error> {
        match v.device_address() {
            Some((ordinal, ptr)) if ordinal == self.cuda.ordinal() => {
                self.args.push(Arg::Wide(ptr));
                Ok(())
            }
            _ => Err(Error::Residency {
                kernel: self.code.name.to_string(),
                field: param.to_string(),
                have: v.location(),
                want: format!(
                    "CUDA device {} ({})",
                    self.cuda.ordinal(),
                    self.cuda.device_name()
                ),
            }),
        }
    }

    /// A scalar of the kernel's type `T`.
    pub fn real<T: Real>(&mut self, v: T) {
        match T::PRECISION {
            Precision::F32 => self.f32(v.as_f64() as f32),
            Precision::F64 => self.f64(v.as_f64()),
        }
    }

    /// An `f32` scalar.
    pub fn f32(&mut self, v: f32) {
        self.args.push(Arg::Narrow(v.to_bits()));
    }

    /// An `f64` scalar.
    pub fn f64(&mut self, v: f64) {
        self.args.push(Arg::Wide(v.to_bits()));
    }

    /// An `i64` scalar.
    pub fn int(&mut self, v: i64) {
        self.args.push(Arg::Wide(v as u64));
    }

    /// A `bool` scalar.
    pub fn bool(&mut self, v: bool) {
        self.args.push(Arg::Narrow(v as u32));
    }

    /// A vertex kernel's mesh: the set's and the topology's device tables, which must be
    /// on this backend's device.
    pub fn mesh(&mut self, param: &'static str, set: &crate::mesh::VertexSet) -> Result<(), Error> {
        match set.device_tables(self.cuda.ordinal()) {
            Some(tables) => {
                self.args.extend(tables.map(Arg::Wide));
                Ok(())
            }
            None => Err(Error::Residency {
                kernel: self.code.name.to_string(),
                field: param.to_string(),
                have: set.location(),
                want: format!(
                    "CUDA device {} ({})",
                    self.cuda.ordinal(),
                    self.cuda.device_name()
                ),
            }),
        }
    }

    /// A reduction parameter of element precision `p`.
    pub fn reduction(&mut self, op: Reduce, p: Precision) {
        self.args.push(Arg::Partials(self.reductions.len()));
        self.reductions.push((op, p));
    }

    /// Runs the kernel over the domain `n` (extents of axes 0..3, 1 for unused axes) and
    /// returns the reductions' values (exact: `f32` values widen to `f64` exactly).
    ///
    /// The launch is queued on the backend's stream; with reductions it waits for their
    /// values.
    pub fn run(mut self, n: [usize; 3]) -> Result<Vec<f64>, Error> {
        self.cuda.bind()?;
        if let Some(axis) = self.code.line {
            return self.run_lines(n, axis).map(|()| Vec::new());
        }
        if self.code.vertex {
            return self.run_vertices(n[0]);
        }
        if self.reductions_refused_in_capture() {
            return Err(Error::Launch {
                kernel: self.code.name.to_string(),
                cause: "a kernel with reductions cannot be recorded into a CUDA graph (its values are read back, at once or deferred); launch it outside the capture, or on a backend `with_unread_reductions(true)`".into(),
            });
        }
        let (grid, partials) = loop {
            let choice = self.shape(n)?;
            let shape = choice.shape;
            let grid = shape
                .grid(self.code.dims, n)
                .ok_or_else(|| self.too_large(n))?;
            let partials = self.partials(grid)?;
            let at = addresses(&partials);
            let Some(ticket) = choice.ticket else {
                self.launch(n, shape, grid, &at, true)?;
                break (grid, partials);
            };
            // A trial launch, timed. A shape with more threads per block than the kernel's
            // registers allow is dropped and the next one tried. The variant is loaded
            // before the start event, so the time is the kernel's alone.
            let stream = self.cuda.stream();
            let f = function(
                &stream.device,
                self.code.name,
                self.ptx(),
                shape.vector,
                shape.points,
            )?;
            let trials = &stream.device.trials;
            if shape.block.iter().product::<u32>() > f.max_threads()? {
                trials
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .reject(ticket);
                continue;
            }
            ticket.start(stream.raw)?;
            self.launch(n, shape, grid, &at, false)?;
            ticket.stop(stream.raw)?;
            trials
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .finish(ticket);
            break (grid, partials);
        };
        if self.cuda.checked && !self.cuda.is_capturing() {
            self.cuda.synchronize().map_err(|e| self.failed(e))?;
        }
        let blocks = grid.iter().map(|&g| g as usize).product();
        self.values(partials, blocks)
    }

    /// Whether this launch is being recorded into a graph with reductions that would be
    /// read back (neither unread nor kept on the device), which a graph cannot do.
    fn reductions_refused_in_capture(&self) -> bool {
        self.cuda.is_capturing()
            && !self.reductions.is_empty()
            && !self.cuda.unread_reductions
            && self.cuda.kept.is_none()
    }

    /// The reductions of a launch over nothing: their identities, kept or deferred as the
    /// backend asks (one value per reduction, as every launch leaves).
    pub(super) fn over_nothing(&self) -> Result<Vec<f64>, Error> {
        let values: Vec<f64> = self
            .reductions
            .iter()
            .map(|&(op, _)| match op {
                Reduce::Sum => 0.0,
                Reduce::Max => f64::NEG_INFINITY,
                Reduce::Min => f64::INFINITY,
            })
            .collect();
        if self.cuda.unread_reductions {
            return Ok(vec![f64::NAN; values.len()]);
        }
        if let Some(kept) = &self.cuda.kept {
            for (&v, &(_, p)) in values.iter().zip(&self.reductions) {
                let stream = self.cuda.stream();
                let buf = match p {
                    Precision::F32 => {
                        DeviceBuffer::from_slice(stream, &[v as f32], "a kept reduction")?
                    }
                    Precision::F64 => DeviceBuffer::from_slice(stream, &[v], "a kept reduction")?,
                };
                kept.keep(buf, p);
            }
            return Ok(vec![f64::NAN; values.len()]);
        }
        if let Some(queue) = &self.cuda.deferred {
            queue.push_ready(values.clone());
            return Ok(vec![f64::NAN; values.len()]);
        }
        Ok(values)
    }

    /// Runs a vertex kernel over a set of `count` vertices: one thread each, in blocks of
    /// [`VERTEX_BLOCK`] along x.
    fn run_vertices(&mut self, count: usize) -> Result<Vec<f64>, Error> {
        if count == 0 {
            return self.over_nothing();
        }
        let n = [count, 1, 1];
        let blocks =
            u32::try_from(count.div_ceil(VERTEX_BLOCK as usize)).map_err(|_| self.too_large(n))?;
        let grid = [blocks, 1, 1];
        let shape = LaunchShape {
            block: [VERTEX_BLOCK, 1, 1],
            points: 1,
            vector: 1,
        };
        let partials = self.partials(grid)?;
        self.launch(n, shape, grid, &addresses(&partials), true)?;
        if self.cuda.checked && !self.cuda.is_capturing() {
            self.cuda.synchronize().map_err(|e| self.failed(e))?;
        }
        self.values(partials, blocks as usize)
    }

    /// Runs a line kernel: threads along x cover the first axis other than the lines',
    /// along y the second; the scratch holds one value per point of the domain.
    fn run_lines(&mut self, n: [usize; 3], axis: usize) -> Result<(), Error> {
        const LINE_BLOCK: u32 = 64;
        let others: Vec<usize> = (0..3).filter(|&a| a != axis).collect();
        let (n0, n1) = (n[others[0]], n[others[1]]);
        let points: usize = n.iter().product();
        if points == 0 {
            return Ok(());
        }
        let grid = [
            u32::try_from(n0.div_ceil(LINE_BLOCK as usize)).map_err(|_| self.too_large(n))?,
            u32::try_from(n1)
                .ok()
                .filter(|&g| g <= 65535)
                .ok_or_else(|| self.too_large(n))?,
            1,
        ];
        let scratch = DeviceBuffer::new(
            self.cuda.stream(),
            points * elem_bytes(self.precision),
            &format!("the line scratch of `{}`", self.code.name),
        )?;
        self.args.push(Arg::Wide(scratch.ptr));
        let shape = LaunchShape {
            block: [LINE_BLOCK, 1, 1],
            points: 1,
            vector: 1,
        };
        self.launch(n, shape, grid, &[], true)?;
        if self.cuda.checked && !self.cuda.is_capturing() {
            self.cuda.synchronize().map_err(|e| self.failed(e))?;
        }
        Ok(())
    }

    fn too_large(&self, n: [usize; 3]) -> Error {
        Error::Launch {
            kernel: self.code.name.to_string(),
            cause: format!(
                "the domain {n:?} needs more thread blocks than a CUDA grid allows (65535 along y and z); split it"
            ),
        }
    }

    /// Turns an error seen while waiting for this launch into one that names the kernel.
    fn failed(&self, e: Error) -> Error {
        match e {
            Error::Cuda { cause, .. } => Error::Launch {
                kernel: self.code.name.to_string(),
                cause: format!("the kernel failed while running: {cause}"),
            },
            other => other,
        }
    }

    /// Queues one launch, the reductions' partials written at the addresses `partials`
    /// (see [`addresses`]): a programmatic dependent of the kernel before it where the
    /// device allows and `dependent` (false for a launch timed alone).
    fn launch(
        &self,
        n: [usize; 3],
        shape: LaunchShape,
        grid: [u32; 3],
        partials: &[u64],
        dependent: bool,
    ) -> Result<(), Error> {
        let ptx = self.ptx();
        let mut f = function(
            &self.cuda.stream().device,
            self.code.name,
            ptx,
            shape.vector,
            shape.points,
        )?;
        f.waits &= dependent;
        let mut params = Params::default();
        for extent in n {
            params.push(Arg::Wide(extent as u64));
        }
        for a in &self.args {
            params.push(match *a {
                Arg::Partials(r) => Arg::Wide(partials[r]),
                other => other,
            });
        }
        // The block list (none: a dense launch), the last parameters of point kernels.
        if self.code.line.is_none() && !self.code.vertex {
            let (records, tiles_z) = self.block_list.unwrap_or((0, DENSE_TILES_Z));
            params.push(Arg::Wide(records));
            params.push(Arg::Wide(tiles_z));
        }
        // SAFETY: the parameters follow the calling convention of the entry, and every
        // field was checked to cover the domain plus the halo the kernel reads.
        // A staged kernel keeps its staged values in dynamic shared memory.
        let shared = self.code.staging.map_or(0, |s| {
            s.shared_bytes(shape.block, shape.points, self.code.dims, self.precision)
        });
        unsafe {
            launch_raw(
                self.cuda,
                self.code.name,
                f,
                grid,
                shape.block,
                shared,
                &mut params,
            )
        }
    }
}

/// The device addresses of `buffers` (a launch's reductions' partials, written from the
/// start of each).
fn addresses(buffers: &[DeviceBuffer]) -> Vec<u64> {
    buffers.iter().map(|b| b.ptr).collect()
}

/// Bytes of one value of precision `p`.
pub(crate) fn elem_bytes(p: Precision) -> usize {
    match p {
        Precision::F32 => 4,
        Precision::F64 => 8,
    }
}

/// The first stride a field of `dims` dimensions uses (its row stride from 2D on, its
/// plane stride in 3D) that does not fit the 32 bits generated code multiplies indices by.
fn too_wide_stride(dims: usize, strides: [usize; 2]) -> Option<usize> {
    let used = dims.saturating_sub(1).min(2);
    strides[..used]
        .iter()
        .copied()
        .find(|&s| s > u32::MAX as usize)
}

#[cfg(test)]
mod tests {
    use super::too_wide_stride;

    #[test]
    fn strides_beyond_32_bits_are_refused_where_they_are_used() {
        let wide = u32::MAX as usize + 1;
        // A 1D field uses no stride; a 2D one its row stride; a 3D one both.
        assert_eq!(too_wide_stride(1, [wide, wide]), None);
        assert_eq!(too_wide_stride(2, [1000, wide]), None);
        assert_eq!(too_wide_stride(2, [wide, wide]), Some(wide));
        assert_eq!(too_wide_stride(3, [1000, wide]), Some(wide));
        assert_eq!(too_wide_stride(3, [1000, u32::MAX as usize]), None);
    }
}
