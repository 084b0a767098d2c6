//! Launches over the blocks of a block grid: one launch for all listed blocks, each
//! thread block a tile of one block (see the codegen's `blocks.rs` for the entry's side).

use super::{elem_bytes, function, launch_raw, Arg, CudaLaunch, LaunchShape, Params};
use crate::blocks::{BlockField, BlockList};
use crate::cuda::{Cuda, Tiles};
use crate::{Error, Precision, Real};

impl CudaLaunch<'_> {
    /// A field of a block grid, whose arena must live on this backend's device.
    pub fn block_field<T: Real>(
        &mut self,
        param: &'static str,
        f: &BlockField<T>,
    ) -> Result<(), Error> {
        let Some((ptr, strides)) = f.device_args() else {
            return Err(Error::Residency {
                kernel: self.code.name.to_string(),
                field: param.to_string(),
                have: "host memory".into(),
                want: format!(
                    "CUDA device {} ({})",
                    self.cuda.ordinal(),
                    self.cuda.device_name()
                ),
            });
        };
        self.args.push(Arg::Wide(ptr));
        self.args.push(Arg::Wide(strides[0] as u64));
        self.args.push(Arg::Wide(strides[1] as u64));
        Ok(())
    }

    /// Runs the kernel over the blocks of `list` (the domain is the list's level's) and returns
    /// the reductions' values: thread blocks of a shape that tiles a block exactly, as
    /// many along z per block as the block needs, times the number of blocks (one launch
    /// per 65535 thread blocks along z).
    pub fn run_blocks(mut self, list: &BlockList) -> Result<Vec<f64>, Error> {
        self.cuda.bind()?;
        let g = *list.geometry();
        if self.code.line.is_some() || self.code.vertex {
            return Err(self.refused("line and vertex kernels do not run over blocks".into()));
        }
        let Some(records) = list.device_records() else {
            return Err(self.refused("the block list is of a CPU grid".into()));
        };
        if self.reductions_refused_in_capture() {
            return Err(self
                .refused("a kernel with reductions cannot be recorded into a CUDA graph".into()));
        }
        // A list of regions launches tiles over each region as over a block of its extent.
        let extent = list.extent();
        let vector = self.ptx().vector;
        let staged_fits = |s: &LaunchShape| {
            self.code
                .staging
                .is_none_or(|st| st.fits(s.block, s.points, self.code.dims, self.precision))
        };
        let shape = block_shape(
            self.code.dims,
            extent,
            self.code.tiles,
            vector,
            list.len(),
            staged_fits,
        )
        .ok_or_else(|| {
            self.refused(format!(
                "blocks (or block regions) of {:?} points are not a whole number of thread-block tiles of any launch shape; use sizes that are multiples of 32 along x and of 8 along the other axes",
                &extent[..g.dims]
            ))
        })?;
        let tiles = shape
            .grid(self.code.dims, extent)
            .ok_or_else(|| self.refused("the block is too large for one launch".into()))?;
        if list.is_empty() {
            return self.over_nothing();
        }
        // A launch has at most 65535 thread blocks along z: longer lists run in launches of
        // as many blocks as fit, each writing its partials after the last one's, and the
        // reductions are combined once over all of them.
        let per_launch = (MAX_GRID_Z / tiles[2] as usize).max(1);
        let per_block: usize = tiles.iter().map(|&t| t as usize).product();
        let partials = self.partials([(per_block * list.len()) as u32, 1, 1])?;
        let mut start = 0;
        while start < list.len() {
            let count = per_launch.min(list.len() - start);
            let grid = [tiles[0], tiles[1], tiles[2] * count as u32];
            self.block_list = Some((records + (start * RECORD_BYTES) as u64, tiles[2] as u64));
            let at: Vec<u64> = partials
                .iter()
                .zip(&self.reductions)
                .map(|(b, &(_, p))| b.ptr + (start * per_block * elem_bytes(p)) as u64)
                .collect();
            self.launch(g.domain, shape, grid, &at, true)?;
            if self.cuda.checked && !self.cuda.is_capturing() {
                self.cuda.synchronize().map_err(|e| self.failed(e))?;
            }
            start += count;
        }
        self.values(partials, per_block * list.len())
    }

    /// A launch error of this kernel.
    fn refused(&self, cause: String) -> Error {
        Error::Launch {
            kernel: self.code.name.to_string(),
            cause,
        }
    }
}

/// Thread blocks along z a launch may have.
const MAX_GRID_Z: usize = 65535;

/// Bytes per block record (four `i64`).
const RECORD_BYTES: usize = 32;

/// The halo exchange's PTX, f32 and f64 (`kernels-gen`'s `llvm::halo`).
static HALO_PTX: [super::Ptx; 2] = stencil_macros::halo_exchange_ptx!();

/// The halo exchange's PTX, f32 then f64 (for inspection and the PTX tests).
pub fn halo_exchange_code() -> &'static [super::Ptx; 2] {
    &HALO_PTX
}

/// Threads per block of the halo exchange and the block flags.
const RAW_BLOCK: u32 = 256;

/// The fields one halo exchange launch fills at most (`kernels-gen`'s
/// `llvm::halo::MAX_FIELDS`; the PTX test checks the entry's parameter count).
pub(crate) const HALO_FIELDS: usize = 8;

/// What one halo exchange launch fills (see `kernels-gen`'s `llvm::halo` for the
/// meaning of each value; device addresses, 0 for none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HaloLaunch {
    /// Threads of the structured part: structured blocks times template points.
    pub structured: usize,
    /// Points of the template.
    pub points: usize,
    /// The template (`u32`, four per point).
    pub template: u64,
    /// The structured blocks' table (`i32`, `stride` per block).
    pub table: u64,
    /// Values per table row.
    pub stride: usize,
    /// Elements per slot.
    pub slot_len: usize,
    /// How structured blocks fill points of absent neighbours.
    pub mode: u64,
    /// The operation whose `add` those take in the value mode.
    pub absent: u64,
    /// Per-point entries.
    pub count: usize,
    /// The entries (`u32`, three each).
    pub entries: u64,
    /// The operations (`T`, two each).
    pub ops: u64,
    /// The per-entry values (`T`).
    pub own: u64,
    /// The arenas filled (the first `fields`).
    pub arenas: [u64; HALO_FIELDS],
    /// Their companions' arenas (0: none).
    pub companions: [u64; HALO_FIELDS],
    /// How many arenas the launch fills (1 to [`HALO_FIELDS`]).
    pub fields: usize,
}

/// Queues a halo exchange at precision `p`: one launch, thread blocks along y the fields.
///
/// # Safety
/// The template, table and entries must name elements inside every arena (and its
/// companion's), and operations inside the table.
pub(crate) unsafe fn queue_halo_exchange(
    cuda: &Cuda,
    p: Precision,
    h: &HaloLaunch,
) -> Result<(), Error> {
    let values = [
        h.structured as u64,
        h.points as u64,
        h.template,
        h.table,
        h.stride as u64,
        h.slot_len as u64,
        h.mode,
        h.absent,
        h.count as u64,
        h.entries,
        h.ops,
        h.own,
    ]
    .into_iter()
    .chain(h.arenas)
    .chain(h.companions);
    let fill = ArenaFill {
        name: "halo_exchange",
        ptx: &HALO_PTX,
        threads: h.structured + h.count,
        fields: h.fields,
    };
    // SAFETY: the caller vouches for the plan's addresses.
    unsafe { fill.queue(cuda, p, values) }
}

/// The fill of halo points of several weighted sources, f32 and f64 (`kernels-gen`'s
/// `llvm::halo_weighted`).
static WEIGHTED_PTX: [super::Ptx; 2] = stencil_macros::halo_weighted_ptx!();

/// The weighted fill's PTX, f32 then f64 (for inspection and the PTX tests).
pub fn halo_weighted_code() -> &'static [super::Ptx; 2] {
    &WEIGHTED_PTX
}

/// The pack of points into message buffers, f32 and f64 (`kernels-gen`'s `llvm::pack`).
static PACK_PTX: [super::Ptx; 2] = stencil_macros::pack_points_ptx!();

/// The pack's PTX, f32 then f64 (for inspection and the PTX tests).
pub fn pack_points_code() -> &'static [super::Ptx; 2] {
    &PACK_PTX
}

/// A kernel over `count` listed points of the first `fields` of up to [`HALO_FIELDS`]
/// arenas, with its tables: the count, three values, then the arenas are its parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PointLaunch {
    /// The fill of weighted points (`weighted`: three `u32` each, destination, first
    /// term, terms; `sources`: `u32` elements; `weights`: `T`).
    Weighted {
        /// The weighted points' table.
        weighted: u64,
        /// The sources' elements.
        sources: u64,
        /// The weights.
        weights: u64,
    },
    /// The copy of points (`elements`: `u32` arena elements) into `buffer`
    /// (`buffer[f count + e] = arena_f[elements[e]]`), or, with `unpack`, from `buffer`
    /// into the arenas.
    Pack {
        /// The points' elements.
        elements: u64,
        /// The buffer, `fields * count` values.
        buffer: u64,
        /// Whether values go from the buffer into the arenas.
        unpack: bool,
    },
}

/// Queues `launch` over `count` points of the first `fields` of `arenas` at precision
/// `p`: one launch, thread blocks along y the fields.
///
/// # Safety
/// For [`PointLaunch::Weighted`], every destination and source must be an element of
/// every arena, every term inside `sources` and `weights`, and no source a destination;
/// for [`PointLaunch::Pack`], every element must lie inside every arena, and `buffer`
/// hold `fields * count` values.
pub(crate) unsafe fn queue_points(
    cuda: &Cuda,
    p: Precision,
    launch: PointLaunch,
    count: usize,
    arenas: &[u64; HALO_FIELDS],
    fields: usize,
) -> Result<(), Error> {
    let (name, ptx, tables) = match launch {
        PointLaunch::Weighted {
            weighted,
            sources,
            weights,
        } => ("halo_weighted", &WEIGHTED_PTX, [weighted, sources, weights]),
        PointLaunch::Pack {
            elements,
            buffer,
            unpack,
        } => (
            "pack_points",
            &PACK_PTX,
            [elements, buffer, u64::from(unpack)],
        ),
    };
    let values = [count as u64]
        .into_iter()
        .chain(tables)
        .chain(arenas.iter().copied());
    let fill = ArenaFill {
        name,
        ptx,
        threads: count,
        fields,
    };
    // SAFETY: the caller vouches for the tables' addresses and contents.
    unsafe { fill.queue(cuda, p, values) }
}

/// A launch of a kernel built directly in LLVM IR that fills points of the first
/// `fields` of up to [`HALO_FIELDS`] arenas: `threads` threads per field.
struct ArenaFill {
    /// The kernel's entry.
    name: &'static str,
    /// Its PTX, f32 then f64.
    ptx: &'static [super::Ptx; 2],
    /// Threads per field.
    threads: usize,
    /// How many arenas it fills.
    fields: usize,
}

impl ArenaFill {
    /// Queues the launch at precision `p` with the 64-bit parameters `values`, one
    /// thread-block row per field; nothing where there are no threads or fields.
    ///
    /// # Safety
    /// `values` must be what the kernel takes, its addresses valid for what it touches.
    unsafe fn queue(
        &self,
        cuda: &Cuda,
        p: Precision,
        values: impl IntoIterator<Item = u64>,
    ) -> Result<(), Error> {
        if self.threads == 0 || self.fields == 0 {
            return Ok(());
        }
        assert!(
            self.fields <= HALO_FIELDS,
            "at most {HALO_FIELDS} fields a launch"
        );
        let mut params = Params::default();
        for v in values {
            params.push(Arg::Wide(v));
        }
        // SAFETY: the caller vouches for the parameters.
        unsafe {
            queue_raw(
                cuda,
                self.name,
                self.ptx,
                p,
                [self.threads, self.fields],
                &mut params,
            )
        }
    }
}

/// The block flags' PTX, f32 and f64 (`kernels-gen`'s `llvm::block_flags`).
static FLAGS_PTX: [super::Ptx; 2] = stencil_macros::block_flags_ptx!();

/// The block flags' PTX, f32 then f64 (for inspection and the PTX tests).
pub fn block_flags_code() -> &'static [super::Ptx; 2] {
    &FLAGS_PTX
}

/// Queues the block flags of the field at `arena` over the blocks of `records` (see
/// `kernels-gen`'s `llvm::block_flags`), ORed into `flags` (one `u32` per block, zero
/// before).
///
/// # Safety
/// `records` must hold `blocks` records of the field's grid, `flags` `blocks` words.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn queue_block_flags(
    cuda: &Cuda,
    p: Precision,
    g: &crate::blocks::Geometry,
    blocks: usize,
    records: u64,
    margin: usize,
    arena: u64,
    flags: u64,
) -> Result<(), Error> {
    let rows = blocks * g.block[1] * g.block[2];
    if rows == 0 {
        return Ok(());
    }
    let strides = g.strides();
    let mut params = Params::default();
    params.push(Arg::Wide(rows as u64));
    params.push(Arg::Wide(records));
    for v in [
        g.block[0],
        g.block[1],
        g.block[2],
        g.domain[0],
        g.domain[1],
        g.domain[2],
        g.interior_offset(),
        strides[0],
        strides[1],
        margin,
    ] {
        params.push(Arg::Wide(v as u64));
    }
    params.push(Arg::Wide(arena));
    params.push(Arg::Wide(flags));
    // SAFETY: the caller vouches for the records and the words.
    unsafe { queue_raw(cuda, "block_flags", &FLAGS_PTX, p, [rows, 1], &mut params) }
}

/// Queues a kernel built directly in LLVM IR: `threads[0]` threads along x in blocks of
/// [`RAW_BLOCK`], `threads[1]` rows of them along y.
///
/// # Safety
/// `params` must be what the kernel takes, its addresses valid for what it touches.
unsafe fn queue_raw(
    cuda: &Cuda,
    name: &str,
    ptx: &[super::Ptx; 2],
    p: Precision,
    threads: [usize; 2],
    params: &mut Params,
) -> Result<(), Error> {
    cuda.bind()?;
    let ptx = &ptx[match p {
        Precision::F32 => 0,
        Precision::F64 => 1,
    }];
    let f = function(&cuda.stream().device, name, ptx, 1, 1)?;
    let blocks = threads[0].div_ceil(RAW_BLOCK as usize);
    if blocks > (1 << 31) - 1 || threads[1] > 65535 {
        return Err(Error::Launch {
            kernel: name.into(),
            cause: format!("{threads:?} threads are too many for one launch"),
        });
    }
    let grid = [blocks as u32, threads[1] as u32, 1];
    // SAFETY: the caller vouches for the parameters.
    unsafe { launch_raw(cuda, name, f, grid, [RAW_BLOCK, 1, 1], 0, params) }
}

/// The launch shape of a launch over `blocks` blocks of `block` points, for a kernel of
/// `dims` dimensions whose PTX has the entries `tiles`, with vectors of `vector` points
/// (1: none).
///
/// A launch of many thread blocks (at least [`MANY_TILES`] with vectors) reads and
/// writes rows with vectors, as dense launches do, one point along the other axes per
/// thread: [`vector_block_shape`]. Otherwise one point per thread without vectors, whose
/// tile divides `block` on every axis: of the default shape, the search candidates and
/// some small ones, the one with the most threads, at most 256 (heavy kernels' registers
/// allow no more), the first of equals.
///
/// More points per thread were slower on an H100 for sparse grids of few blocks
/// (Malpasset's KP07 kernels over blocks of 32 x 32, tiles of 32 x 32 with 8 points per
/// thread): the face pass took 40 us instead of 10.8 us over 104 blocks, and a 4000 s run
/// at 5 m over up to 1801 blocks 76.7 s instead of 56.5 s. A block launch of few blocks
/// cannot hide the longer serial work of each thread. Over every block of a fully wet
/// 8192^2 domain (32 768 blocks of 64 x 32) the scalar shape made the KP07 face pass 1.43x
/// and the stage update 1.11x slower than the dense launch's vector shape (`ncu`, H100).
pub(crate) fn block_shape(
    dims: usize,
    block: [usize; 3],
    tiles: Tiles,
    vector: u32,
    blocks: usize,
    shared_fits: impl Fn(&LaunchShape) -> bool,
) -> Option<LaunchShape> {
    if let Some(s) = vector_block_shape(dims, block, tiles, vector) {
        let per_block = s.grid(dims, block).map_or(0, |t| t.iter().product::<u32>());
        if per_block as usize * blocks >= MANY_TILES {
            return Some(s);
        }
    }
    let divides = |s: &LaunchShape| (0..3).all(|a| block[a].is_multiple_of(s.block[a] as usize));
    let threads = |s: &LaunchShape| s.block.iter().product::<u32>();
    let shapes = std::iter::once(LaunchShape::default_for(dims))
        .chain(LaunchShape::candidates(dims, Tiles::ONE, 1))
        .chain(SMALL.iter().map(|&b| LaunchShape {
            block: b,
            points: 1,
            vector: 1,
        }));
    let mut best: Option<LaunchShape> = None;
    for s in shapes.filter(|s| s.points == 1 && threads(s) <= 256 && divides(s) && shared_fits(s)) {
        if best.is_none_or(|b| threads(&s) > threads(&b)) {
            best = Some(s);
        }
    }
    best
}

/// Thread blocks from which a launch over blocks uses vectors.
pub(crate) const MANY_TILES: usize = 4096;

/// Threads of a thread block over blocks with vectors: what the tuned dense launches of
/// the KP07 kernels have on an H100 (32 x 4, vectors of 4); the stage update over blocks
/// of 256 x 64 took 3.57 ms with 32 x 8 threads against 2.33 ms dense (8192^2, f32, `ncu`).
const VECTOR_THREADS: usize = 128;

/// A shape with vectors of `vector` points along x and one point along the other axes
/// whose tile divides `block`: as many threads along x as the row has vectors (at most
/// 32, at least 8), then along y (and z) up to [`VECTOR_THREADS`] threads, each a divisor
/// of the block's extent. `None` where the kernel has no vector entry of one point, or
/// no such shape exists.
fn vector_block_shape(
    dims: usize,
    block: [usize; 3],
    tiles: Tiles,
    vector: u32,
) -> Option<LaunchShape> {
    if vector <= 1 || !tiles.has(true, 1) || !block[0].is_multiple_of(vector as usize) {
        return None;
    }
    let rows = block[0] / vector as usize;
    let x = (1..=rows.min(32)).rev().find(|d| rows.is_multiple_of(*d))?;
    if x < 8 {
        return None;
    }
    let mut left = VECTOR_THREADS / x;
    let mut threads = [x as u32, 1, 1];
    for a in 1..dims {
        let d = (1..=block[a].min(left))
            .rev()
            .find(|d| block[a].is_multiple_of(*d))?;
        threads[a] = d as u32;
        left /= d;
    }
    Some(LaunchShape {
        block: threads,
        points: 1,
        vector,
    })
}

/// Shapes for small blocks (16 x 16, 8 x 8 x 8 and the like).
const SMALL: [[u32; 3]; 5] = [[16, 16, 1], [16, 8, 1], [8, 8, 4], [8, 8, 2], [8, 8, 1]];

#[cfg(test)]
mod tests {
    use super::{block_shape, MANY_TILES};
    use crate::cuda::Tiles;

    /// The entries of a tileable 2D or 3D kernel of reals.
    const REAL: Tiles = Tiles {
        scalar: &[1],
        vector: &[1, 2, 4],
    };

    #[test]
    fn shapes_tile_the_block() {
        // Few blocks: the most threads (one point each) whose tile divides the block.
        let few = |dims, b| block_shape(dims, b, REAL, 4, 1, |_| true);
        let s = few(2, [32, 32, 1]).unwrap();
        assert_eq!((s.block, s.points, s.vector), ([32, 8, 1], 1, 1));
        let s = few(2, [16, 16, 1]).unwrap();
        assert_eq!((s.block, s.points), ([16, 16, 1], 1));
        let s = few(2, [64, 16, 1]).unwrap();
        assert_eq!(s.block.iter().product::<u32>(), 256);
        let s = few(3, [8, 8, 8]).unwrap();
        assert_eq!(s.block, [8, 8, 4]);
        assert!(few(2, [12, 12, 1]).is_none());
        // Many blocks: rows in vectors, where the kernel has them.
        let s = block_shape(2, [64, 32, 1], REAL, 4, MANY_TILES, |_| true).unwrap();
        assert_eq!((s.block, s.points, s.vector), ([16, 8, 1], 1, 4));
        let s = block_shape(2, [256, 64, 1], REAL, 4, MANY_TILES, |_| true).unwrap();
        assert_eq!((s.block, s.vector), ([32, 4, 1], 4));
        let s = block_shape(2, [64, 32, 1], REAL, 2, MANY_TILES, |_| true).unwrap();
        assert_eq!((s.block, s.vector), ([32, 4, 1], 2));
        let s = block_shape(3, [32, 8, 8], REAL, 4, MANY_TILES, |_| true).unwrap();
        assert_eq!((s.block, s.vector), ([8, 8, 2], 4));
        // No vector entry, or rows too short for 8 threads of vectors: no vectors.
        let s = block_shape(2, [64, 32, 1], Tiles::ONE, 4, MANY_TILES, |_| true).unwrap();
        assert_eq!(s.vector, 1);
        let s = block_shape(2, [16, 16, 1], REAL, 4, MANY_TILES, |_| true).unwrap();
        assert_eq!(s.vector, 1);
    }
}
