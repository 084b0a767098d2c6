// Hand-written CUDA reference kernels for the GPU benchmark.
//
// These are the kernels the generated PTX is compared against, written the way
// a competent CUDA engineer would write memory-bound stencils for sm_90
// (H100 / H200):
//
//   * one grid point per thread, no shared memory for the stencils (the
//     neighbour reuse is caught by L1/L2);
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
