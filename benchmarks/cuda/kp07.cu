// Hand-written CUDA reference for the shallow-water solver's KP07 step, in the style of
// the "compact stencils" GPU shallow-water codes (Brodtkorb, Hagen and Saetra, 2012;
// GPU Ocean): a flux kernel that loads a thread block's tile of the state and the bed
// into shared memory with a halo of two cells, reconstructs every cell's face values
// there, computes every face flux once and writes each cell's rates R (three values)
// with the block's largest wave speed; a one-block kernel that turns the speeds into the
// time step on the device; and an update kernel that applies U += dt R with the
// positivity fix and Manning friction. A whole SSP-RK2 step is five launches and no read
// back to the host.
//
// The scheme is the solver's (`solvers/shallow-water/src/kernels/`): the surface
// reconstructed with the positivity correction (KP07 2.14), the desingularised
// velocities (KP07 2.17) reconstructed with limited slopes, the central-upwind fluxes
// (KP07 3.7) with one division per face, the well-balanced bed-slope source, the
// semi-implicit friction. It is written for reflecting walls on all four sides (the
// benchmark's radial dam break): the outermost cells are reconstructed as constants and
// a wall face's outer state mirrors the inner one. Unlike the solver it does not store
// the velocities with the state: the flux kernel computes them from `w`, `q`, `p` and
// the bed as it loads its tile, so a step moves 37 values per cell (the solver's two
// passes 53, its one pass 29). Built with nvcc's default -fmad=true, which contracts
// `a + b * c` into fused multiply-adds: the results equal the solver's to rounding, not
// bit for bit (the bench prints the difference after 20 steps).
//
// Conventions as in stencils.cu: every field pointer points at interior cell (0, 0),
// x is contiguous, `sy` is the row stride in elements; the fields carry a halo of two
// cells. The bed is a corner field of the same layout: bed[(i, j)] is cell (i, j)'s
// south-west corner, corner (nx, j) lies in the halo.
//
// Build: benchmarks/cuda/build.sh (nvcc -O3 -arch=sm_90 -cubin); the `kp07` bench of
// the shallow-water package loads kp07.cubin (`--hand PATH`).

#include <cuda_runtime.h>
#include <math.h>

namespace {

__device__ __forceinline__ float max_t(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double max_t(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float min_t(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double min_t(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ float sqrt_t(float a) { return sqrtf(a); }
__device__ __forceinline__ double sqrt_t(double a) { return sqrt(a); }
__device__ __forceinline__ float pow_t(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double pow_t(double a, double b) { return pow(a, b); }

// The generalised minmod: the smallest in magnitude if all three share a sign, else 0.
template <typename T>
__device__ __forceinline__ T minmod3(T a, T b, T c) {
    if (a > T(0) && b > T(0) && c > T(0)) return min_t(min_t(a, b), c);
    if (a < T(0) && b < T(0) && c < T(0)) return max_t(max_t(a, b), c);
    return T(0);
}

// The limited difference across a cell from the cells below, at and above it.
template <typename T>
__device__ __forceinline__ T slope(T below, T centre, T above, T theta, bool flat) {
    T s = minmod3(theta * (centre - below), T(0.5) * (above - below), theta * (above - centre));
    return flat ? T(0) : s;
}

// A cell's mean bed from its corners, summed south-west, south-east, north-west, north-east.
template <typename T>
__device__ __forceinline__ T cell_bed(T sw, T se, T nw, T ne) {
    return T(0.25) * (sw + se + nw + ne);
}

// sqrt(2) h / sqrt(h^4 + max(h^4, eps)): a discharge times it is the velocity.
template <typename T>
__device__ __forceinline__ T velocity_factor(T h, T eps) {
    T h2 = h * h;
    T h4 = h2 * h2;
    return T(1.4142135623730951) * h / sqrt_t(h4 + max_t(h4, eps));
}

// The surface at a cell's upper and lower faces (KP07 2.14, dry cells at the bed).
template <typename T>
__device__ __forceinline__ T upper_surface(T w, T s, T base, T lo, T hi) {
    if (w <= base) return hi;
    if (w + T(0.5) * s < hi) return hi;
    if (w - T(0.5) * s < lo) return T(2) * w - lo;
    return w + T(0.5) * s;
}

template <typename T>
__device__ __forceinline__ T lower_surface(T w, T s, T base, T lo, T hi) {
    if (w <= base) return lo;
    if (w + T(0.5) * s < hi) return T(2) * w - hi;
    if (w - T(0.5) * s < lo) return lo;
    return w - T(0.5) * s;
}

// The central-upwind flux through a face (KP07 3.7) from the states below (l) and above
// (r): surface, normal and tangential velocity; the face's bed. Writes the fluxes of w,
// of the normal and of the tangential discharge, and returns the largest wave speed.
template <typename T>
__device__ __forceinline__ T face_flux(T wl, T ul, T vl, T wr, T ur, T vr, T bed, T g,
                                       T& fw, T& fn, T& ft) {
    T hl = max_t(wl - bed, T(0));
    T hr = max_t(wr - bed, T(0));
    T cl = sqrt_t(g * hl);
    T cr = sqrt_t(g * hr);
    T ap = max_t(max_t(ur + cr, ul + cl), T(0));
    T am = min_t(min_t(ur - cr, ul - cl), T(0));
    T d = ap - am;
    T k = am / d;
    T ql = hl * ul, qr = hr * ur;
    T fl0 = ql, fr0 = qr;
    T fl1 = hl * ul * ul + T(0.5) * g * hl * hl, fr1 = hr * ur * ur + T(0.5) * g * hr * hr;
    T fl2 = hl * ul * vl, fr2 = hr * ur * vr;
    bool moving = d > T(0);
    fw = moving ? fl0 + k * (fl0 - fr0 + ap * (wr - wl)) : T(0);
    fn = moving ? fl1 + k * (fl1 - fr1 + ap * (qr - ql)) : T(0);
    ft = moving ? fl2 + k * (fl2 - fr2 + ap * (hr * vr - hl * vl)) : T(0);
    return max_t(ap, -am);
}

template <typename T>
__device__ __forceinline__ T pressure(T h, T g) {
    T d = max_t(h, T(0));
    return T(0.5) * g * d * d;
}

// The face values of one cell along an axis: surface, normal and tangential velocity at
// the lower and upper faces.
template <typename T>
struct Faces {
    T lo_w, hi_w, lo_n, hi_n, lo_t, hi_t;
};

template <typename T>
__device__ __forceinline__ Faces<T> reconstruct(T w_m, T w_c, T w_p, T n_m, T n_c, T n_p,
                                                T t_m, T t_c, T t_p, T base, T b_lo, T b_hi,
                                                T theta, bool flat) {
    T sw = slope(w_m, w_c, w_p, theta, flat);
    T sn = slope(n_m, n_c, n_p, theta, flat);
    T st = slope(t_m, t_c, t_p, theta, flat);
    Faces<T> f;
    f.lo_w = lower_surface(w_c, sw, base, b_lo, b_hi);
    f.hi_w = upper_surface(w_c, sw, base, b_lo, b_hi);
    f.lo_n = n_c - T(0.5) * sn;
    f.hi_n = n_c + T(0.5) * sn;
    f.lo_t = t_c - T(0.5) * st;
    f.hi_t = t_c + T(0.5) * st;
    return f;
}

// The rates R of every cell of a BX x BY tile (see the file's text); the block's largest
// a / dx into block_speed[block] unless block_speed is null.
template <typename T, int BX, int BY>
__device__ __forceinline__ void rates(const T* __restrict__ w, const T* __restrict__ q,
                                      const T* __restrict__ p, const T* __restrict__ bed,
                                      T* __restrict__ rw, T* __restrict__ rq,
                                      T* __restrict__ rp, T* __restrict__ block_speed,
                                      int nx, int ny, int sy, T g, T theta, T eps, T dx_inv,
                                      T dy_inv) {
    constexpr int N = BX * BY;
    constexpr int CX = BX + 4, CY = BY + 4;  // cells i0 - 2 .. i0 + BX + 1
    constexpr int KX = BX + 5, KY = BY + 5;  // corners i0 - 2 .. i0 + BX + 2
    // One axis's face values, then the other's: (BX + 2) x BY cells, or BX x (BY + 2).
    constexpr int RN = (BX + 2) * BY > BX * (BY + 2) ? (BX + 2) * BY : BX * (BY + 2);
    // One axis's face fluxes: (BX + 1) x BY faces, or BX x (BY + 1).
    constexpr int FN = (BX + 1) * BY > BX * (BY + 1) ? (BX + 1) * BY : BX * (BY + 1);
    __shared__ T s_w[CY][CX], s_u[CY][CX], s_v[CY][CX];
    __shared__ T s_b[KY][KX];
    __shared__ T r_lo_w[RN], r_hi_w[RN], r_lo_n[RN], r_hi_n[RN], r_lo_t[RN], r_hi_t[RN];
    __shared__ T f_w[FN], f_n[FN], f_t[FN];
    __shared__ T s_max[N / 32];

    const int i0 = blockIdx.x * BX, j0 = blockIdx.y * BY;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * BX + tx;

    // The bed's corners, then the cells' surface and velocities (computed from the
    // discharges as the solver's `velocities` kernel does). Storage reaches index n + 1.
    for (int k = tid; k < KX * KY; k += N) {
        int a = k % KX, b = k / KX;
        int i = i0 - 2 + a, j = j0 - 2 + b;
        s_b[b][a] = (i <= nx + 1 && j <= ny + 1) ? __ldg(&bed[j * sy + i]) : T(0);
    }
    __syncthreads();
    for (int k = tid; k < CX * CY; k += N) {
        int a = k % CX, b = k / CX;
        int i = i0 - 2 + a, j = j0 - 2 + b;
        T wc = T(0), uc = T(0), vc = T(0);
        if (i <= nx + 1 && j <= ny + 1) {
            int at = j * sy + i;
            wc = __ldg(&w[at]);
            T base = cell_bed(s_b[b][a], s_b[b][a + 1], s_b[b + 1][a], s_b[b + 1][a + 1]);
            T f = velocity_factor(max_t(wc - base, T(0)), eps);
            uc = __ldg(&q[at]) * f;
            vc = __ldg(&p[at]) * f;
        }
        s_w[b][a] = wc;
        s_u[b][a] = uc;
        s_v[b][a] = vc;
    }
    __syncthreads();

    // This thread's cell.
    const int i = i0 + tx, j = j0 + ty;
    const int ca = tx + 2, cb = ty + 2;
    const T base = cell_bed(s_b[cb][ca], s_b[cb][ca + 1], s_b[cb + 1][ca], s_b[cb + 1][ca + 1]);
    const T depth = s_w[cb][ca] - base;
    T speed = T(0);
    int nan_seen = 0;  // fmax drops NaN: a NaN speed is carried apart

    // x: face values of cells i0 - 1 .. i0 + BX, rows j0 .. j0 + BY - 1.
    for (int k = tid; k < (BX + 2) * BY; k += N) {
        int ra = k % (BX + 2), rb = k / (BX + 2);
        int a = ra + 1, b = rb + 2;
        int ci = i0 - 1 + ra;
        T b_lo = T(0.5) * (s_b[b][a] + s_b[b + 1][a]);
        T b_hi = T(0.5) * (s_b[b][a + 1] + s_b[b + 1][a + 1]);
        T cbase = cell_bed(s_b[b][a], s_b[b][a + 1], s_b[b + 1][a], s_b[b + 1][a + 1]);
        Faces<T> f = reconstruct(s_w[b][a - 1], s_w[b][a], s_w[b][a + 1], s_u[b][a - 1],
                                 s_u[b][a], s_u[b][a + 1], s_v[b][a - 1], s_v[b][a],
                                 s_v[b][a + 1], cbase, b_lo, b_hi, theta,
                                 ci == 0 || ci == nx - 1);
        r_lo_w[k] = f.lo_w; r_hi_w[k] = f.hi_w;
        r_lo_n[k] = f.lo_n; r_hi_n[k] = f.hi_n;
        r_lo_t[k] = f.lo_t; r_hi_t[k] = f.hi_t;
    }
    __syncthreads();
    // x faces i0 .. i0 + BX (face i between cells i - 1 and i); walls mirror.
    for (int k = tid; k < (BX + 1) * BY; k += N) {
        int fa = k % (BX + 1), rb = k / (BX + 1);
        int fi = i0 + fa, fj = j0 + rb;
        int L = rb * (BX + 2) + fa, R = L + 1;
        T wl = r_hi_w[L], nl = r_hi_n[L], tl = r_hi_t[L];
        T wr = r_lo_w[R], nr = r_lo_n[R], tr = r_lo_t[R];
        if (fi == 0) { wl = wr; nl = -nr; tl = tr; }
        if (fi == nx) { wr = wl; nr = -nl; tr = tl; }
        T bface = T(0.5) * (s_b[rb + 2][fa + 2] + s_b[rb + 3][fa + 2]);
        T fw, fn, ft;
        T a = face_flux(wl, nl, tl, wr, nr, tr, bface, g, fw, fn, ft);
        f_w[k] = fw; f_n[k] = fn; f_t[k] = ft;
        if (fi <= nx && fj < ny) {
            nan_seen |= a != a;
            speed = max_t(speed, a * dx_inv);
        }
    }
    __syncthreads();
    T x_w, x_q, x_p, ww_in, we_in;
    {
        int own = ty * (BX + 2) + tx + 1;
        int west = ty * (BX + 1) + tx, east = west + 1;
        ww_in = r_lo_w[own];
        we_in = r_hi_w[own];
        T bx1 = T(0.5) * (s_b[cb][ca] + s_b[cb + 1][ca]);
        T bx2 = T(0.5) * (s_b[cb][ca + 1] + s_b[cb + 1][ca + 1]);
        T push_w = pressure(ww_in - bx1, g), push_e = pressure(we_in - bx2, g);
        x_w = (f_w[west] - f_w[east]) * dx_inv;
        x_q = ((f_n[west] - f_n[east]) + (push_e - push_w)) * dx_inv -
              g * depth * (we_in - ww_in) * dx_inv;
        x_p = (f_t[west] - f_t[east]) * dx_inv;
    }
    __syncthreads();

    // y: face values of cells j0 - 1 .. j0 + BY, columns i0 .. i0 + BX - 1.
    for (int k = tid; k < BX * (BY + 2); k += N) {
        int ra = k % BX, rb = k / BX;
        int a = ra + 2, b = rb + 1;
        int cj = j0 - 1 + rb;
        T b_lo = T(0.5) * (s_b[b][a] + s_b[b][a + 1]);
        T b_hi = T(0.5) * (s_b[b + 1][a] + s_b[b + 1][a + 1]);
        T cbase = cell_bed(s_b[b][a], s_b[b][a + 1], s_b[b + 1][a], s_b[b + 1][a + 1]);
        Faces<T> f = reconstruct(s_w[b - 1][a], s_w[b][a], s_w[b + 1][a], s_v[b - 1][a],
                                 s_v[b][a], s_v[b + 1][a], s_u[b - 1][a], s_u[b][a],
                                 s_u[b + 1][a], cbase, b_lo, b_hi, theta,
                                 cj == 0 || cj == ny - 1);
        r_lo_w[k] = f.lo_w; r_hi_w[k] = f.hi_w;
        r_lo_n[k] = f.lo_n; r_hi_n[k] = f.hi_n;
        r_lo_t[k] = f.lo_t; r_hi_t[k] = f.hi_t;
    }
    __syncthreads();
    // y faces j0 .. j0 + BY.
    for (int k = tid; k < BX * (BY + 1); k += N) {
        int ra = k % BX, fb = k / BX;
        int fi = i0 + ra, fj = j0 + fb;
        int L = fb * BX + ra, R = L + BX;
        T wl = r_hi_w[L], nl = r_hi_n[L], tl = r_hi_t[L];
        T wr = r_lo_w[R], nr = r_lo_n[R], tr = r_lo_t[R];
        if (fj == 0) { wl = wr; nl = -nr; tl = tr; }
        if (fj == ny) { wr = wl; nr = -nl; tr = tl; }
        T bface = T(0.5) * (s_b[fb + 2][ra + 2] + s_b[fb + 2][ra + 3]);
        T fw, fn, ft;
        T a = face_flux(wl, nl, tl, wr, nr, tr, bface, g, fw, fn, ft);
        f_w[k] = fw; f_n[k] = fn; f_t[k] = ft;
        if (fj <= ny && fi < nx) {
            nan_seen |= a != a;
            speed = max_t(speed, a * dy_inv);
        }
    }
    __syncthreads();
    if (i < nx && j < ny) {
        int own = (ty + 1) * BX + tx;
        int south = ty * BX + tx, north = south + BX;
        T ws_in = r_lo_w[own], wn_in = r_hi_w[own];
        T by1 = T(0.5) * (s_b[cb][ca] + s_b[cb][ca + 1]);
        T by2 = T(0.5) * (s_b[cb + 1][ca] + s_b[cb + 1][ca + 1]);
        T push_s = pressure(ws_in - by1, g), push_n = pressure(wn_in - by2, g);
        int at = j * sy + i;
        rw[at] = x_w + (f_w[south] - f_w[north]) * dy_inv;
        rq[at] = x_q + (f_t[south] - f_t[north]) * dy_inv;
        rp[at] = ((f_n[south] - f_n[north]) + (push_n - push_s)) * dy_inv -
                 g * depth * (wn_in - ws_in) * dy_inv + x_p;
    }

    if (block_speed != nullptr) {
        const bool bad = __syncthreads_or(nan_seen);
        for (int o = 16; o > 0; o /= 2) speed = max_t(speed, __shfl_xor_sync(0xffffffffu, speed, o));
        if ((tid & 31) == 0) s_max[tid / 32] = speed;
        __syncthreads();
        if (tid == 0) {
            T m = s_max[0];
            for (int k = 1; k < N / 32; ++k) m = max_t(m, s_max[k]);
            block_speed[blockIdx.y * gridDim.x + blockIdx.x] = bad ? T(NAN) : m;
        }
    }
}

// The time step from the blocks' largest speeds: courant / speed, at most limit.
template <typename T>
__device__ __forceinline__ void time_step(const T* __restrict__ block_speed, int blocks,
                                          T courant, T limit, T* __restrict__ dt) {
    __shared__ T s_max[32];
    T m = T(0);
    int nan_seen = 0;
    for (int k = threadIdx.x; k < blocks; k += blockDim.x) {
        T s = block_speed[k];
        nan_seen |= s != s;
        m = max_t(m, s);
    }
    const bool bad = __syncthreads_or(nan_seen);
    for (int o = 16; o > 0; o /= 2) m = max_t(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) s_max[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < (int)(blockDim.x / 32); ++k) m = max_t(m, s_max[k]);
        // The division in double, as the solver's clock does; a NaN speed makes a NaN step.
        T step = m > T(0) ? T(fmin(double(courant) / double(m), double(limit))) : limit;
        *dt = bad ? T(NAN) : step;
    }
}

// One RK stage from the rates: to = keep to + (1 - keep) (from + dt R), the surface kept
// on the bed, Manning friction semi-implicit (as the solver's `rk_update`).
template <typename T>
__device__ __forceinline__ void update(const T* __restrict__ w, const T* __restrict__ q,
                                       const T* __restrict__ p, const T* __restrict__ rw,
                                       const T* __restrict__ rq, const T* __restrict__ rp,
                                       const T* __restrict__ bed, T* __restrict__ tw,
                                       T* __restrict__ tq, T* __restrict__ tp,
                                       const T* __restrict__ dt_at, T keep, T g_n2, T eps,
                                       int nx, int ny, int sy) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    int at = j * sy + i;
    T dt = *dt_at;
    T base = cell_bed(__ldg(&bed[at]), __ldg(&bed[at + 1]), __ldg(&bed[at + sy]),
                      __ldg(&bed[at + sy + 1]));
    T fresh = T(1) - keep;
    T old_w = T(0), old_q = T(0), old_p = T(0);
    if (keep > T(0)) {
        old_w = keep * tw[at];
        old_q = keep * tq[at];
        old_p = keep * tp[at];
    }
    T wn = old_w + fresh * (__ldg(&w[at]) + dt * __ldg(&rw[at]));
    T qn = old_q + fresh * (__ldg(&q[at]) + dt * __ldg(&rq[at]));
    T pn = old_p + fresh * (__ldg(&p[at]) + dt * __ldg(&rp[at]));
    T h = max_t(wn - base, T(0));
    T f = velocity_factor(h, eps);
    T un = qn * f, vn = pn * f;
    T h43 = max_t(pow_t(h, T(4.0 / 3.0)), T(1e-30));
    T h2 = h * h;
    T damp = h2 * h2 > eps ? h43 / (h43 + fresh * dt * g_n2 * sqrt_t(un * un + vn * vn)) : T(0);
    // A step of 0 leaves the state as it was (`from` in a first stage, `to` in a second).
    bool moves = dt > T(0);
    bool first = keep == T(0);
    tw[at] = moves ? max_t(wn, base) : (first ? __ldg(&w[at]) : tw[at]);
    tq[at] = moves ? qn * damp : (first ? __ldg(&q[at]) : tq[at]);
    tp[at] = moves ? pn * damp : (first ? __ldg(&p[at]) : tp[at]);
}

}  // namespace

// The rates kernel per tile of BX x BY cells (shared memory: 18 KB for 32 x 8 in f32,
// 36 KB in f64, under the 48 KB a block has without opting in), named
// kp07_hand_rates_<precision>_<BX>x<BY>; the time step and the update per precision.
#define KP07_RATES(T, NAME, BX, BY)                                                         \
    extern "C" __global__ void __launch_bounds__(BX * BY)                                   \
        kp07_hand_rates_##NAME##_##BX##x##BY(const T* w, const T* q, const T* p,            \
                                             const T* bed, T* rw, T* rq, T* rp,             \
                                             T* block_speed, int nx, int ny, int sy, T g,   \
                                             T theta, T eps, T dx_inv, T dy_inv) {          \
        rates<T, BX, BY>(w, q, p, bed, rw, rq, rp, block_speed, nx, ny, sy, g, theta, eps,  \
                         dx_inv, dy_inv);                                                   \
    }

#define KP07_STEP(T, NAME)                                                                  \
    extern "C" __global__ void kp07_hand_dt_##NAME(const T* block_speed, int blocks,        \
                                                   T courant, T limit, T* dt) {             \
        time_step<T>(block_speed, blocks, courant, limit, dt);                              \
    }                                                                                       \
    extern "C" __global__ void kp07_hand_update_##NAME(                                     \
        const T* w, const T* q, const T* p, const T* rw, const T* rq, const T* rp,          \
        const T* bed, T* tw, T* tq, T* tp, const T* dt, T keep, T g_n2, T eps, int nx,      \
        int ny, int sy) {                                                                   \
        update<T>(w, q, p, rw, rq, rp, bed, tw, tq, tp, dt, keep, g_n2, eps, nx, ny, sy);   \
    }

// The tiles the bench tries (`TILES` in solvers/shallow-water/benches/kp07/hand.rs).
KP07_RATES(float, f32, 32, 4)
KP07_RATES(float, f32, 32, 8)
KP07_RATES(float, f32, 32, 16)
KP07_RATES(float, f32, 64, 4)
KP07_RATES(float, f32, 64, 8)
KP07_RATES(double, f64, 32, 4)
KP07_RATES(double, f64, 32, 8)
KP07_RATES(double, f64, 64, 4)
KP07_STEP(float, f32)
KP07_STEP(double, f64)
