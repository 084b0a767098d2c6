//! The kernel IR: a typed, dimension-generic, side-effect-free expression graph.
//!
//! A kernel is a pure function of the current point: its body, after lowering, is a DAG of
//! [`Node`]s whose roots are the value written to each output field and the value each point
//! contributes to each reduction. `let`, `if`, loops and helper calls are gone: locals are
//! SSA values, `if` is a [`Node::Select`], constant-bound loops are unrolled and helpers are
//! inlined. Nodes are hash-consed as they are built ([`KernelBuilder`]), which is common
//! subexpression elimination, and folded when their operands are constants.
//!
//! Precision: `Ty::Real` is the kernel's generic `T`; back ends instantiate it as `f32` or
//! `f64` ([`Precision`]). Real constants are kept as `f64` and rounded to the precision when
//! a back end emits them, so every back end uses the same constants.

mod analysis;
mod builder;
mod fold;
mod stages;
mod types;

pub use crate::ops::{BitOp, Comparison};
pub use analysis::{operands, OpCounts, Step};
pub use builder::KernelBuilder;
pub(crate) use fold::fold_binary;
pub use fold::Const;
pub use stages::{Stage, StageGroup, StageLayout};
use std::collections::HashMap;
pub use types::{Precision, Ty};

/// Index of a node in a kernel's arena. Operands always have smaller ids than their users.
pub type NodeId = u32;

/// Unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unary {
    /// Arithmetic negation.
    Neg,
    /// Logical not.
    Not,
    /// `|x|`
    Abs,
    /// Square root.
    Sqrt,
    /// Round toward minus infinity.
    Floor,
    /// Round toward plus infinity.
    Ceil,
    /// Round toward zero.
    Trunc,
    /// Round to the nearest integer, halves away from zero (Rust's `round`).
    Round,
    /// `e^x`.
    Exp,
    /// Natural logarithm.
    Ln,
    /// `2^x`.
    Exp2,
    /// Base-2 logarithm.
    Log2,
    /// Base-10 logarithm.
    Log10,
    /// Hyperbolic sine.
    Sinh,
    /// Hyperbolic cosine.
    Cosh,
    /// Hyperbolic tangent.
    Tanh,
    /// Cube root (of any sign).
    Cbrt,
    /// Inverse hyperbolic sine.
    Asinh,
    /// Inverse hyperbolic cosine.
    Acosh,
    /// Inverse hyperbolic tangent.
    Atanh,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Tangent.
    Tan,
    /// Arc sine.
    Asin,
    /// Arc cosine.
    Acos,
    /// Arc tangent.
    Atan,
}

/// Binary operations. Comparisons yield `bool`; the rest keep the operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binary {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer division truncates; division by zero yields 0)
    Div,
    /// `%` (sign of the dividend; remainder by zero yields 0)
    Rem,
    /// Minimum (the non-NaN operand if one is NaN).
    Min,
    /// Maximum (the non-NaN operand if one is NaN).
    Max,
    /// Magnitude of the first operand with the sign of the second.
    CopySign,
    /// `x^y` for real `x > 0`.
    Pow,
    /// `sqrt(x^2 + y^2)` without overflow or underflow in between.
    Hypot,
    /// The angle of the point `(x, y)`, as Rust's `y.atan2(x)` (first operand `y`).
    Atan2,
    /// Logical and (both sides evaluated).
    And,
    /// Logical or (both sides evaluated).
    Or,
    /// A comparison, yielding `bool`.
    Compare(Comparison),
    /// A bit operation.
    Bit(BitOp),
}

impl Binary {
    /// Whether this compares and yields `bool`.
    pub fn is_comparison(self) -> bool {
        matches!(self, Binary::Compare(_))
    }
}

/// Kinds of fused reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum of the contributions.
    Sum,
    /// Largest contribution.
    Max,
    /// Smallest contribution.
    Min,
}

impl ReduceOp {
    /// The identity element: what a point that contributes nothing adds.
    pub fn identity(self) -> f64 {
        match self {
            ReduceOp::Sum => 0.0,
            ReduceOp::Max => f64::NEG_INFINITY,
            ReduceOp::Min => f64::INFINITY,
        }
    }

    /// The type name used in kernel signatures.
    pub fn type_name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "Sum",
            ReduceOp::Max => "Max",
            ReduceOp::Min => "Min",
        }
    }

    /// The combining operation.
    pub fn combine(self) -> Binary {
        match self {
            ReduceOp::Sum => Binary::Add,
            ReduceOp::Max => Binary::Max,
            ReduceOp::Min => Binary::Min,
        }
    }
}

/// A node of the expression graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A real constant, stored as the bits of an `f64`; its type is in [`Kernel::types`].
    RealConst(u64),
    /// An integer constant.
    IntConst(i64),
    /// A boolean constant.
    BoolConst(bool),
    /// The value of scalar parameter number `n`.
    Scalar(u32),
    /// The index of the current point along an axis (0-based, interior).
    Index(u8),
    /// The number of points along an axis.
    Extent(u8),
    /// Input field `field` read at `offset` from the current point.
    Load {
        /// Field number in [`Kernel::fields`].
        field: u32,
        /// Offset per axis (unused axes are 0).
        offset: [i32; 3],
    },
    /// A unary operation.
    Unary(Unary, NodeId),
    /// A binary operation.
    Binary(Binary, NodeId, NodeId),
    /// Fused multiply-add `a * b + c` with one rounding.
    Fma(NodeId, NodeId, NodeId),
    /// `if c { a } else { b }` (both evaluated; they have no side effects).
    Select(NodeId, NodeId, NodeId),
    /// Conversion to the node's type.
    Cast(NodeId),
    /// Input field `field` at vertex `vertex` (an `i64` vertex number taken from the mesh):
    /// a vertex kernel's gather from a neighbour or a triangle corner.
    Gather {
        /// Field number in [`Kernel::fields`].
        field: u32,
        /// The vertex read.
        vertex: NodeId,
    },
    /// An entry of a mesh table at list position `pos` (an `i64` vertex number).
    Topo {
        /// Which table.
        table: Topo,
        /// The position in the current vertex's list.
        pos: NodeId,
    },
    /// Sampled grid `grid` at the point `(x, y)` (real nodes of the grid's element type),
    /// interpolated bilinearly between its four nearest samples; positions outside the
    /// grid are clamped to its edge. See [`SampledParam`].
    Sample {
        /// Grid number in [`Kernel::sampled`].
        grid: u32,
        /// The position's first coordinate.
        x: NodeId,
        /// The position's second coordinate.
        y: NodeId,
    },
    /// The position in its list of the item that run-time loop `n` is at (`i64`).
    LoopPos(u32),
    /// The value of carried variable `k` of run-time loop `n` as an iteration starts.
    Carried(u32, u32),
    /// The value of carried variable `k` of run-time loop `n` after its last iteration.
    LoopResult(u32, u32),
    /// The unknown of a line kernel's tridiagonal system at the current point. It exists
    /// only while lowering (it is what `u = tridiagonal(..)` assigns) and is never live in a
    /// finished kernel, whose [`Kernel::line`] describes the solve instead.
    LineSolution(u32),
    /// Staged value `stage` (see [`Stage`]) at `offset` from the current point: the
    /// stage's value node evaluated at that neighbour. Its operands are not the kernel's
    /// nodes at the current point, so it is a leaf of the point's graph; back ends that
    /// keep nothing on chip replace it by the stage's nodes shifted to the offset
    /// ([`Kernel::unstaged`]).
    Staged {
        /// Stage number in [`Kernel::stages`].
        stage: u32,
        /// Offset per axis (unused axes are 0).
        offset: [i32; 3],
    },
}

/// The mesh tables a vertex kernel reads, each indexed by a position in the current
/// vertex's list of neighbours or of triangles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Topo {
    /// The neighbour at a position of the neighbour list.
    Neighbour,
    /// The corner after the vertex (counter-clockwise) of a triangle of the triangle list.
    Corner1,
    /// The corner before the vertex (the third corner) of a triangle of the triangle list.
    Corner2,
}

/// What a run-time loop of a vertex kernel runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Around {
    /// `mesh.neighbours()`: the vertices that share an edge with the current one.
    Neighbours,
    /// `mesh.triangles()`: the triangles that have the current vertex as a corner.
    Triangles,
}

/// A loop of a vertex kernel over a list of the current vertex, carrying values from one
/// iteration to the next: carried variable `k` starts at `init[k]` and becomes `next[k]`
/// (computed from [`Node::Carried`] and [`Node::LoopPos`]) at the end of each iteration;
/// [`Node::LoopResult`] is its value after the loop.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeLoop {
    /// The list.
    pub over: Around,
    /// The carried variables' values before the loop.
    pub init: Vec<NodeId>,
    /// The carried variables' values at the end of an iteration.
    pub next: Vec<NodeId>,
    /// The carried variable (a `bool`) that a `break` in the body sets false: the loop
    /// stops after an iteration that leaves it false. `None`: the loop runs over the
    /// whole list.
    pub stops_when: Option<u32>,
}

/// How a kernel accesses a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read at offsets, never written.
    In,
    /// Written at the centre, never read.
    Out,
    /// Read and written in place: read at the centre (and, in a red-black kernel, at
    /// offsets of odd parity, which belong to the other colour); written at the centre,
    /// possibly only at some points (see [`Store::mask`]).
    InOut,
}

impl Access {
    /// Whether the kernel reads the field.
    pub fn is_read(self) -> bool {
        self != Access::Out
    }

    /// Whether the kernel writes the field.
    pub fn is_written(self) -> bool {
        self != Access::In
    }
}

/// How a field's indices relate to the domain's: the grid transfers of multigrid read a
/// field on a finer or coarser grid than the one they write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexMap {
    /// The field lies on the domain's grid: point `i` reads index `i + offset`.
    Same,
    /// `Fine<T>`: the field's grid is twice as fine: point `i` reads index `2i + offset`.
    Fine,
    /// `Coarse<T>`: the field's grid is twice as coarse: point `i` reads index
    /// `floor(i / 2) + offset`.
    Coarse,
}

impl IndexMap {
    /// The field index that domain index `i` maps to (before the offset).
    pub fn apply(self, i: i64) -> i64 {
        match self {
            IndexMap::Same => i,
            IndexMap::Fine => 2 * i,
            IndexMap::Coarse => i.div_euclid(2),
        }
    }

    /// Where a read at `offset` of the point `shift` away from a thread's first point
    /// lands, relative to the field's index of that first point. For `Coarse` this
    /// needs the first point's index to be even along every axis the tile spans (a
    /// tile spans 1 or an even number of points along each axis).
    pub fn tile_offset(self, shift: [i32; 3], offset: [i32; 3]) -> [i32; 3] {
        [0, 1, 2].map(|a| {
            offset[a]
                + match self {
                    IndexMap::Same => shift[a],
                    IndexMap::Fine => 2 * shift[a],
                    IndexMap::Coarse => shift[a].div_euclid(2),
                }
        })
    }
}

/// A write of a field at the current point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Store {
    /// Field number in [`Kernel::fields`].
    pub field: u32,
    /// The value written.
    pub value: NodeId,
    /// When present, the point is written only where this boolean node is true (an
    /// `InOut` field assigned on some paths, or a red-black kernel).
    pub mask: Option<NodeId>,
}

/// The tridiagonal solve of a line kernel: along each grid line of [`LineSolve::axis`],
/// find `u` with `lower * u[-1] + diag * u + upper * u[+1] = rhs` at every point, the four
/// coefficients being nodes evaluated at the point. The values of `u` just outside the line
/// (in the halo) are known: their terms move to the right-hand side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineSolve {
    /// The axis the lines run along.
    pub axis: u8,
    /// The field solved for (an `Out` or `InOut` field).
    pub field: u32,
    /// Coefficient of the unknown before the point.
    pub lower: NodeId,
    /// Coefficient of the unknown at the point.
    pub diag: NodeId,
    /// Coefficient of the unknown after the point.
    pub upper: NodeId,
    /// The right-hand side.
    pub rhs: NodeId,
    /// When present, a line is solved only where this node, which is the same at every
    /// point of a line, is true; other lines keep their values.
    pub mask: Option<NodeId>,
}

/// A field parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldParam {
    /// Name as declared.
    pub name: String,
    /// In or out.
    pub access: Access,
    /// Element type.
    pub elem: Ty,
    /// Smallest offset read per axis (<= 0).
    pub reach_lo: [i32; 3],
    /// Largest offset read per axis (>= 0).
    pub reach_hi: [i32; 3],
    /// How the field's indices relate to the domain's.
    pub map: IndexMap,
    /// For a member of a group taken as fields (`from.w` of `from: In<State<T>>`): where
    /// it came from; the launcher takes the group's struct of fields.
    pub member_of: Option<crate::ast::MemberOf>,
}

impl FieldParam {
    /// The halo width this field needs: the largest offset in magnitude on any axis.
    pub fn halo(&self) -> u32 {
        self.reach_lo
            .iter()
            .chain(self.reach_hi.iter())
            .map(|o| o.unsigned_abs())
            .max()
            .unwrap_or(0)
    }
}

/// A `Sampled<T>` parameter: a 2D grid of `nx x ny` samples over a rectangle, read at any
/// position by bilinear interpolation (`g.sample(x, y)`). Its geometry (extent, origin and
/// spacing) comes with it at launch. On the GPU the samples are read from memory and
/// interpolated in software, or, in the texture variant of the PTX, fetched through a
/// texture object with hardware filtering (f32 samples, 8-bit interpolation weights).
#[derive(Clone, Debug, PartialEq)]
pub struct SampledParam {
    /// Name as declared.
    pub name: String,
    /// Element type (a real type).
    pub elem: Ty,
}

/// A scalar parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarParam {
    /// Name as declared; for one axis of an `Axes<E>` parameter `a`, `a_0`, `a_1`, ...
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// For one axis of an `Axes<E>` parameter: the parameter's name and the axis.
    pub axis_of: Option<(String, u8)>,
    /// For a member of a group parameter (`s.g` of `s: Scheme<T>`): where it came from;
    /// the launcher takes the group's struct and passes its members.
    pub member_of: Option<crate::ast::MemberOf>,
    /// A `Value<T>` parameter: a scalar held on the backend (written there by an earlier
    /// launch, e.g. a reduction kept on the device), which the kernel reads from memory
    /// when it starts instead of receiving it from the host.
    pub held: bool,
}

/// A fused reduction parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ReductionParam {
    /// Name as declared.
    pub name: String,
    /// Sum, max or min.
    pub op: ReduceOp,
    /// The type the reduction is computed in (a real type).
    pub ty: Ty,
    /// The type of the result the launch returns: `ty`, or `i64` for a reduction of
    /// integers and `bool` for one of booleans, computed exactly in `f64` (integers while
    /// their magnitudes stay below 2^53; booleans as 0 and 1: `Max` is any, `Min` all).
    pub result: Ty,
}

/// A checked, optimised kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// The kernel's name.
    pub name: String,
    /// Number of grid dimensions (1, 2 or 3).
    pub dims: u8,
    /// Field parameters in declaration order.
    pub fields: Vec<FieldParam>,
    /// Scalar parameters in declaration order.
    pub scalars: Vec<ScalarParam>,
    /// Reductions in declaration order.
    pub reductions: Vec<ReductionParam>,
    /// Sampled grids in declaration order.
    pub sampled: Vec<SampledParam>,
    /// The parameters in declaration order, as (kind, index into the list of that kind).
    pub param_order: Vec<(ParamKind, u32)>,
    /// The node arena; operands precede users.
    pub nodes: Vec<Node>,
    /// The type of each node.
    pub types: Vec<Ty>,
    /// The writes of each point, one per written field (none in a line kernel).
    pub stores: Vec<Store>,
    /// For each reduction (by reduction number), the node each point contributes.
    pub contributions: Vec<(u32, NodeId)>,
    /// A line kernel's solve: then the kernel runs once per line, not per point.
    pub line: Option<LineSolve>,
    /// A red-black kernel's colour parameter (a scalar number).
    pub red_black: Option<u32>,
    /// A vertex kernel's `Mesh` parameter: then the kernel runs once per vertex of a set,
    /// its fields hold one value per vertex, and it may loop over the vertex's neighbours
    /// and triangles.
    pub mesh: Option<String>,
    /// The run-time loops of a vertex kernel.
    pub loops: Vec<RuntimeLoop>,
    /// The compile-time constant parameters (`consts(..)`) this kernel was made for, with
    /// their values; they are not parameters of the kernel.
    pub consts: Vec<(String, crate::ast::ConstValue)>,
    /// The kernel's staged values (`let f = stage(..)`), read by [`Node::Staged`].
    pub stages: Vec<Stage>,
}

/// The three kinds of kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A field.
    Field,
    /// A scalar.
    Scalar,
    /// A reduction.
    Reduction,
    /// A vertex kernel's mesh (at most one).
    Mesh,
    /// A sampled grid.
    Sampled,
}
