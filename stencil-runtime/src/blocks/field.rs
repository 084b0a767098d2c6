//! [`BlockField`]: values on the present blocks of a [`BlockGrid`], in one arena.

use super::arena::Arena;
use super::geometry::Geometry;
use super::grid::{BlockGrid, BlockKey, Relayout};
use crate::cpu::{View, ViewMut};
use crate::cuda::memory::DeviceBuffer;
use crate::{Backend, Error, Field, Real};

/// A real-valued field on the present blocks of a [`BlockGrid`]: one allocation (the
/// arena) of one slot per block, each slot the block's points and its halo, x fastest.
///
/// Kernels launch over a field's blocks with their generated `launch_blocks`; halos are
/// filled by [`super::HaloExchange`]. When the grid's blocks change, every field follows
/// with [`BlockField::follow`]; a field that has not is refused by launches.
#[derive(Debug)]
pub struct BlockField<T> {
    backend: Backend,
    grid: u64,
    generation: u64,
    geometry: Geometry,
    capacity: usize,
    arena: Arena<T>,
}

impl<T: Real> BlockField<T> {
    /// A field on `grid` holding `value` everywhere (halos included).
    pub fn new(grid: &BlockGrid, value: T) -> Result<BlockField<T>, Error> {
        let len = grid.capacity() * grid.geometry().slot_len();
        Ok(Self::with_arena(
            grid,
            Arena::from_host(grid.backend(), vec![value; len])?,
        ))
    }

    /// A field on `grid`'s present layout holding `arena`.
    fn with_arena(grid: &BlockGrid, arena: Arena<T>) -> BlockField<T> {
        BlockField {
            backend: grid.backend().clone(),
            grid: grid.id(),
            generation: grid.generation(),
            geometry: *grid.geometry(),
            capacity: grid.capacity(),
            arena,
        }
    }

    /// A field on `grid` of zeros, set where it lives (no upload on a device).
    pub fn zeroed(grid: &BlockGrid) -> Result<BlockField<T>, Error> {
        let len = grid.capacity() * grid.geometry().slot_len();
        let arena = match grid.backend() {
            Backend::Cpu => Arena::Host(vec![T::zero(); len]),
            Backend::Cuda(c) => Arena::Device(DeviceBuffer::zeroed(
                c.stream(),
                len * std::mem::size_of::<T>(),
                "a block field",
            )?),
        };
        Ok(Self::with_arena(grid, arena))
    }

    /// A field on `grid` with `f(p)` at every point `p` of every present block, halos
    /// included (`p` is a global index of the block's level: halo points may lie outside
    /// the domain).
    pub fn from_fn(grid: &BlockGrid, f: impl Fn([isize; 3]) -> T) -> Result<BlockField<T>, Error> {
        BlockField::from_level_fn(grid, |_, p| f(p))
    }

    /// A field on `grid` with `f(level, p)` at every point `p` (a global index of level
    /// `level`) of every present block of that level, halos included.
    pub fn from_level_fn(
        grid: &BlockGrid,
        f: impl Fn(u8, [isize; 3]) -> T,
    ) -> Result<BlockField<T>, Error> {
        let g = *grid.geometry();
        let mut host = vec![T::zero(); grid.capacity() * g.slot_len()];
        for (slot, info) in grid.blocks() {
            let level = info.key.level;
            fill_slot(&g, &mut host, slot, g.origin(info.key), &|p| f(level, p));
        }
        Ok(Self::with_arena(
            grid,
            Arena::from_host(grid.backend(), host)?,
        ))
    }

    /// A field on `grid` with the values of the dense `field` (halo points that lie
    /// outside the dense field's storage get `outside`).
    pub fn from_dense(
        grid: &BlockGrid,
        field: &Field<T>,
        outside: T,
    ) -> Result<BlockField<T>, Error> {
        if grid.geometry().levels > 1 {
            return Err(Error::InvalidField(
                "a dense field fills a grid of one level; on several levels use BlockField::from_level_fn".into(),
            ));
        }
        let host = field.to_host()?;
        BlockField::from_fn(grid, |p| host.get(p).unwrap_or(outside))
    }

    /// Follows a change of the grid's blocks: kept blocks keep their values (moved to
    /// their new slots), added blocks get `f(p)` at every point (halos included; `p` a
    /// global index of the block's level, as in [`BlockField::from_fn`]).
    /// `change` must be the grid's latest change and this field of the layout before it.
    pub fn follow(
        &mut self,
        grid: &BlockGrid,
        change: &Relayout,
        f: impl Fn([isize; 3]) -> T,
    ) -> Result<(), Error> {
        self.check_change(grid, change)?;
        let g = self.geometry;
        let len = g.slot_len();
        // The added blocks' values, made on the host.
        let mut fresh = vec![T::zero(); change.added.len() * len];
        for (n, &slot) in change.added.iter().enumerate() {
            let key = grid
                .blocks()
                .find(|&(s, _)| s == slot)
                .map(|(_, b)| b.key)
                .ok_or_else(|| {
                    Error::InvalidField(format!("slot {slot} of an added block is empty"))
                })?;
            fill_slot(&g, &mut fresh, n, g.origin(key), &f);
        }
        self.relay(grid, change, Some(&fresh))
    }

    /// [`BlockField::follow`] with added blocks zero everywhere: nothing is made on the
    /// host or copied to a device (the added slots are zeroed where they lie).
    pub fn follow_zeroed(&mut self, grid: &BlockGrid, change: &Relayout) -> Result<(), Error> {
        self.check_change(grid, change)?;
        self.relay(grid, change, None)
    }

    /// An error unless `change` is `grid`'s latest change and this field of the layout
    /// before it.
    fn check_change(&self, grid: &BlockGrid, change: &Relayout) -> Result<(), Error> {
        if grid.id() != self.grid
            || change.from != self.generation
            || change.to != grid.generation()
        {
            return Err(Error::InvalidField(format!(
                "a block field of layout {} (grid {}) cannot follow the change {} -> {} of grid {} (now at {}): apply every change of the field's grid, in order",
                self.generation, self.grid, change.from, change.to, grid.id(), grid.generation()
            )));
        }
        Ok(())
    }

    /// Applies `change` (checked), added slots from `fresh` or zero.
    fn relay(
        &mut self,
        grid: &BlockGrid,
        change: &Relayout,
        fresh: Option<&[T]>,
    ) -> Result<(), Error> {
        let len = self.geometry.slot_len();
        let arena = std::mem::replace(&mut self.arena, Arena::Host(Vec::new()));
        self.arena = arena.relaid(grid.backend(), change, len, fresh)?;
        self.capacity = change.capacity;
        self.generation = change.to;
        Ok(())
    }

    /// Sets every halo point of every slot to `value` (the blocks' own points keep
    /// theirs).
    pub fn fill_halos(&mut self, value: T) -> Result<(), Error> {
        let g = self.geometry;
        let mut host = self.arena.to_host()?;
        for slot in 0..self.capacity {
            for_each_point(&g, g.halo, |p| {
                if (0..3).any(|a| p[a] < 0 || p[a] >= g.block[a] as isize) {
                    host[slot * g.slot_len() + g.element(p)] = value;
                }
            });
        }
        self.arena = Arena::from_host(&self.backend, host)?;
        Ok(())
    }

    /// The dense field of the domain (halo `halo`) with this field's values on the
    /// present blocks and `absent` elsewhere (halo points included): level 0's.
    pub fn to_dense(&self, grid: &BlockGrid, halo: usize, absent: T) -> Result<Field<T>, Error> {
        self.level_to_dense(grid, 0, halo, absent)
    }

    /// [`BlockField::to_dense`] of level `level`: its domain, with the values of its
    /// present blocks.
    pub fn level_to_dense(
        &self,
        grid: &BlockGrid,
        level: u8,
        halo: usize,
        absent: T,
    ) -> Result<Field<T>, Error> {
        self.check(grid, "BlockField::to_dense", "field")?;
        let g = self.geometry.at_level(level);
        let host = self.arena.to_host()?;
        let mut dense = Field::from_fn(&g.domain[..g.dims], halo, |_| absent);
        for (slot, info) in grid.blocks().filter(|(_, b)| b.key.level == level) {
            let o = g.origin(info.key);
            for_each_point(&g, 0, |p| {
                let at = [0, 1, 2].map(|a| o[a] as isize + p[a]);
                if (0..3).all(|a| (at[a] as usize) < g.domain[a]) {
                    dense.set(at, host[slot * g.slot_len() + g.element(p)]);
                }
            });
        }
        Ok(dense)
    }

    /// The value at global point `p` of a present block of level 0, halo points of the
    /// block holding `p` excluded (`None` where the block is absent or `p` is outside the
    /// domain).
    pub fn get(&self, grid: &BlockGrid, p: [usize; 3]) -> Result<Option<T>, Error> {
        self.get_at(grid, 0, p)
    }

    /// [`BlockField::get`] at point `p` of level `level`.
    pub fn get_at(&self, grid: &BlockGrid, level: u8, p: [usize; 3]) -> Result<Option<T>, Error> {
        self.check(grid, "BlockField::get", "field")?;
        match self.element_of(grid, level, p) {
            Some(at) => Ok(Some(self.arena.read(at, 1)?[0])),
            None => Ok(None),
        }
    }

    /// The arena element holding global point `p` of level `level` (`None` where its
    /// block is absent or `p` is outside the domain).
    fn element_of(&self, grid: &BlockGrid, level: u8, p: [usize; 3]) -> Option<usize> {
        let g = self.geometry.at_level(level);
        if (0..3).any(|a| p[a] >= g.domain[a]) {
            return None;
        }
        let key = g.key_of(p);
        let slot = grid.slot(key)?;
        let o = g.origin(key);
        let local = [0, 1, 2].map(|a| (p[a] - o[a]) as isize);
        Some(slot * g.slot_len() + g.element(local))
    }

    /// [`BlockField::get`] at each of `points` (level 0), read on a device with one
    /// wait for all of them.
    pub fn get_many(
        &self,
        grid: &BlockGrid,
        points: &[[usize; 3]],
    ) -> Result<Vec<Option<T>>, Error> {
        self.check(grid, "BlockField::get_many", "field")?;
        let at: Vec<Option<usize>> = points
            .iter()
            .map(|&p| self.element_of(grid, 0, p))
            .collect();
        let present: Vec<usize> = at.iter().flatten().copied().collect();
        let mut found = match &self.arena {
            Arena::Host(v) => present.iter().map(|&e| v[e]).collect(),
            Arena::Device(b) => b.gather(&present)?,
        }
        .into_iter();
        Ok(at.iter().map(|e| e.and_then(|_| found.next())).collect())
    }

    /// The values of block `key`'s slot (its points and halo, x fastest; see
    /// [`Geometry::element`]), `None` where the block is absent: one copy on a device.
    pub fn slot_values(&self, grid: &BlockGrid, key: BlockKey) -> Result<Option<Vec<T>>, Error> {
        self.check(grid, "BlockField::slot_values", "field")?;
        let len = self.geometry.slot_len();
        match grid.slot(key) {
            Some(slot) => Ok(Some(self.arena.read(slot * len, len)?)),
            None => Ok(None),
        }
    }

    /// Sets block `key`'s slot (its points and halo, as [`BlockField::slot_values`] gives
    /// them) to `values`: for a distributed run's ghost blocks, whose values come from
    /// another rank.
    pub fn set_slot_values(
        &mut self,
        grid: &BlockGrid,
        key: BlockKey,
        values: &[T],
    ) -> Result<(), Error> {
        self.check(grid, "BlockField::set_slot_values", "field")?;
        let len = self.geometry.slot_len();
        if values.len() != len {
            return Err(Error::InvalidField(format!(
                "block {key:?}: {} values given for a slot of {len}",
                values.len()
            )));
        }
        let Some(slot) = grid.slot(key) else {
            return Err(Error::InvalidField(format!(
                "block {key:?} is not present: add it before setting its values"
            )));
        };
        match &mut self.arena {
            Arena::Host(v) => v[slot * len..(slot + 1) * len].copy_from_slice(values),
            Arena::Device(b) => b.upload_at(slot * len, values)?,
        }
        Ok(())
    }

    /// The whole arena (slots in order, halos included), copied to the host.
    pub fn arena(&self) -> Result<Vec<T>, Error> {
        self.arena.to_host()
    }

    /// Bytes the arena holds allocated (it may keep room for more slots than are in use,
    /// up to twice as many, between layout changes).
    pub fn bytes(&self) -> usize {
        match &self.arena {
            Arena::Host(v) => v.capacity() * std::mem::size_of::<T>(),
            Arena::Device(b) => b.bytes,
        }
    }

    /// The backend the arena lives on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Sizes and slot layout.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Checks that this field belongs to `grid`'s present layout (for a launch of
    /// `kernel`, parameter `param`).
    pub fn check(&self, grid: &BlockGrid, kernel: &str, param: &str) -> Result<(), Error> {
        self.check_layout(kernel, param, grid.id(), grid.generation())
    }

    /// Checks that this field is of grid `id`'s layout `generation`.
    pub(crate) fn check_layout(
        &self,
        kernel: &str,
        param: &str,
        id: u64,
        generation: u64,
    ) -> Result<(), Error> {
        if self.grid != id {
            return Err(Error::InvalidField(format!(
                "`{kernel}`: field `{param}` belongs to another block grid (grid {}, launched over grid {id}); launch over the blocks of the field's own grid",
                self.grid
            )));
        }
        if self.generation != generation {
            return Err(Error::InvalidField(format!(
                "`{kernel}`: field `{param}` is of the grid's layout {} but the grid is at {generation}: call BlockField::follow with each change of the grid",
                self.generation
            )));
        }
        Ok(())
    }

    /// A CPU view of the arena, the pointer at slot 0's point (0, 0, 0) (what generated
    /// `launch_blocks` passes to a kernel's CPU code). Fails for a device arena.
    pub fn cpu_view(&self, kernel: &str, param: &str) -> Result<View<T>, Error> {
        let [sy, sz] = self.geometry.strides();
        match &self.arena {
            // SAFETY of the offset: slot 0's interior lies inside the arena when it has a
            // slot; an empty arena is never read (no block to launch over).
            Arena::Host(v) => Ok(View {
                ptr: v.as_ptr().wrapping_add(self.geometry.interior_offset()),
                sy: sy as isize,
                sz: sz as isize,
            }),
            Arena::Device(_) => Err(not_here(kernel, param, "the CPU", "on a CUDA device")),
        }
    }

    /// A writable CPU view of the arena (see [`BlockField::cpu_view`]).
    pub fn cpu_view_mut(&mut self, kernel: &str, param: &str) -> Result<ViewMut<T>, Error> {
        let [sy, sz] = self.geometry.strides();
        let offset = self.geometry.interior_offset();
        match &mut self.arena {
            Arena::Host(v) => Ok(ViewMut {
                ptr: v.as_mut_ptr().wrapping_add(offset),
                sy: sy as isize,
                sz: sz as isize,
            }),
            Arena::Device(_) => Err(not_here(kernel, param, "the CPU", "on a CUDA device")),
        }
    }

    /// The device address of slot 0's point (0, 0, 0) and the slot strides (`None` for
    /// a host arena).
    pub(crate) fn device_args(&self) -> Option<(u64, [usize; 2])> {
        match &self.arena {
            Arena::Host(_) => None,
            Arena::Device(b) => Some((
                b.ptr + (self.geometry.interior_offset() * std::mem::size_of::<T>()) as u64,
                self.geometry.strides(),
            )),
        }
    }

    /// The arena's whole memory, read-only (for halo exchange).
    pub(crate) fn host_arena(&self) -> Option<&[T]> {
        match &self.arena {
            Arena::Host(v) => Some(v),
            Arena::Device(_) => None,
        }
    }

    /// The arena's whole memory (for halo exchange).
    pub(crate) fn host_arena_mut(&mut self) -> Option<&mut [T]> {
        match &mut self.arena {
            Arena::Host(v) => Some(v),
            Arena::Device(_) => None,
        }
    }

    /// The arena's device address (for halo exchange).
    pub(crate) fn device_arena(&self) -> Option<u64> {
        match &self.arena {
            Arena::Host(_) => None,
            Arena::Device(b) => Some(b.ptr),
        }
    }
}

/// The error of a field on the wrong backend.
fn not_here(kernel: &str, param: &str, wanted: &str, is: &str) -> Error {
    Error::InvalidField(format!(
        "`{kernel}`: block field `{param}` is {is}, but the launch runs on {wanted}: make the block grid on the backend you launch on"
    ))
}

/// Runs `f` on every point of a block and `halo` points around it (local indices).
fn for_each_point(g: &Geometry, halo: usize, mut f: impl FnMut([isize; 3])) {
    let h = [0, 1, 2].map(|a| if a < g.dims { halo as isize } else { 0 });
    for k in -h[2]..g.block[2] as isize + h[2] {
        for j in -h[1]..g.block[1] as isize + h[1] {
            for i in -h[0]..g.block[0] as isize + h[0] {
                f([i, j, k]);
            }
        }
    }
}

/// Writes `f(origin + p)` at every point `p` of slot `slot` of `arena`, halo included.
fn fill_slot<T: Real>(
    g: &Geometry,
    arena: &mut [T],
    slot: usize,
    origin: [usize; 3],
    f: &impl Fn([isize; 3]) -> T,
) {
    let base = slot * g.slot_len();
    for_each_point(g, g.halo, |p| {
        let at = [0, 1, 2].map(|a| origin[a] as isize + p[a]);
        arena[base + g.element(p)] = f(at);
    });
}
