//! The CPU execution model used by generated code: views and a row scheduler.
//!
//! A kernel's domain is split into rows along axis 0 (for 1D domains, into fixed chunks);
//! groups of rows run in parallel on a team of threads kept hot between launches
//! ([`crate::team`]), and reductions combine per-row partials in row order, so results do
//! not depend on the number of threads.

mod rows;
mod stage_buffers;

pub use rows::{for_each_row, reduce_rows, BlockRun, Over, Row, CHUNK_1D};
pub use stage_buffers::StageBuffers;

use crate::team::Team;
use crate::Real;
use rayon::prelude::*;
use rows::rows_per_task;

/// A read-only view of a field: a pointer to interior point (0,0,0) and element strides.
#[derive(Clone, Copy, Debug)]
pub struct View<T> {
    /// Pointer to the element at interior point (0, 0, 0).
    pub ptr: *const T,
    /// Stride of axis 1 in elements.
    pub sy: isize,
    /// Stride of axis 2 in elements.
    pub sz: isize,
}

/// A writable view of a field.
#[derive(Clone, Copy, Debug)]
pub struct ViewMut<T> {
    /// Pointer to the element at interior point (0, 0, 0).
    pub ptr: *mut T,
    /// Stride of axis 1 in elements.
    pub sy: isize,
    /// Stride of axis 2 in elements.
    pub sz: isize,
}

// SAFETY: views are handed to parallel rows that read shared inputs and write disjoint
// parts of outputs; the launcher guarantees outputs do not alias inputs or each other.
unsafe impl<T: Sync> Send for View<T> {}
unsafe impl<T: Sync> Sync for View<T> {}
unsafe impl<T: Send> Send for ViewMut<T> {}
unsafe impl<T: Send> Sync for ViewMut<T> {}

impl<T> View<T> {
    /// Pointer to point (0, j, k).
    ///
    /// # Safety
    /// (0, j, k) must lie within the field's allocation (interior or halo).
    #[inline(always)]
    pub unsafe fn row(self, j: isize, k: isize) -> *const T {
        self.row_at(0, j, k)
    }

    /// Pointer to point (0, j, k) of the storage `shift` elements from the view's pointer
    /// (a block's slot; see [`Row`]).
    ///
    /// # Safety
    /// That point must lie within the field's allocation.
    #[inline(always)]
    pub unsafe fn row_at(self, shift: isize, j: isize, k: isize) -> *const T {
        self.ptr.offset(shift + j * self.sy + k * self.sz)
    }
}

impl<T> ViewMut<T> {
    /// The same points, read-only (whose pointer arithmetic the writable view shares).
    #[inline(always)]
    fn read_only(self) -> View<T> {
        View {
            ptr: self.ptr,
            sy: self.sy,
            sz: self.sz,
        }
    }

    /// Pointer to point (0, j, k), as [`View::row`].
    ///
    /// # Safety
    /// As [`View::row`].
    #[inline(always)]
    pub unsafe fn row(self, j: isize, k: isize) -> *mut T {
        self.read_only().row(j, k).cast_mut()
    }

    /// Pointer to point (0, j, k) of a block's slot, as [`View::row_at`].
    ///
    /// # Safety
    /// As [`View::row_at`].
    #[inline(always)]
    pub unsafe fn row_at(self, shift: isize, j: isize, k: isize) -> *mut T {
        self.read_only().row_at(shift, j, k).cast_mut()
    }
}

/// Whether generated kernels run their AVX copies (8 f32 or 4 f64 lanes per instruction,
/// where x86-64's baseline SSE2 has 4 and 2, and fused multiply-adds): where the CPU has
/// AVX and FMA, unless the environment variable `STENCIL_CPU_AVX` is `0` (to compare),
/// and not inside [`on_plain_rows`] on this thread. Decided once per process otherwise.
///
/// On x86-64 the other copy is the plain one: each row one loop of the general code,
/// without the copies of the middle points that decide the edge and parity tests (a
/// CPU without AVX and FMA is rare, and one copy of a kernel's rows is cheaper to build).
/// Both copies compute every point alike, bit for bit.
pub fn wide_vectors() -> bool {
    static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let wide = *WIDE.get_or_init(|| {
        let allowed = std::env::var("STENCIL_CPU_AVX").map_or(true, |v| v.trim() != "0");
        #[cfg(target_arch = "x86_64")]
        let present = std::arch::is_x86_feature_detected!("avx")
            && std::arch::is_x86_feature_detected!("fma");
        #[cfg(not(target_arch = "x86_64"))]
        let present = false;
        allowed && present
    });
    wide && !PLAIN_ROWS_HERE.with(std::cell::Cell::get)
}

thread_local! {
    /// Whether launches from this thread run the plain copy ([`on_plain_rows`]).
    static PLAIN_ROWS_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` with the kernels it launches from this thread on their plain copies, not
/// their AVX copies ([`wide_vectors`]): to compare the two, as the conformance tests do.
/// Other threads' launches are not affected.
pub fn on_plain_rows<R>(work: impl FnOnce() -> R) -> R {
    /// Puts the thread's choice back, also when `work` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            PLAIN_ROWS_HERE.with(|p| p.set(self.0));
        }
    }
    let _restore = Restore(PLAIN_ROWS_HERE.with(|p| p.replace(true)));
    work()
}

/// `value` as `B`, which is its own type written another way: a generated `cpu::<T>`
/// hands its views and scalars of `T` to the kernel's ordinary function of `T`'s
/// precision (`cpu_f32::cpu` or `cpu_f64::cpu`, compiled once in the crate that defines
/// the kernel, where a generic body would be compiled again in every crate that launches
/// it) and gets its reductions back through this.
///
/// # Panics
/// If `A` is not `B` (a generated kernel never asks that).
#[inline(always)]
pub fn same_type<A: 'static, B: 'static>(value: A) -> B {
    assert!(
        std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>(),
        "same_type: {} is not {}",
        std::any::type_name::<A>(),
        std::any::type_name::<B>()
    );
    let value = std::mem::ManuallyDrop::new(value);
    // SAFETY: `B` is `A` (checked above), so the bytes are a valid `B`, read once; the
    // original is not dropped.
    unsafe { std::mem::transmute_copy::<A, B>(&value) }
}

/// Splits the points `start, start + step, ..` below `end` of a row of a domain `n0`
/// points wide into those less than `margin` from its low edge, those between, and those
/// less than `margin` from its high edge, as `(first, end)` pairs whose firsts lie on the
/// points' grid (or at `end`). Generated kernels run the three in separate loops, the
/// middle one with the edge tests decided.
#[inline(always)]
pub fn split_row(
    start: isize,
    end: isize,
    step: usize,
    n0: isize,
    margin: isize,
) -> [(isize, isize); 3] {
    let step = step as isize;
    // The first point at or after `x`, at most `end`.
    let at_or_after = |x: isize| {
        if x <= start {
            start
        } else {
            (start + (x - start + step - 1) / step * step).min(end)
        }
    };
    let low_end = at_or_after(margin).min(end);
    let high_start = at_or_after(n0 - margin).max(low_end).min(end);
    [(start, low_end), (low_end, high_start), (high_start, end)]
}

/// The points of a row whose reduction values a generated kernel buffers before folding
/// them with [`fold_lanes`].
pub const REDUCTION_TILE: usize = 256;

/// The lanes [`fold_lanes`] folds in.
const LANES: usize = 8;

/// Folds `values` with `combine` from `identity` in [`LANES`] interleaved lanes (value `i`
/// into lane `i % LANES`, the lanes then in order, the values past the last whole group of
/// lanes last): independent chains that LLVM turns into packed arithmetic, in a fixed
/// order, so the result depends only on `values`.
#[inline(always)]
pub fn fold_lanes<A: Copy>(values: &[A], identity: A, combine: impl Fn(A, A) -> A) -> A {
    let mut lanes = [identity; LANES];
    let groups = values.chunks_exact(LANES);
    let rest = groups.remainder();
    for group in groups {
        for (lane, &v) in lanes.iter_mut().zip(group) {
            *lane = combine(*lane, v);
        }
    }
    let folded = lanes.into_iter().fold(identity, &combine);
    rest.iter().fold(folded, |a, &v| combine(a, v))
}

/// Runs `f` on every grid line along `axis` of domain `n`, in parallel: `f` gets the
/// line's first point (its index on `axis` is 0) and a per-task scratch value that it
/// may reuse from line to line.
pub fn for_each_line<S: Default + Send>(
    n: [usize; 3],
    axis: usize,
    f: impl Fn(&mut S, [isize; 3]) + Sync + Send,
) {
    let mut others = n;
    others[axis] = 1;
    let count = others[0] * others[1] * others[2];
    if n[axis] == 0 {
        return;
    }
    let line = |scratch: &mut S, r: usize| {
        let i = r % others[0];
        let j = (r / others[0]) % others[1];
        let k = r / (others[0] * others[1]);
        f(scratch, [i as isize, j as isize, k as isize]);
    };
    match rows_per_task(n[0] * n[1] * n[2], count) {
        None => {
            let mut scratch = S::default();
            (0..count).for_each(|r| line(&mut scratch, r));
        }
        Some(per_task) => Team::global().run(count.div_ceil(per_task), &|t| {
            let mut scratch = S::default();
            (t * per_task..((t + 1) * per_task).min(count)).for_each(|r| line(&mut scratch, r))
        }),
    }
}

/// Vertices per task of a vertex kernel on the CPU.
pub const VERTEX_CHUNK: usize = 256;

/// Chunk `c` of a vertex set of `n[0]` vertices, as a row.
fn vertex_chunk(n: [usize; 3], c: usize) -> Row {
    Row::chunk(c, VERTEX_CHUNK, n[0])
}

/// Runs `f` on chunks of [`VERTEX_CHUNK`] positions of a vertex set of `n[0]` vertices,
/// in parallel on the current rayon pool (one thread: in order).
pub fn for_each_vertex_chunk(n: [usize; 3], f: impl Fn(Row) + Sync + Send) {
    (0..n[0].div_ceil(VERTEX_CHUNK))
        .into_par_iter()
        .for_each(|c| f(vertex_chunk(n, c)));
}

/// As [`for_each_vertex_chunk`], combining each chunk's value in chunk order.
pub fn reduce_vertex_chunks<A: Copy + Send + Sync>(
    n: [usize; 3],
    identity: A,
    combine: impl Fn(A, A) -> A,
    f: impl Fn(Row) -> A + Sync + Send,
) -> A {
    let partials: Vec<A> = (0..n[0].div_ceil(VERTEX_CHUNK))
        .into_par_iter()
        .map(|c| f(vertex_chunk(n, c)))
        .collect();
    partials.into_iter().fold(identity, combine)
}

/// What a vertex kernel's CPU code reads of a mesh: the vertex set it runs over and the
/// vertex-to-vertex and vertex-to-triangle lists in CSR form (see
/// [`crate::mesh::MeshTopology`]).
#[derive(Clone, Copy, Debug)]
pub struct MeshView {
    /// The vertices of the set, one per point of the launch.
    pub set: *const u32,
    /// `neighbours[neighbour_start[v]..neighbour_start[v + 1]]` are `v`'s neighbours.
    pub neighbour_start: *const u32,
    /// See `neighbour_start`.
    pub neighbours: *const u32,
    /// Positions `triangle_start[v]..triangle_start[v + 1]` are `v`'s triangles.
    pub triangle_start: *const u32,
    /// Two per triangle position: the corners after `v`, counter-clockwise.
    pub corners: *const u32,
}

unsafe impl Send for MeshView {}
unsafe impl Sync for MeshView {}

impl MeshView {
    /// The vertex at position `t` of the set.
    ///
    /// # Safety
    /// `t` must be a position of the set.
    #[inline(always)]
    pub unsafe fn vertex(self, t: isize) -> isize {
        *self.set.offset(t) as isize
    }

    /// The positions of `v`'s neighbours.
    ///
    /// # Safety
    /// `v` must be a vertex of the mesh.
    #[inline(always)]
    pub unsafe fn neighbour_range(self, v: isize) -> std::ops::Range<isize> {
        *self.neighbour_start.offset(v) as isize..*self.neighbour_start.offset(v + 1) as isize
    }

    /// The positions of `v`'s triangles.
    ///
    /// # Safety
    /// `v` must be a vertex of the mesh.
    #[inline(always)]
    pub unsafe fn triangle_range(self, v: isize) -> std::ops::Range<isize> {
        *self.triangle_start.offset(v) as isize..*self.triangle_start.offset(v + 1) as isize
    }

    /// The neighbour at position `p`.
    ///
    /// # Safety
    /// `p` must come from a [`MeshView::neighbour_range`].
    #[inline(always)]
    pub unsafe fn neighbour(self, p: i64) -> i64 {
        *self.neighbours.offset(p as isize) as i64
    }

    /// Corner `1 + k` (`k` 0 or 1) of the triangle at position `p`.
    ///
    /// # Safety
    /// `p` must come from a [`MeshView::triangle_range`].
    #[inline(always)]
    pub unsafe fn corner(self, p: i64, k: isize) -> i64 {
        *self.corners.offset(2 * p as isize + k) as i64
    }
}

/// A sampled grid as generated CPU code reads it: `nx x ny` samples, row by row, over a
/// rectangle from `origin` with the given inverse spacing (see
/// [`crate::sampled::SampledGrid`]).
#[derive(Clone, Copy, Debug)]
pub struct SampledView<T> {
    /// The first sample; sample `(i, j)` is at `values[i + j * nx]`.
    pub values: *const T,
    /// Samples along the first axis (at least 2).
    pub nx: i64,
    /// Samples along the second axis (at least 2).
    pub ny: i64,
    /// The position of sample `(0, 0)`.
    pub origin: [T; 2],
    /// One over the distance between samples, per axis.
    pub inverse_spacing: [T; 2],
}

unsafe impl<T> Send for SampledView<T> {}
unsafe impl<T> Sync for SampledView<T> {}

impl<T: Real> SampledView<T> {
    /// The grid interpolated bilinearly at `(x, y)`, clamped to the grid's rectangle. The
    /// same operations, in the same order, as the PTX's software interpolation.
    ///
    /// # Safety
    /// `values` must hold `nx * ny` samples, `nx, ny >= 2`.
    #[inline(always)]
    pub unsafe fn sample(self, x: T, y: T) -> T {
        let (i, fx) = cell(x, self.origin[0], self.inverse_spacing[0], self.nx);
        let (j, fy) = cell(y, self.origin[1], self.inverse_spacing[1], self.ny);
        let at = |i: i64, j: i64| *self.values.offset((i + j * self.nx) as isize);
        let (a, b) = (at(i, j), at(i + 1, j));
        let (c, d) = (at(i, j + 1), at(i + 1, j + 1));
        let low = a + fx * (b - a);
        let high = c + fx * (d - c);
        low + fy * (high - low)
    }
}

/// The cell of a grid axis of `n` samples holding coordinate `x` (clamped to the axis),
/// and the fraction of the cell before `x`.
#[inline(always)]
fn cell<T: Real>(x: T, origin: T, inverse_spacing: T, n: i64) -> (i64, T) {
    let u = Real::min(
        Real::max((x - origin) * inverse_spacing, T::zero()),
        T::from_i64(n - 1),
    );
    let i = Real::as_i64(Real::floor(u)).min(n - 2);
    (i, u - T::from_i64(i))
}

/// The machine's memory bandwidth as the CPU backend sees it: the best of five parallel
/// copies of `bytes` bytes (on every thread of the team), counted as bytes read plus
/// bytes written per second. Benchmarks report CPU figures against it.
pub fn copy_bandwidth(bytes: usize) -> f64 {
    let len = (bytes / std::mem::size_of::<f64>()).max(1 << 10);
    let src: Vec<f64> = (0..len).map(|i| i as f64).collect();
    let mut dst = vec![0.0f64; len];
    let chunk = 1 << 15;
    let tasks = len.div_ceil(chunk);
    let out = ViewMut {
        ptr: dst.as_mut_ptr(),
        sy: 0,
        sz: 0,
    };
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        Team::global().run(tasks, &|t| {
            let (a, b) = (t * chunk, ((t + 1) * chunk).min(len));
            // SAFETY: tasks write disjoint ranges of `dst`, which outlives the launch; the
            // method call makes the closure capture the whole (Sync) view, not its pointer.
            unsafe {
                let to = out.row(0, 0);
                std::ptr::copy_nonoverlapping(src.as_ptr().add(a), to.add(a), b - a);
            }
        });
        best = best.min(start.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    2.0 * (len * std::mem::size_of::<f64>()) as f64 / best
}
