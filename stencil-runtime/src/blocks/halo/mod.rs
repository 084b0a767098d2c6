//! [`HaloExchange`]: filling every present block's halo in one pass.
//!
//! An exchange is planned once per layout, rule and width (the layers of halo it fills):
//! for every halo point of every present block (and every point of a block that lies
//! past the domain's edge), where its value comes from. Inside the domain that is the
//! point of the neighbouring block that holds it; past the domain's edges, the side's
//! rule ([`Side`]); where the neighbouring block is absent, the grid's rule for absent
//! blocks ([`Absent`]). Sources are always interior points, so every point is
//! independent and one launch fills them all (on the CPU, in parallel), plus a second
//! for the points of several weighted sources on a device.
//!
//! The plan has two parts. Blocks away from the domain's edges (or across periodic
//! sides) share one *template* of their halo points, each naming the neighbour that holds
//! it, and have a row of a *table*: their slot and their neighbours' slots. Planning them
//! costs a few lookups per block, so a grid whose blocks change every few steps replans
//! cheaply. The other blocks (at non-periodic edges, next to a neighbour that sticks out
//! of the domain thinner than the halo, or with an absent neighbour under
//! [`Absent::Values`] or [`Absent::Coarser`]) get an entry `(destination, source,
//! operation)` per point, the operation `value = scale * source + add` or a value of the
//! entry's own, or a weighted entry of several sources (past a [`Side::Extrapolate`],
//! next to an absent block under [`Absent::Coarser`]).
//!
//! Later layers extend the plan rather than the launch: a remote neighbour (another rank)
//! becomes entries whose source is a receive buffer; a coarser neighbour (adaptive grids)
//! became entries with several weighted sources, which a device fills in a launch of
//! their own (`kernels-gen`'s `llvm::halo_weighted`).

mod plan;
mod run;

use super::field::BlockField;
use super::grid::{BlockGrid, BlockKey};
use super::predict::Predictor;
use crate::cuda::memory::DeviceBuffer;
use crate::{Backend, Error, Precision, Real};
use plan::Plan;
use std::sync::Arc;

/// What a halo point past one side of the domain holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    /// The point of the opposite side (the domain repeats).
    Periodic,
    /// The mirror image of the point across the side (cell-centred: the first point past
    /// the side mirrors the last one before it), times `sign` (-1 for the velocity normal
    /// to a wall).
    Mirror(f64),
    /// The nearest point inside the domain (zero gradient: an outlet).
    Clamp,
    /// A fixed value.
    Value(f64),
    /// The cubic through the four nearest points inside of the point's parity (at stride
    /// 2: the points the wavelet predictors read), so that a symmetric predictor next to
    /// the side gives the one-sided one (see [`super::predict`]). Points of the side's
    /// blocks then take per-point entries of several sources (on a device, a second
    /// launch of the exchange).
    Extrapolate,
}

/// What a halo point holds where the neighbouring block inside the domain is absent.
#[derive(Clone)]
pub enum Absent {
    /// The nearest point of the block itself (zero gradient).
    Clamp,
    /// A fixed value (for water at rest: zero discharge).
    Value(f64),
    /// A value per point of the domain, given its global index. Evaluated when the
    /// exchange is planned, per point: blocks with an absent neighbour take the slower
    /// per-point path (prefer [`Absent::Companion`] for grids that change often).
    Values(Arc<dyn Fn([usize; 3]) -> f64 + Send + Sync>),
    /// The value of a companion field of the same grid at the same element of the
    /// block's slot, given to [`HaloExchange::run_with`]: a field whose halos hold,
    /// everywhere, what an absent neighbour would give there, the side rules applied (for
    /// water: the dry surface, the bed's height, computed once). Fields exchanged by
    /// the same launch without a companion ([`HaloExchange::run_paired`]) take zero.
    Companion,
    /// On a grid of several vertex-centred levels: the prediction from the next coarser
    /// level's blocks, which must be present there (neighbouring blocks at most one level
    /// apart).
    Coarser(Predictor),
}

impl std::fmt::Debug for Absent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Absent::Clamp => write!(f, "Clamp"),
            Absent::Value(v) => write!(f, "Value({v})"),
            Absent::Values(_) => write!(f, "Values(..)"),
            Absent::Companion => write!(f, "Companion"),
            Absent::Coarser(p) => write!(f, "Coarser({p:?})"),
        }
    }
}

/// Layers of halo an exchange fills along each axis: (below the block, above it).
pub type HaloWidths = [[usize; 2]; 3];

/// How one field's halos are filled: a rule per side of each axis (low, high) and one
/// for absent neighbours.
#[derive(Clone, Debug)]
pub struct HaloRule {
    /// Per axis, the low and the high side (entries of unused axes are ignored).
    pub sides: [[Side; 2]; 3],
    /// Where a neighbouring block is absent.
    pub absent: Absent,
}

impl HaloRule {
    /// The same rule on every side.
    pub fn uniform(side: Side, absent: Absent) -> HaloRule {
        HaloRule {
            sides: [[side; 2]; 3],
            absent,
        }
    }
}

/// The plan of one halo exchange on one layout of a grid (see the module's text).
#[derive(Debug)]
pub struct HaloExchange {
    grid: u64,
    generation: u64,
    plan: Plan,
    /// [`Plan::reach`], checked against a field's arena before each run on the CPU.
    reach: usize,
    /// The plan's tables on the device, for a CUDA grid.
    device: Option<DevicePlan>,
}

/// A plan's tables on a device.
#[derive(Debug)]
struct DevicePlan {
    template: Option<DeviceBuffer>,
    table: Option<DeviceBuffer>,
    entries: Option<DeviceBuffer>,
    /// The operations in f32 and in f64.
    ops: [Option<DeviceBuffer>; 2],
    /// The per-entry values in f32 and in f64 (if any entry has one).
    own: [Option<DeviceBuffer>; 2],
    /// The points of several sources ([`Plan::weighted`]), their sources' elements and
    /// their weights in f32 and in f64 (if any).
    weighted: Option<DeviceBuffer>,
    sources: Option<DeviceBuffer>,
    weights: [Option<DeviceBuffer>; 2],
}

impl HaloExchange {
    /// Plans the exchange of `rule` on `grid`'s present layout, filling the whole halo.
    /// Fails if a neighbouring block is owned by another rank (not exchanged yet).
    pub fn new(grid: &BlockGrid, rule: &HaloRule) -> Result<HaloExchange, Error> {
        HaloExchange::with_width(grid, rule, grid.geometry().halo)
    }

    /// Plans the exchange of `rule` filling the `width` layers of halo next to each block
    /// (at most the grid's halo; the points of a block past the domain's edge are always
    /// filled). Kernels must not read further than `width` from a block.
    pub fn with_width(
        grid: &BlockGrid,
        rule: &HaloRule,
        width: usize,
    ) -> Result<HaloExchange, Error> {
        HaloExchange::with_widths(grid, rule, [[width; 2]; 3])
    }

    /// Plans the exchange of `rule` filling, along each axis `a`, `widths[a][0]` layers
    /// below each block and `widths[a][1]` above (each at most the grid's halo; the
    /// points of a block past the domain's edge are always filled): a kernel that reads
    /// only its east and north neighbours needs `[[0, 1], [0, 1], [0, 0]]`.
    pub fn with_widths(
        grid: &BlockGrid,
        rule: &HaloRule,
        widths: HaloWidths,
    ) -> Result<HaloExchange, Error> {
        HaloExchange::of_plan(grid, Plan::new(grid, rule, widths, None)?)
    }

    /// Plans the exchange of `rule` filling `width` layers of halo (at most the grid's)
    /// of the blocks of level `level` only: on a grid of several levels, a multigrid
    /// cycle's smoother works a level at a time.
    pub fn of_level(
        grid: &BlockGrid,
        rule: &HaloRule,
        level: u8,
        width: usize,
    ) -> Result<HaloExchange, Error> {
        let widths = [[width; 2]; 3];
        let on_level = |k: BlockKey| k.level == level;
        HaloExchange::of_plan(grid, Plan::new(grid, rule, widths, Some(&on_level))?)
    }

    /// Plans the exchange of `rule` filling, as [`HaloExchange::with_widths`], the halos
    /// of the present blocks `keys` only (their neighbours are read, not filled): a run
    /// over ranks fills the halos of the blocks inside its part while the ghosts travel,
    /// and of the blocks next to them after.
    pub fn of_blocks(
        grid: &BlockGrid,
        rule: &HaloRule,
        widths: HaloWidths,
        keys: &[BlockKey],
    ) -> Result<HaloExchange, Error> {
        let set: std::collections::HashSet<BlockKey> = keys.iter().copied().collect();
        let listed = |k: BlockKey| set.contains(&k);
        HaloExchange::of_plan(grid, Plan::new(grid, rule, widths, Some(&listed))?)
    }

    /// An exchange of no halo that copies points `(destination, source)` and sums points
    /// `(destination, weighted sources)` of `grid`'s arena elements, every source a point
    /// no destination names: transfers between levels ([`super::LevelTransfer`]).
    pub(crate) fn transfers(
        grid: &BlockGrid,
        copies: &[(u32, u32)],
        sums: &[(u32, Vec<(u32, f64)>)],
    ) -> Result<HaloExchange, Error> {
        HaloExchange::of_plan(grid, Plan::transfers(grid, copies, sums))
    }

    /// The exchange of `plan` on `grid`'s present layout, its tables on the grid's device.
    fn of_plan(grid: &BlockGrid, plan: Plan) -> Result<HaloExchange, Error> {
        let device = match grid.backend() {
            Backend::Cpu => None,
            Backend::Cuda(c) => {
                let s = c.stream();
                let upload = |v: &[u32]| -> Result<Option<DeviceBuffer>, Error> {
                    if v.is_empty() {
                        return Ok(None);
                    }
                    DeviceBuffer::from_slice(s, v, "a halo exchange").map(Some)
                };
                let table: Vec<u32> = plan.table.iter().map(|&x| x as u32).collect();
                let reals = |v: &[f64]| -> Result<[Option<DeviceBuffer>; 2], Error> {
                    if v.is_empty() {
                        return Ok([None, None]);
                    }
                    let f32s: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                    Ok([
                        Some(DeviceBuffer::from_slice(s, &f32s, "a halo exchange")?),
                        Some(DeviceBuffer::from_slice(s, v, "a halo exchange")?),
                    ])
                };
                let ops: Vec<f64> = plan.ops.iter().flat_map(|&(a, b)| [a, b]).collect();
                let (sources, weights): (Vec<u32>, Vec<f64>) = plan.sources.iter().copied().unzip();
                Some(DevicePlan {
                    template: upload(&plan.template)?,
                    table: upload(&table)?,
                    entries: upload(&plan.entries)?,
                    ops: reals(&ops)?,
                    own: reals(&plan.own)?,
                    weighted: upload(&plan.weighted)?,
                    sources: upload(&sources)?,
                    weights: reals(&weights)?,
                })
            }
        };
        Ok(HaloExchange {
            grid: grid.id(),
            generation: grid.generation(),
            reach: plan.reach(),
            plan,
            device,
        })
    }

    /// The number of points the exchange fills.
    pub fn len(&self) -> usize {
        self.plan.structured_blocks() * self.plan.template_points()
            + self.plan.entries.len() / 3
            + self.plan.weighted.len() / 3
    }

    /// Whether it fills none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The blocks filled through the shared template (the rest take per-point entries).
    pub fn structured_blocks(&self) -> usize {
        self.plan.structured_blocks()
    }

    /// Whether the plan was made for the grid's present layout.
    pub fn is_current(&self, grid: &BlockGrid) -> bool {
        self.grid == grid.id() && self.generation == grid.generation()
    }

    /// Fills `field`'s halos (one launch on a device; in parallel on the CPU). A rule
    /// with [`Absent::Companion`] needs [`HaloExchange::run_with`].
    pub fn run<T: Real>(&self, field: &mut BlockField<T>) -> Result<(), Error> {
        self.fill(&mut [field], None)
    }

    /// Fills the halos of several fields of the grid's layout by the same plan: one
    /// launch for up to eight fields on a device (the face fluxes of a scheme, the
    /// components of a velocity), rather than one each.
    pub fn run_many<T: Real>(&self, fields: &mut [&mut BlockField<T>]) -> Result<(), Error> {
        self.fill(fields, None)
    }

    /// [`HaloExchange::run_many`] queued on `on`'s stream (a stream of the fields'
    /// device, or the CPU for fields on the host) rather than the fields': to fill halos
    /// beside other work, after work queued there.
    pub fn run_many_on<T: Real>(
        &self,
        on: &Backend,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), Error> {
        self.check(fields, None)?;
        self.fill_each(fields, &vec![None; fields.len()], Some(on))
    }

    /// Fills `field`'s halos, taking the value where a neighbour is absent from
    /// `companion` (a field of the same grid and layout; see [`Absent::Companion`]).
    pub fn run_with<T: Real>(
        &self,
        field: &mut BlockField<T>,
        companion: &BlockField<T>,
    ) -> Result<(), Error> {
        self.fill(&mut [field], Some(companion))
    }

    /// Fills the halos of `paired` (which take absent neighbours' values from its
    /// companion, see [`Absent::Companion`]) and of `fields` (which take zero there) in
    /// one launch on a device: the surface and the velocities of a scheme, say.
    pub fn run_paired<T: Real>(
        &self,
        paired: (&mut BlockField<T>, &BlockField<T>),
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), Error> {
        self.paired(None, paired, fields)
    }

    /// [`HaloExchange::run_paired`] queued on `on`'s stream (see
    /// [`HaloExchange::run_many_on`]).
    pub fn run_paired_on<T: Real>(
        &self,
        on: &Backend,
        paired: (&mut BlockField<T>, &BlockField<T>),
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), Error> {
        self.paired(Some(on), paired, fields)
    }

    /// [`HaloExchange::run_paired`] on `on`'s stream where given, else the fields'.
    fn paired<T: Real>(
        &self,
        on: Option<&Backend>,
        paired: (&mut BlockField<T>, &BlockField<T>),
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), Error> {
        let (field, companion) = paired;
        let mut all: Vec<&mut BlockField<T>> = Vec::with_capacity(1 + fields.len());
        all.push(field);
        all.extend(fields.iter_mut().map(|f| &mut **f));
        self.check(&all, Some(companion))?;
        let mut companions = vec![None; all.len()];
        companions[0] = Some(companion);
        self.fill_each(&mut all, &companions, on)
    }

    /// [`HaloExchange::run_many`] and [`HaloExchange::run_with`] (one companion for all
    /// the fields).
    fn fill<T: Real>(
        &self,
        fields: &mut [&mut BlockField<T>],
        companion: Option<&BlockField<T>>,
    ) -> Result<(), Error> {
        self.check(fields, companion)?;
        let needs = self.plan.mode == plan::Mode::Companion
            && (self.plan.structured_blocks() > 0 || self.plan.entries.contains(&plan::COMPANION));
        if needs && companion.is_none() {
            return Err(Error::InvalidField(
                "the halo rule takes absent neighbours' values from a companion field: use run_with(field, companion)".into(),
            ));
        }
        self.fill_each(fields, &vec![companion; fields.len()], None)
    }

    /// Checks that the fields and the companion are of the plan's layout.
    fn check<T: Real>(
        &self,
        fields: &[&mut BlockField<T>],
        companion: Option<&BlockField<T>>,
    ) -> Result<(), Error> {
        for field in fields.iter() {
            field.check_layout("halo exchange", "field", self.grid, self.generation)?;
        }
        if let Some(c) = companion {
            c.check_layout("halo exchange", "companion", self.grid, self.generation)?;
        }
        Ok(())
    }

    /// Fills each field's halos, absent values from its companion where it has one and
    /// the plan asks (checked by the caller), on `on`'s stream where given.
    fn fill_each<T: Real>(
        &self,
        fields: &mut [&mut BlockField<T>],
        companions: &[Option<&BlockField<T>>],
        on: Option<&Backend>,
    ) -> Result<(), Error> {
        let other_backend = || {
            Error::InvalidField(
                "the companion field lives on another backend than the field".into(),
            )
        };
        let on_host = fields.iter().all(|f| f.host_arena().is_some());
        if on_host {
            for (field, companion) in fields.iter_mut().zip(companions) {
                let companion = match companion {
                    Some(c) => Some(c.host_arena().ok_or_else(other_backend)?),
                    None => None,
                };
                let arena = field.host_arena_mut().expect("checked above");
                if arena.len() < self.reach || companion.is_some_and(|c| c.len() < self.reach) {
                    return Err(Error::InvalidField(format!(
                        "a halo exchange names element {} of an arena of {}: the field is not of the planned layout",
                        self.reach - 1,
                        arena.len()
                    )));
                }
                run::on_host(&self.plan, arena, companion);
            }
            return Ok(());
        }
        let companions = companions
            .iter()
            .map(|c| match c {
                Some(c) => c.device_arena().ok_or_else(other_backend),
                None => Ok(0),
            })
            .collect::<Result<Vec<u64>, Error>>()?;
        let groups = fields.chunks(crate::cuda::HALO_FIELDS);
        for (group, companions) in groups.zip(companions.chunks(crate::cuda::HALO_FIELDS)) {
            self.fill_on_device(group, companions, on)?;
        }
        Ok(())
    }

    /// One launch filling `fields` (at most [`crate::cuda::HALO_FIELDS`]) on their
    /// device, absent values from the arenas at `companions` (0: none).
    fn fill_on_device<T: Real>(
        &self,
        fields: &[&mut BlockField<T>],
        companions: &[u64],
        on: Option<&Backend>,
    ) -> Result<(), Error> {
        let planned_elsewhere = || {
            Error::InvalidField(
                "the halo exchange was planned on another backend than the field's".into(),
            )
        };
        let (Some(device), Some(Backend::Cuda(cuda))) =
            (&self.device, fields.first().map(|f| f.backend()))
        else {
            return Err(planned_elsewhere());
        };
        let cuda = match on {
            None => cuda,
            Some(Backend::Cuda(c)) if c.ordinal() == cuda.ordinal() => c,
            Some(_) => {
                return Err(Error::InvalidField(
                    "a halo exchange queued on a stream of another device than its fields'".into(),
                ))
            }
        };
        let mut arenas = [0; crate::cuda::HALO_FIELDS];
        for (a, f) in arenas.iter_mut().zip(fields) {
            *a = f.device_arena().ok_or_else(planned_elsewhere)?;
        }
        let k = match T::PRECISION {
            Precision::F32 => 0,
            Precision::F64 => 1,
        };
        let ptr = |b: &Option<DeviceBuffer>| b.as_ref().map_or(0, |b| b.ptr);
        let launch = crate::cuda::HaloLaunch {
            structured: self.plan.structured_blocks() * self.plan.template_points(),
            points: self.plan.template_points(),
            template: ptr(&device.template),
            table: ptr(&device.table),
            stride: self.plan.stride,
            slot_len: self.plan.slot_len,
            mode: self.plan.mode as u64,
            absent: self.plan.absent_op as u64,
            count: self.plan.entries.len() / 3,
            entries: ptr(&device.entries),
            ops: ptr(&device.ops[k]),
            own: ptr(&device.own[k]),
            arenas,
            companions: std::array::from_fn(|f| companions.get(f).copied().unwrap_or(0)),
            fields: fields.len(),
        };
        // SAFETY: the plan was made for the fields' layout (checked above): its template,
        // table and entries name elements of every field's arena (and of the companion's,
        // checked to be of the same layout) and operations of the table.
        unsafe { crate::cuda::queue_halo_exchange(cuda, T::PRECISION, &launch)? };
        // The points of several sources, in a second launch on the same stream (their
        // sources are points of blocks, which neither launch fills).
        let weighted = crate::cuda::PointLaunch::Weighted {
            weighted: ptr(&device.weighted),
            sources: ptr(&device.sources),
            weights: ptr(&device.weights[k]),
        };
        let count = self.plan.weighted.len() / 3;
        // SAFETY: as above; the weighted points' terms lie inside the sources and weights
        // uploaded with them.
        unsafe {
            crate::cuda::queue_points(cuda, T::PRECISION, weighted, count, &arenas, fields.len())
        }
    }
}
