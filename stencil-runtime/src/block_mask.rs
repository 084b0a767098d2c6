//! Launching over some thread blocks only: a [`BlockMask`] holds one value per tile of
//! [`BLOCK_TILE`] points of a 2D domain, and a backend made with [`Backend::masked`] runs
//! every kernel's blocks whose value is not 0 and skips the others (they read nothing,
//! write nothing and add the identity to reductions). The mask is an ordinary field, so
//! kernels in the language build it on the device (e.g. from where there is water).
//!
//! On CUDA a masked launch uses a fixed shape, 16 x 4 threads with 4 points each along
//! y (or 16 x 16 threads of one point), so that each thread block is one tile. The CPU backend runs masked launches densely:
//! skipping blocks is for speed only, and a mask that is correct (it keeps every block
//! whose points could change) gives the same results either way.

use crate::cuda::LaunchShape;
use crate::{Backend, Error, Field, Precision, Real};
use std::any::Any;
use std::sync::Arc;

/// The points of a domain one mask entry stands for, along axes 0 and 1.
pub const BLOCK_TILE: [usize; 2] = [16, 16];

/// The CUDA launch shape of masked launches: one thread block per tile, of 16 x 4
/// threads with 4 points each along y...
pub(crate) const BLOCK_SHAPE: LaunchShape = LaunchShape {
    block: [16, 4, 1],
    points: 4,
    vector: 1,
};

/// ... or of 16 x 16 threads with a point each, for kernels that update a field in place
/// from its own value (the shallow-water stage update, whose 4-point entry in f64 needs
/// 255 registers and spills: Malpasset in f64 took 6.3 s with it, 5.6 s without).
pub(crate) const BLOCK_SHAPE_SINGLE: LaunchShape = LaunchShape {
    block: [16, 16, 1],
    points: 1,
    vector: 1,
};

/// Which tiles of a 2D domain of `domain` points launches compute: a field of
/// [`BlockMask::tiles`] values of `T` (halo 0), 0 to skip a tile.
#[derive(Debug)]
pub struct BlockMask<T: Real> {
    field: Arc<Field<T>>,
    domain: [usize; 2],
}

/// What a masked CUDA backend keeps of its mask.
#[derive(Clone, Debug)]
pub(crate) struct MaskArg {
    /// Keeps the mask's memory alive while the backend exists.
    _keep: Arc<dyn Any + Send + Sync>,
    /// The device address of the first entry.
    pub ptr: u64,
    /// The mask's row pitch in elements.
    pub pitch: u64,
    /// The entries' precision (the kernels launched must be of it).
    pub precision: Precision,
    /// The domain the mask was made for.
    pub domain: [usize; 2],
}

impl<T: Real> BlockMask<T> {
    /// The number of tiles along each axis covering `domain`.
    pub fn tiles(domain: [usize; 2]) -> [usize; 2] {
        [
            domain[0].div_ceil(BLOCK_TILE[0]),
            domain[1].div_ceil(BLOCK_TILE[1]),
        ]
    }

    /// A mask for `domain` on `backend` with every tile on.
    pub fn new(backend: &Backend, domain: [usize; 2]) -> Result<BlockMask<T>, Error> {
        let field = Field::from_fn(&Self::tiles(domain), 0, |_| T::one()).to(backend)?;
        Ok(BlockMask {
            field: Arc::new(field),
            domain,
        })
    }

    /// The domain it covers.
    pub fn domain(&self) -> [usize; 2] {
        self.domain
    }

    /// The entries, one per tile.
    pub fn field(&self) -> &Field<T> {
        &self.field
    }

    /// The entries, to be rewritten (by a kernel). Fails while a backend made from this
    /// mask by [`Backend::masked`] still exists: drop it first.
    pub fn field_mut(&mut self) -> Result<&mut Field<T>, Error> {
        Arc::get_mut(&mut self.field).ok_or_else(|| {
            Error::InvalidField(
                "the block mask is in use by a masked backend; drop that backend before rewriting the mask".into(),
            )
        })
    }
}

impl Backend {
    /// This backend launching only the tiles `mask` marks (see [`crate::block_mask`]).
    /// Every kernel launched through it must be 2D, over `mask.domain()`, in the mask's
    /// precision; a launch that is not is an error. The CPU backend is returned as it is.
    pub fn masked<T: Real>(&self, mask: &BlockMask<T>) -> Backend {
        match self {
            Backend::Cpu => Backend::Cpu,
            Backend::Cuda(c) => {
                let (ptr, pitch) = mask
                    .field
                    .device_args()
                    .map_or((0, 0), |(_, ptr, strides)| (ptr, strides[0] as u64));
                Backend::Cuda(c.clone().with_mask(Some(MaskArg {
                    _keep: mask.field.clone(),
                    ptr,
                    pitch,
                    precision: T::PRECISION,
                    domain: mask.domain,
                })))
            }
        }
    }
}
