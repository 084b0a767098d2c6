//! What a solve is asked to do.

use crate::schedule::Schedule;
use stencil_runtime::Backend;

/// The boundary condition on one side of the square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundaryKind {
    /// Dirichlet imposed directly: the boundary nodes keep the values of the initial
    /// guess.
    Dirichlet,
    /// Homogeneous Neumann `du/dn = 0` (a mirror ghost node).
    Neumann,
    /// Dirichlet by penalty: the boundary node's row is the mirrored operator plus
    /// `kappa / h^2 (u - g)`; [`crate::Problem::new`] puts `kappa g / h^2` in the
    /// right-hand side.
    Penalty,
    /// Periodic: the side's nodes repeat those of the opposite side, which must be
    /// periodic too. With every side periodic the solution is defined up to a constant:
    /// the right-hand side must sum to zero and the solver returns the zero-mean solution.
    Periodic,
}

impl BoundaryKind {
    /// The code the kernels take.
    pub(crate) fn code(self) -> i64 {
        match self {
            BoundaryKind::Dirichlet => 0,
            BoundaryKind::Neumann => 1,
            BoundaryKind::Penalty => 2,
            BoundaryKind::Periodic => 3,
        }
    }
}

/// The boundary kinds of the sides of the square (or, with `bottom` and `top`, the cube).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Boundary {
    /// x = 0.
    pub west: BoundaryKind,
    /// x = 1.
    pub east: BoundaryKind,
    /// y = 0.
    pub south: BoundaryKind,
    /// y = 1.
    pub north: BoundaryKind,
    /// z = 0 (3D only).
    pub bottom: BoundaryKind,
    /// z = 1 (3D only).
    pub top: BoundaryKind,
}

impl Boundary {
    /// The same kind on every side.
    pub fn all(kind: BoundaryKind) -> Self {
        Boundary {
            west: kind,
            east: kind,
            south: kind,
            north: kind,
            bottom: kind,
            top: kind,
        }
    }

    /// The kinds in the order west, east, south, north, bottom, top.
    pub fn sides(&self) -> [BoundaryKind; 6] {
        [
            self.west,
            self.east,
            self.south,
            self.north,
            self.bottom,
            self.top,
        ]
    }

    /// Kernel codes in the order of [`Boundary::sides`].
    pub(crate) fn codes(&self) -> [i64; 6] {
        self.sides().map(BoundaryKind::code)
    }
}

/// The smoother of the preconditioner.
#[derive(Clone, Debug, PartialEq)]
pub enum Smoother {
    /// Weighted Jacobi with factor `omega` (2/3 and 4/5 are the classic choices).
    Jacobi {
        /// The relaxation factor.
        omega: f64,
    },
    /// Red-black Gauss-Seidel.
    RedBlack,
    /// Scheduled relaxation Jacobi: Jacobi sweeps whose factors cycle through a schedule
    /// that mixes over- and under-relaxation (see [`crate::srj_schedule`]).
    Srj {
        /// The factors, applied in order, one per sweep.
        factors: Vec<f64>,
    },
    /// Zebra line Gauss-Seidel along x then along y (robust for either anisotropy).
    Zebra,
}

/// The shape of a multigrid cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cycle {
    /// One coarse-grid visit per level.
    V,
    /// Two coarse-grid visits per level.
    W,
    /// An F-cycle on the coarse grid, then a V-cycle.
    F,
}

/// The order of the operator whose residual drives defect correction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The 5-point stencil (any boundary kinds).
    Second,
    /// 4th order (Dirichlet boundaries imposed directly, or periodic).
    Fourth,
    /// 6th order (Dirichlet boundaries imposed directly, or periodic; 2D only).
    Sixth,
}

impl Order {
    /// The halo the solution field needs.
    pub fn halo(self) -> usize {
        match self {
            Order::Second => 1,
            Order::Fourth => 4,
            Order::Sixth => 6,
        }
    }
}

/// The precision of the preconditioner; the residual and the update are always f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// Everything in f64.
    F64,
    /// The multigrid preconditioner entirely in f32.
    Mixed,
}

/// Solver options; [`Options::default`] is a V(2,2) cycle with red-black Gauss-Seidel,
/// 2nd order, f64, to a relative residual of 1e-10.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Cycle shape.
    pub cycle: Cycle,
    /// Start with a full multigrid pass (FMG) instead of a cycle from zero.
    pub fmg: bool,
    /// Smoothing sweeps before the coarse-grid correction.
    pub pre: usize,
    /// Smoothing sweeps after it.
    pub post: usize,
    /// The smoother.
    pub smoother: Smoother,
    /// The coarsest level's nodes per axis (3, 5, 9, ...): solved by 4n smoothing sweeps (one
    /// Gauss-Seidel sweep when 3 nodes with Dirichlet sides leave a single unknown).
    pub coarsest: usize,
    /// The order of the defect.
    pub order: Order,
    /// The preconditioner's precision.
    pub precision: Precision,
    /// Stop when the residual has fallen by this factor from the initial guess's.
    pub tolerance: f64,
    /// Give up after this many cycles.
    pub max_cycles: usize,
    /// Stop as stagnated when three cycles in a row reduce the residual by less than this
    /// factor each (a rate above it).
    pub stagnation: f64,
    /// The boundary kinds.
    pub boundary: Boundary,
    /// The penalty factor of [`BoundaryKind::Penalty`] sides.
    pub kappa: f64,
    /// The coefficient of `u_xx`.
    pub ax: f64,
    /// The coefficient of `u_yy`.
    pub ay: f64,
    /// The coefficient of `u_zz` (3D only).
    pub az: f64,
    /// On a CUDA device, record each preconditioner cycle into a CUDA graph once and
    /// replay it, instead of launching its kernels one by one (the coarse levels' kernels
    /// are too small to hide the cost of a launch). Ignored with `profile`.
    pub graph: bool,
    /// Wait for the device after every launch and charge the time to its level (slower;
    /// for [`crate::Report::levels`]).
    pub profile: bool,
    /// Which launches run fused ([`Schedule`]); `None` (the default) takes the schedule
    /// measured fastest on the solve's backend ([`Schedule::for_backend`]). The iterates
    /// are the same under every schedule.
    pub schedule: Option<Schedule>,
    /// Over several ranks ([`crate::Solver::on_ranks`]): the first level with at most
    /// this many nodes per axis, and the levels below it, are gathered whole onto every
    /// rank and cycled there by each (the finest level is always split).
    pub gather_below: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            cycle: Cycle::V,
            fmg: false,
            pre: 2,
            post: 2,
            smoother: Smoother::RedBlack,
            coarsest: 3,
            order: Order::Second,
            precision: Precision::F64,
            tolerance: 1e-10,
            max_cycles: 100,
            stagnation: 0.95,
            boundary: Boundary::all(BoundaryKind::Dirichlet),
            kappa: 1e6,
            ax: 1.0,
            ay: 1.0,
            az: 1.0,
            graph: true,
            profile: false,
            schedule: None,
            gather_below: GATHER_BELOW,
        }
    }
}

/// The default [`Options::gather_below`].
pub const GATHER_BELOW: usize = 513;

impl Options {
    /// The schedule a solve on `backend` runs: [`Options::schedule`], or the backend's.
    pub fn schedule_on(&self, backend: &Backend) -> Schedule {
        self.schedule
            .unwrap_or_else(|| Schedule::for_backend(backend))
    }
}
