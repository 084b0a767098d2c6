// Hand-written CUDA reference kernels for the GPU benchmark.
//
// These are the kernels the generated PTX is compared against, written the way
// a competent CUDA engineer would write memory-bound stencils for sm_90
// (H100 / H200):
//
//   * the simple versions: one grid point per thread, no shared memory for
//     the stencils (the neighbour reuse is caught by L1/L2);
//   * the tuned versions (`*_tuned_pP_*`, below): vector loads and stores and
//     several points per thread, each value loaded once per thread;
//   * inputs are `const T* __restrict__` and read through `__ldg` (read-only
//     data path);
//   * 32-bit (`int`) index arithmetic. Every index below is formed in `int`, so
//     a field, halo included, must span fewer than 2^31 elements from its
//     interior origin (e.g. 16384^2 with a halo is ~2.7e8, 512^3 ~1.4e8: fine).
//
// Conventions shared by every kernel:
//
//   * every field pointer points at interior point (0,0[,0]); the fields carry
//     halo cells, so negative offsets such as u[-1] and u[-su] are valid;
//   * strides are in elements (not bytes); x is the contiguous axis;
//   * thread mapping: x -> blockIdx.x*blockDim.x + threadIdx.x,
//                     y -> blockIdx.y*blockDim.y + threadIdx.y,
//                     z -> blockIdx.z*blockDim.z + threadIdx.z.
//
// Each kernel exists for T = float (`*_f32`) and T = double (`*_f64`). The
// bodies are templates; the exported entry points are `extern "C"` wrappers so
// their names are unmangled in the cubin.
//
// Floating-point evaluation order follows the DSL's kernels exactly (sums left
// to right, as written). nvcc's default -fmad=true may contract `a + b * c`
// into an FMA, as the generated PTX may; the benchmark compares speed, and the
// conformance tests (not this file) check numerics.
//
// Build: benchmarks/cuda/build.sh  (nvcc -O3 -arch=sm_90 -cubin).

#include <cuda_runtime.h>

namespace {

// ---------------------------------------------------------------------------
// Precision-specific helpers (explicit f-suffixed versions for float).
// ---------------------------------------------------------------------------

__device__ __forceinline__ float abs_t(float x) { return fabsf(x); }
__device__ __forceinline__ double abs_t(double x) { return fabs(x); }

__device__ __forceinline__ float max_t(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double max_t(double a, double b) { return fmax(a, b); }

// ---------------------------------------------------------------------------
// Stencils
// ---------------------------------------------------------------------------

// Weighted-Jacobi sweep for -lap(u) = f on a 2D grid:
//   r   = ((((u(-1,0) + u(1,0)) + u(0,-1)) + u(0,1)) + h2 * f) * 0.25
//   out = u + omega * (r - u)
template <typename T>
__device__ __forceinline__ void jacobi5(const T* __restrict__ u,
                                        const T* __restrict__ f,
                                        T* __restrict__ out,
                                        int nx, int ny, int su, int sf, int so,
                                        T h2, T omega) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;

    const int o = j * su + i;  // index into u

    const T c = __ldg(u + o);
    const T west = __ldg(u + (o - 1));
    const T east = __ldg(u + (o + 1));
    const T south = __ldg(u + (o - su));
    const T north = __ldg(u + (o + su));
    const T rhs = __ldg(f + (j * sf + i));

    const T r = ((((west + east) + south) + north) + h2 * rhs) * T(0.25);
    out[j * so + i] = c + omega * (r - c);
}

// 2D 9-point (Mehrstellen) Laplacian:
//   edges   = ((u(0,-1) + u(-1,0)) + u(1,0)) + u(0,1)
//   corners = ((u(-1,-1) + u(1,-1)) + u(-1,1)) + u(1,1)
//   out     = (4*edges + corners - 20*u) * inv_h2 / 6
// The final `/ 6` is a true (correctly rounded) division, as in the DSL
// source; it is not replaced by a multiplication by 1/6, which rounds
// differently.
template <typename T>
__device__ __forceinline__ void lap9(const T* __restrict__ u,
                                     T* __restrict__ out,
                                     int nx, int ny, int su, int so,
                                     T inv_h2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;

    const int o = j * su + i;  // index into u
    const int s = o - su;      // row below (dj = -1)
    const int n = o + su;      // row above (dj = +1)

    const T c = __ldg(u + o);

    const T edges = ((__ldg(u + s) + __ldg(u + (o - 1))) + __ldg(u + (o + 1))) + __ldg(u + n);
    const T corners = ((__ldg(u + (s - 1)) + __ldg(u + (s + 1))) + __ldg(u + (n - 1))) + __ldg(u + (n + 1));

    out[j * so + i] = (T(4) * edges + corners - T(20) * c) * inv_h2 / T(6);
}

// 3D 7-point Laplacian (launched with a 3D grid of 3D blocks):
//   sum = u(-1,0,0) + u(1,0,0) + u(0,-1,0) + u(0,1,0) + u(0,0,-1) + u(0,0,1)
//   out = (sum - 6*u) * inv_h2
template <typename T>
__device__ __forceinline__ void lap7(const T* __restrict__ u,
                                     T* __restrict__ out,
                                     int nx, int ny, int nz,
                                     int suy, int suz, int soy, int soz,
                                     T inv_h2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i >= nx || j >= ny || k >= nz) return;

    const int o = k * suz + j * suy + i;  // index into u

    const T c = __ldg(u + o);
    const T sum = __ldg(u + (o - 1)) + __ldg(u + (o + 1))
                + __ldg(u + (o - suy)) + __ldg(u + (o + suy))
                + __ldg(u + (o - suz)) + __ldg(u + (o + suz));

    out[k * soz + j * soy + i] = (sum - T(6) * c) * inv_h2;
}

// ---------------------------------------------------------------------------
// Max-reduction of |u|
// ---------------------------------------------------------------------------
//
// Identity element: 0, valid because every value reduced is an |u| >= 0.
// fmax returns the non-NaN operand, so NaNs in u are ignored.

// Max over the 32 lanes of a (full) warp; lane 0 ends up with the result.
template <typename T>
__device__ __forceinline__ T warp_max(T v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = max_t(v, __shfl_down_sync(0xffffffffu, v, offset));
    return v;
}

// Max over the whole block; the result is valid in thread (0,0,0) only.
// Requires the block's thread count to be a multiple of 32 (full warps) and
// at most 1024. Every thread of the block must call it.
template <typename T>
__device__ __forceinline__ T block_max(T v) {
    __shared__ T warp_results[32];  // one slot per warp (<= 1024 / 32)

    const int tid = threadIdx.y * blockDim.x + threadIdx.x;  // linear thread id
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int nwarps = (blockDim.x * blockDim.y) >> 5;

    v = warp_max(v);
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();

    if (warp == 0) {
        v = (lane < nwarps) ? warp_results[lane] : T(0);
        v = warp_max(v);
    }
    return v;
}

// First pass: each block writes the max of |u| over its points to
// partials[blockIdx.y * gridDim.x + blockIdx.x].
//
// Launch: 2D blocks of up to 1024 threads with blockDim.x a multiple of 32
// (so every warp is full and lies in one row); gridDim.x = ceil(nx /
// blockDim.x). In y the kernel is a grid-stride loop, so gridDim.y may be
// anything from 1 to ceil(ny / blockDim.y): with a smaller grid each thread
// walks several rows (j, j + blockDim.y*gridDim.y, ...), which cuts the number
// of partials and the per-block reduction overhead. The partials buffer needs
// gridDim.x * gridDim.y entries. Threads outside the domain contribute 0.
template <typename T>
__device__ __forceinline__ void maxabs(const T* __restrict__ u,
                                       T* __restrict__ partials,
                                       int nx, int ny, int su) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride_y = blockDim.y * gridDim.y;

    T m = T(0);
    if (i < nx) {
        // Unrolled so that several independent loads are in flight per thread.
#pragma unroll 4
        for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < ny; j += stride_y)
            m = max_t(m, abs_t(__ldg(u + (j * su + i))));
    }

    // No early return above: every thread takes part in the block reduction.
    m = block_max(m);
    if (threadIdx.x == 0 && threadIdx.y == 0)
        partials[blockIdx.y * gridDim.x + blockIdx.x] = m;
}

// Second pass: the max of n partials (all >= 0) into result[0].
// Launch: exactly ONE block of 1024 threads (1D); grid-stride over n.
template <typename T>
__device__ __forceinline__ void max_final(const T* __restrict__ partials,
                                          T* __restrict__ result, int n) {
    T m = T(0);
    for (int idx = threadIdx.x; idx < n; idx += blockDim.x)
        m = max_t(m, __ldg(partials + idx));

    m = block_max(m);
    if (threadIdx.x == 0) result[0] = m;
}


// ---------------------------------------------------------------------------
// Tuned versions: what the generated code does, written by hand
// ---------------------------------------------------------------------------
//
// Each thread computes W consecutive points along x (W = 4 floats or 2 doubles,
// moved with one 16-byte vector load or store: `float4`, `double2`) times P
// points along the last axis, and loads every value it needs once: the rows
// it shares between its P points are read once and kept in registers. The
// x-neighbours beyond the vector are scalar loads. Every load of a thread is
// issued before its arithmetic.
//
// Requirements (checked by the benchmark before it launches them): nx is a
// multiple of W, the last axis a multiple of P, and every row of every field
// starts on a 16-byte boundary (the runtime pitches device fields so that each
// interior row starts on a 128-byte line).
//
// Launch: block (bx, by[, bz]) and grid (ceil(nx / (bx W)), ceil(ny / by) or
// ceil(ny / (by P)) in 2D, ceil(nz / (bz P)) in 3D).

template <typename T> struct Vec;
template <> struct Vec<float> {
    using type = float4;
    static constexpr int width = 4;
};
template <> struct Vec<double> {
    using type = double2;
    static constexpr int width = 2;
};

// The W values of a vector, by index.
__device__ __forceinline__ float part(const float4& v, int k) {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}
__device__ __forceinline__ double part(const double2& v, int k) { return k == 0 ? v.x : v.y; }
__device__ __forceinline__ void set_part(float4& v, int k, float x) {
    if (k == 0) v.x = x; else if (k == 1) v.y = x; else if (k == 2) v.z = x; else v.w = x;
}
__device__ __forceinline__ void set_part(double2& v, int k, double x) {
    if (k == 0) v.x = x; else v.y = x;
}

// A row of W + 2 values around the thread's W points: [-1, W].
template <typename T>
struct Row {
    T v[Vec<T>::width + 2];
};

// Loads the row at `p` (a pointer to the thread's first point of that row).
template <typename T>
__device__ __forceinline__ Row<T> load_row(const T* __restrict__ p) {
    constexpr int W = Vec<T>::width;
    using V = typename Vec<T>::type;
    Row<T> r;
    const V mid = __ldg(reinterpret_cast<const V*>(p));
    r.v[0] = __ldg(p - 1);
#pragma unroll
    for (int k = 0; k < W; ++k) r.v[k + 1] = part(mid, k);
    r.v[W + 1] = __ldg(p + W);
    return r;
}

// The W values of the row at `p`, without neighbours.
template <typename T>
__device__ __forceinline__ typename Vec<T>::type load_mid(const T* __restrict__ p) {
    using V = typename Vec<T>::type;
    return __ldg(reinterpret_cast<const V*>(p));
}

// Stores the thread's P x W points: `value(p, k)` is point k of its row p, and row p's W
// values go out as one vector at `first + p * stride`.
template <typename T, int P, typename F>
__device__ __forceinline__ void store_points(T* __restrict__ first, int stride, F value) {
    using V = typename Vec<T>::type;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        V res;
#pragma unroll
        for (int k = 0; k < Vec<T>::width; ++k) set_part(res, k, value(p, k));
        *reinterpret_cast<V*>(first + p * stride) = res;
    }
}

template <typename T, int P>
__device__ __forceinline__ void jacobi5_tuned(const T* __restrict__ u,
                                              const T* __restrict__ f,
                                              T* __restrict__ out,
                                              int nx, int ny, int su, int sf, int so,
                                              T h2, T omega) {
    constexpr int W = Vec<T>::width;
    using V = typename Vec<T>::type;
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * W;
    const int j0 = (blockIdx.y * blockDim.y + threadIdx.y) * P;
    if (i0 >= nx || j0 >= ny) return;
    // Rows j0 - 1 .. j0 + P: the outer two only at the thread's columns.
    V below = load_mid(u + (j0 - 1) * su + i0);
    V above = load_mid(u + (j0 + P) * su + i0);
    Row<T> rows[P];
    V rhs[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
        rows[p] = load_row(u + (j0 + p) * su + i0);
        rhs[p] = load_mid(f + (j0 + p) * sf + i0);
    }
    store_points<T, P>(out + j0 * so + i0, so, [&](int p, int k) {
        const T c = rows[p].v[k + 1];
        const T west = rows[p].v[k];
        const T east = rows[p].v[k + 2];
        const T south = p == 0 ? part(below, k) : rows[p - 1].v[k + 1];
        const T north = p == P - 1 ? part(above, k) : rows[p + 1].v[k + 1];
        const T r = ((((west + east) + south) + north) + h2 * part(rhs[p], k)) * T(0.25);
        return c + omega * (r - c);
    });
}

template <typename T, int P>
__device__ __forceinline__ void lap9_tuned(const T* __restrict__ u,
                                           T* __restrict__ out,
                                           int nx, int ny, int su, int so,
                                           T inv_h2) {
    constexpr int W = Vec<T>::width;
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * W;
    const int j0 = (blockIdx.y * blockDim.y + threadIdx.y) * P;
    if (i0 >= nx || j0 >= ny) return;
    // Rows j0 - 1 .. j0 + P, each with its two x-neighbours (the corners).
    Row<T> rows[P + 2];
#pragma unroll
    for (int r = 0; r < P + 2; ++r) rows[r] = load_row(u + (j0 - 1 + r) * su + i0);
    store_points<T, P>(out + j0 * so + i0, so, [&](int p, int k) {
        const Row<T>& s = rows[p];
        const Row<T>& m = rows[p + 1];
        const Row<T>& n = rows[p + 2];
        const T c = m.v[k + 1];
        const T edges = ((s.v[k + 1] + m.v[k]) + m.v[k + 2]) + n.v[k + 1];
        const T corners = ((s.v[k] + s.v[k + 2]) + n.v[k]) + n.v[k + 2];
        return (T(4) * edges + corners - T(20) * c) * inv_h2 / T(6);
    });
}

// P planes along z per thread: the centre rows of planes k0 - 1 .. k0 + P are
// loaded once each and shared by the thread's P points.
template <typename T, int P>
__device__ __forceinline__ void lap7_tuned(const T* __restrict__ u,
                                           T* __restrict__ out,
                                           int nx, int ny, int nz,
                                           int suy, int suz, int soy, int soz,
                                           T inv_h2) {
    constexpr int W = Vec<T>::width;
    using V = typename Vec<T>::type;
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * W;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int k0 = (blockIdx.z * blockDim.z + threadIdx.z) * P;
    if (i0 >= nx || j >= ny || k0 >= nz) return;
    const T* base = u + j * suy + i0;
    V planes_below = load_mid(base + (k0 - 1) * suz);
    V planes_above = load_mid(base + (k0 + P) * suz);
    Row<T> mid[P];
    V south[P], north[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
        const T* q = base + (k0 + p) * suz;
        mid[p] = load_row(q);
        south[p] = load_mid(q - suy);
        north[p] = load_mid(q + suy);
    }
    store_points<T, P>(out + k0 * soz + j * soy + i0, soz, [&](int p, int k) {
        const T c = mid[p].v[k + 1];
        const T bottom = p == 0 ? part(planes_below, k) : mid[p - 1].v[k + 1];
        const T top = p == P - 1 ? part(planes_above, k) : mid[p + 1].v[k + 1];
        const T sum = mid[p].v[k] + mid[p].v[k + 2] + part(south[p], k) + part(north[p], k)
                    + bottom + top;
        return (sum - T(6) * c) * inv_h2;
    });
}

// The max of |u| with vector loads: each thread reads W consecutive points per
// row and P rows per step of its grid-stride loop (so P * W loads in flight).
template <typename T, int P>
__device__ __forceinline__ void maxabs_tuned(const T* __restrict__ u,
                                             T* __restrict__ partials,
                                             int nx, int ny, int su) {
    constexpr int W = Vec<T>::width;
    using V = typename Vec<T>::type;
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * W;
    const int stride_y = blockDim.y * gridDim.y * P;
    T m = T(0);
    if (i0 < nx) {
        for (int j = (blockIdx.y * blockDim.y + threadIdx.y) * P; j < ny; j += stride_y) {
            V v[P];
#pragma unroll
            for (int p = 0; p < P; ++p) v[p] = load_mid(u + (j + p) * su + i0);
#pragma unroll
            for (int p = 0; p < P; ++p)
#pragma unroll
                for (int k = 0; k < W; ++k) m = max_t(m, abs_t(part(v[p], k)));
        }
    }
    m = block_max(m);
    if (threadIdx.x == 0 && threadIdx.y == 0)
        partials[blockIdx.y * gridDim.x + blockIdx.x] = m;
}

}  // namespace

// ---------------------------------------------------------------------------
// Exported entry points (unmangled): NAME_f32 for float, NAME_f64 for double.
// ---------------------------------------------------------------------------

#define DEFINE_KERNELS(T, SUFFIX)                                                   \
    extern "C" __global__ void jacobi5_##SUFFIX(                                    \
        const T* __restrict__ u, const T* __restrict__ f, T* __restrict__ out,     \
        int nx, int ny, int su, int sf, int so, T h2, T omega) {                    \
        jacobi5<T>(u, f, out, nx, ny, su, sf, so, h2, omega);                       \
    }                                                                               \
                                                                                    \
    extern "C" __global__ void lap9_##SUFFIX(                                       \
        const T* __restrict__ u, T* __restrict__ out,                               \
        int nx, int ny, int su, int so, T inv_h2) {                                 \
        lap9<T>(u, out, nx, ny, su, so, inv_h2);                                    \
    }                                                                               \
                                                                                    \
    extern "C" __global__ void lap7_##SUFFIX(                                       \
        const T* __restrict__ u, T* __restrict__ out,                               \
        int nx, int ny, int nz, int suy, int suz, int soy, int soz, T inv_h2) {     \
        lap7<T>(u, out, nx, ny, nz, suy, suz, soy, soz, inv_h2);                    \
    }                                                                               \
                                                                                    \
    extern "C" __global__ void __launch_bounds__(1024) maxabs_##SUFFIX(            \
        const T* __restrict__ u, T* __restrict__ partials,                          \
        int nx, int ny, int su) {                                                   \
        maxabs<T>(u, partials, nx, ny, su);                                         \
    }                                                                               \
                                                                                    \
    extern "C" __global__ void __launch_bounds__(1024) max_final_##SUFFIX(         \
        const T* __restrict__ partials, T* __restrict__ result, int n) {            \
        max_final<T>(partials, result, n);                                          \
    }

DEFINE_KERNELS(float, f32)
DEFINE_KERNELS(double, f64)

#undef DEFINE_KERNELS

// The tuned versions, for P = 1, 2 and 4 points along the last axis per thread:
// NAME_tuned_pP_f32 / _f64.
#define DEFINE_TUNED(T, SUFFIX, P)                                                  \
    extern "C" __global__ void jacobi5_tuned_p##P##_##SUFFIX(                       \
        const T* __restrict__ u, const T* __restrict__ f, T* __restrict__ out,     \
        int nx, int ny, int su, int sf, int so, T h2, T omega) {                    \
        jacobi5_tuned<T, P>(u, f, out, nx, ny, su, sf, so, h2, omega);              \
    }                                                                               \
    extern "C" __global__ void lap9_tuned_p##P##_##SUFFIX(                          \
        const T* __restrict__ u, T* __restrict__ out,                               \
        int nx, int ny, int su, int so, T inv_h2) {                                 \
        lap9_tuned<T, P>(u, out, nx, ny, su, so, inv_h2);                           \
    }                                                                               \
    extern "C" __global__ void lap7_tuned_p##P##_##SUFFIX(                          \
        const T* __restrict__ u, T* __restrict__ out,                               \
        int nx, int ny, int nz, int suy, int suz, int soy, int soz, T inv_h2) {     \
        lap7_tuned<T, P>(u, out, nx, ny, nz, suy, suz, soy, soz, inv_h2);           \
    }                                                                               \
    extern "C" __global__ void __launch_bounds__(1024) maxabs_tuned_p##P##_##SUFFIX( \
        const T* __restrict__ u, T* __restrict__ partials, int nx, int ny, int su) {  \
        maxabs_tuned<T, P>(u, partials, nx, ny, su);                                \
    }

DEFINE_TUNED(float, f32, 1)
DEFINE_TUNED(float, f32, 2)
DEFINE_TUNED(float, f32, 4)
DEFINE_TUNED(double, f64, 1)
DEFINE_TUNED(double, f64, 2)
DEFINE_TUNED(double, f64, 4)

#undef DEFINE_TUNED
