//! What the `#[stencil]` macro embeds for a kernel's CUDA path: its PTX in each precision
//! (and, where the build asked for it, that PTX assembled ahead of time), and the tile
//! variants that PTX has entries for.

use crate::Precision;

/// One precision's PTX of a kernel.
#[derive(Debug)]
pub struct Ptx {
    /// The PTX text.
    pub text: &'static str,
    /// The name of its one-point-per-thread entry.
    pub entry: &'static str,
    /// A hash of the text (FNV-1a, 64 bits), computed at build time: it identifies the
    /// code in the module cache and the tuning cache.
    pub hash: u64,
    /// The width of the entries with vector accesses along axis 0 (1 if there are none).
    pub vector: u32,
    /// The text assembled ahead of time for the architectures the build named in
    /// `STENCIL_SASS` (`kernels_gen::sass`); none by default. A device of one of them
    /// loads its SASS instead of compiling the text.
    pub sass: &'static [Sass],
}

/// A kernel's PTX assembled ahead of time by `ptxas` for one GPU architecture.
#[derive(Debug)]
pub struct Sass {
    /// The architecture as compute capability times ten (`90` for `sm_90`): the devices
    /// of exactly that compute capability load it.
    pub arch: u32,
    /// Whether it was assembled with the grid dependency points made waits
    /// ([`crate::cuda::for_dependent_launch`]), so that its entries may be launched as
    /// programmatic dependents.
    pub dependent: bool,
    /// The cubin.
    pub image: &'static [u8],
}

impl Ptx {
    /// The code assembled ahead of time for a device of architecture `arch` (compute
    /// capability times ten), if the build made some.
    pub fn sass_for(&self, arch: u32) -> Option<&'static Sass> {
        self.sass.iter().find(|s| s.arch == arch)
    }
}

/// What the `#[stencil]` macro embeds for a kernel's CUDA path.
#[derive(Debug)]
pub struct KernelCode {
    /// The kernel's name.
    pub name: &'static str,
    /// Its number of grid dimensions.
    pub dims: usize,
    /// PTX with `T = f32`.
    pub f32: Ptx,
    /// PTX with `T = f64`.
    pub f64: Ptx,
    /// The tile variants the PTX has entries for.
    pub tiles: Tiles,
    /// For a line kernel, the axis its lines run along: one thread per line, and a scratch
    /// buffer as the entry's last parameter.
    pub line: Option<usize>,
    /// Whether the kernel updates a field in place from its own value (`u = u + e`):
    /// launching it twice is not launching it once, so its launch shape is never searched
    /// by running it. (A red-black sweep, which reads only the other colour, is not.)
    pub in_place: bool,
    /// Whether it is a vertex kernel: one thread per vertex of a set, the mesh's tables
    /// among its parameters, no block mask.
    pub vertex: bool,
    /// For a kernel with sampled grids, the PTX (f32, f64) that reads them through texture
    /// objects with hardware filtering.
    pub texture: Option<[Ptx; 2]>,
    /// For a kernel with staged values (`let f = stage(..)`), the shared memory its entry
    /// keeps them in.
    pub staging: Option<Staging>,
}

/// The shared memory of a staged kernel's entry (`kernels_gen::ir::StageLayout`): one
/// array per read stage, one after the other, each on an 8-byte boundary, each over a
/// thread block's tile extended by its own box of offsets (that of its `stage(..)` call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staging {
    /// Each array's box of offsets around the tile: its low corner (<= 0 per axis) and
    /// its high corner (>= 0), in the order of the arrays.
    pub boxes: &'static [([i32; 3], [i32; 3])],
    /// The bytes of one value of each array with `T = f32`.
    pub bytes_f32: &'static [u32],
    /// The same with `T = f64`.
    pub bytes_f64: &'static [u32],
    /// The entry's static shared memory (its reductions' arrays), `T = f32` and `f64`.
    pub static_bytes: [u32; 2],
}

/// The dynamic shared memory a launch may use without asking the driver for more.
pub const DEFAULT_SHARED_BYTES: u32 = 48 * 1024;

impl Staging {
    /// The bytes of shared memory a thread block of `block` threads, each computing
    /// `points` points along the last of the kernel's `dims` axes, needs at precision `p`.
    pub fn shared_bytes(&self, block: [u32; 3], points: u32, dims: usize, p: Precision) -> u32 {
        let last = dims.max(1) - 1;
        // Along an axis the kernel lacks the arrays have one layer, whatever the block
        // (its other layers help compute the stages and read none).
        let span = |a: usize| {
            if a >= dims.max(1) {
                1
            } else if a == last {
                block[a] * points
            } else {
                block[a]
            }
        };
        let sizes = match p {
            Precision::F32 => self.bytes_f32,
            Precision::F64 => self.bytes_f64,
        };
        self.boxes
            .iter()
            .zip(sizes)
            .map(|((lo, hi), &b)| {
                let points: u32 = (0..3).map(|a| span(a) + (hi[a] - lo[a]) as u32).product();
                (points * b).div_ceil(8) * 8
            })
            .sum()
    }

    /// Whether a launch of that shape fits the shared memory a launch may use without
    /// asking for more: the stages' and the entry's static arrays together.
    pub fn fits(&self, block: [u32; 3], points: u32, dims: usize, p: Precision) -> bool {
        let fixed = match p {
            Precision::F32 => self.static_bytes[0],
            Precision::F64 => self.static_bytes[1],
        };
        self.shared_bytes(block, points, dims, p) + fixed <= DEFAULT_SHARED_BYTES
    }
}

/// The tile variants of a kernel's PTX: how many points per thread along the last axis
/// its entries compute, without vectors and with them (of [`Ptx::vector`] points along
/// axis 0). Which exist is decided at build time (`kernels_gen::llvm::tile_variants`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiles {
    /// Points per thread of the entries without vectors.
    pub scalar: &'static [u32],
    /// Points per thread of the vector entries (empty where [`Ptx::vector`] is 1).
    pub vector: &'static [u32],
}

impl Tiles {
    /// One entry of one point per thread, without vectors.
    pub const ONE: Tiles = Tiles {
        scalar: &[1],
        vector: &[],
    };

    /// Whether there is an entry of `points` per thread, with vectors or without.
    pub fn has(&self, vectors: bool, points: u32) -> bool {
        let list = if vectors { self.vector } else { self.scalar };
        list.contains(&points)
    }
}

impl KernelCode {
    /// The PTX of precision `p`.
    pub(crate) fn ptx(&self, p: Precision) -> &Ptx {
        match p {
            Precision::F32 => &self.f32,
            Precision::F64 => &self.f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_shared_memory_covers_the_tile_and_each_box() {
        let s = Staging {
            boxes: &[([-1, 0, 0], [1, 1, 0]), ([0, 0, 0], [1, 0, 0])],
            bytes_f32: &[4, 1],
            bytes_f64: &[8, 1],
            static_bytes: [128, 256],
        };
        // 2D, 32 x 8 threads of 2 points along y: the first array over 34 x 17 points, the
        // second over 33 x 16; each on an 8-byte boundary.
        let (first, second) = (34 * 17, 33 * 16);
        assert_eq!(
            s.shared_bytes([32, 8, 1], 2, 2, Precision::F64),
            first * 8 + second
        );
        assert_eq!(
            s.shared_bytes([32, 8, 1], 2, 2, Precision::F32),
            first * 4 + second
        );
        // 1D: the box and the points per thread lie along axis 0.
        let line = Staging {
            boxes: &[([-2, 0, 0], [1, 0, 0]), ([-2, 0, 0], [1, 0, 0])],
            ..s
        };
        assert_eq!(
            line.shared_bytes([256, 1, 1], 1, 1, Precision::F32),
            1040 + 264
        );
        assert!(s.fits([32, 8, 1], 2, 2, Precision::F64));
        // A 2D kernel's block two threads deep along z: the arrays are as for one layer.
        assert_eq!(
            s.shared_bytes([32, 8, 2], 2, 2, Precision::F64),
            s.shared_bytes([32, 8, 1], 2, 2, Precision::F64)
        );
        // 34 x 129 and 33 x 128 points fit beside a reduction's value per warp; 66 x 129
        // and 65 x 128 do not.
        assert!(s.fits([32, 32, 1], 4, 2, Precision::F64));
        assert!(!s.fits([64, 32, 1], 4, 2, Precision::F64));
    }
}
