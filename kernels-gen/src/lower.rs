//! Checking and lowering: surface AST -> kernel IR.
//!
//! One pass does name resolution, type checking, helper inlining, loop unrolling, the
//! conversion of `if` and mutable locals to selects (SSA), footprint inference and the
//! dimension check. Every user mistake becomes a [`LowerError`] pointing at the offending
//! node, with a message that says what to do instead.

use crate::ast::{self, Block, Expr, ExprKind, FnDef, FnKind, Ident, Lit, Module, SpanId, Stmt};
use crate::ir::{
    Access, Around, Binary, BitOp, Comparison, FieldParam, IndexMap, Kernel, KernelBuilder,
    LineSolve, Node, NodeId, ParamKind, ReduceOp, ReductionParam, RuntimeLoop, SampledParam,
    ScalarParam, Store, Ty, Unary,
};
use std::collections::HashMap;

mod axes;
mod breaks;
mod calls;
pub mod consts;
mod dims;
mod early;
mod expressions;
mod finish;
mod helpers;
mod instance;
mod narrow;
mod params;
mod powi;
mod sampled;
mod stages;
mod statements;
mod tuples;
mod vertex;
mod walk;

pub(crate) use axes::AXES_TYPE;
use instance::{check_generics, lower_instance};

/// The built-in helpers every kernel may call (2x2 matrix arithmetic), written in the
/// language itself: `lower/prelude.stencil`.
pub const PRELUDE: &str = include_str!("lower/prelude.stencil");

fn prelude() -> &'static Module {
    static PARSED: std::sync::OnceLock<Module> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| {
        crate::front::text::parse_module(PRELUDE)
            .expect("the prelude parses (checked by a test)")
            .0
    })
}

/// The largest offset any kernel may read at, on any axis.
pub const MAX_OFFSET: i32 = 8;
/// The most loop iterations one kernel may unroll, summed over all its loops.
pub const MAX_UNROLL: usize = 4096;

/// A checking error: where, what, and what to do.
#[derive(Clone, Debug, PartialEq)]
pub struct LowerError {
    /// The offending node.
    pub span: SpanId,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

impl std::fmt::Display for LowerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\nhelp: {h}")?;
        }
        Ok(())
    }
}

type Result<T> = std::result::Result<T, LowerError>;

/// An error at `span` unless `got == wanted` (counts of a tuple's parts), `message` saying
/// how they differ.
fn check_count(
    span: SpanId,
    (got, wanted): (usize, usize),
    message: impl FnOnce() -> String,
    help: Option<&str>,
) -> Result<()> {
    if got == wanted {
        Ok(())
    } else {
        err(span, message(), help)
    }
}

fn err<T>(span: SpanId, message: impl Into<String>, help: Option<&str>) -> Result<T> {
    Err(LowerError {
        span,
        message: message.into(),
        help: help.map(str::to_string),
    })
}

/// Checks every function of the module and lowers every kernel, in source order (a
/// kernel defined for several dimensions gives one kernel per dimension, in the order its
/// attribute lists them).
pub fn lower_module(module: &Module) -> Result<Vec<Kernel>> {
    Ok(lower_definitions(module)?.into_iter().flatten().collect())
}

/// [`lower_module`] with the kernels of each definition together: one list per `#[stencil]`
/// function, of one kernel per combination of its compile-time constants' values
/// (`consts(..)`) and dimension it is defined for (constants varying slowest).
pub fn lower_definitions(module: &Module) -> Result<Vec<Vec<Kernel>>> {
    let expanded = crate::groups::expand(module)?;
    lower_expanded(&expanded)
}

/// [`lower_definitions`] of a module whose groups are written out.
fn lower_expanded(module: &Module) -> Result<Vec<Vec<Kernel>>> {
    check_unique_names(module)?;
    for h in module.items.iter().filter(|f| f.kind == FnKind::Helper) {
        consts::instances(h)?;
    }
    consts::check_instance_names(module)?;
    module
        .items
        .iter()
        .filter(|f| f.kind == FnKind::Kernel)
        .map(|f| {
            lower_kernel_instances(module, f).map_err(|e| crate::groups::as_written(e, module, f))
        })
        .collect()
}

/// The kernels of definition `f` of `module`: one per choice of its constants and
/// dimension.
fn lower_kernel_instances(module: &Module, f: &FnDef) -> Result<Vec<Kernel>> {
    let mut kernels = Vec::new();
    for (one, bound) in consts::instances(f)? {
        let lower = |def: &FnDef| {
            lower_instance(module, def, &bound).map_err(|e| consts::in_instance(e, &bound))
        };
        match &one.attrs.dims {
            Some((list, span)) if list.len() > 1 => {
                dims::check_dims_list(list, *span)?;
                for &d in list {
                    let mut of_dim = one.clone();
                    of_dim.attrs.dims = Some((vec![d], *span));
                    kernels.push(lower(&of_dim)?);
                }
            }
            _ => kernels.push(lower(&one)?),
        }
    }
    Ok(kernels)
}

fn check_unique_names(module: &Module) -> Result<()> {
    let mut seen = HashMap::new();
    for f in &module.items {
        if seen.insert(f.name.name.as_str(), ()).is_some() {
            return err(
                f.name.span,
                format!("`{}` is defined twice", f.name.name),
                Some("give each kernel and helper its own name"),
            );
        }
    }
    Ok(())
}

/// A value during lowering: a node, or a literal whose type is not fixed yet.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    Node(NodeId),
    FloatLit(f64),
    IntLit(i64),
    /// A tuple: its parts in `Lowerer::tuples` (see `tuples`).
    Tuple(u32),
}

/// An argument of a helper call: a value, or a field, a sampled grid or the mesh passed by
/// name.
#[derive(Clone, Copy, Debug)]
enum HelperArg {
    Value(Val),
    Bound(Binding),
}

/// What a name refers to.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Local(usize),
    Field(u32),
    Reduction(u32),
    /// A vertex kernel's `Mesh` parameter.
    Mesh,
    /// A `Sampled<T>` parameter.
    Sampled(u32),
    /// A staged value (`let f = stage(..)`): a stage number.
    Staged(u32),
}

#[derive(Clone, Debug)]
struct Slot {
    val: Val,
    mutable: bool,
    name: String,
}

/// Whether an output has been written on every path so far.
#[derive(Clone, Copy, Debug, PartialEq)]
enum OutState {
    Unwritten,
    Written(NodeId),
    /// Written on some paths only; the span is the `if` that left it unwritten.
    Partial(NodeId, SpanId),
}

/// The mutable part of lowering that `if` branches fork and join.
#[derive(Clone, Debug)]
struct State {
    slots: Vec<Slot>,
    outputs: HashMap<u32, OutState>,
    contributions: HashMap<u32, NodeId>,
}

struct Lowerer<'m> {
    module: &'m Module,
    b: KernelBuilder,
    dims: u8,
    declared_halo: Option<u32>,
    default_real: Ty,
    fields: Vec<FieldParam>,
    field_spans: Vec<SpanId>,
    scalars: Vec<ScalarParam>,
    reductions: Vec<ReductionParam>,
    sampled: Vec<SampledParam>,
    reduction_spans: Vec<SpanId>,
    param_order: Vec<(ParamKind, u32)>,
    state: State,
    scopes: Vec<HashMap<String, Binding>>,
    /// Type parameters in scope: the kernel's `T` maps to `Ty::Real`; a helper's to what
    /// its arguments made it (None until known).
    type_params: Vec<HashMap<String, Option<Ty>>>,
    call_stack: Vec<String>,
    unrolled: usize,
    /// `line = AXIS`: the axis of a line kernel.
    line_axis: Option<u8>,
    /// `red_black = PARAM`: whether the kernel is red-black coloured.
    red_black: bool,
    /// The coefficients of the one `tridiagonal(..)` call, with its span.
    tridiagonal: Option<([NodeId; 4], SpanId)>,
    /// A vertex kernel's `Mesh` parameter.
    mesh: Option<String>,
    /// The run-time loops lowered so far.
    loops: Vec<RuntimeLoop>,
    /// The run-time loop being lowered (they do not nest): its number and list.
    in_loop: Option<(u32, Around)>,
    /// The loops being lowered, innermost last (see `breaks`).
    open_loops: Vec<breaks::OpenLoop>,
    /// The parts of the tuples made so far (`Val::Tuple` indexes them).
    tuples: Vec<Vec<Val>>,
    /// The compile-time constant parameters and their values in this instance.
    consts: consts::Bindings,
    /// The staged values (`stages`).
    stages: Vec<crate::ir::Stage>,
}

/// Lowers one kernel of `module`.
pub fn lower_kernel(module: &Module, f: &FnDef) -> Result<Kernel> {
    let expanded = crate::groups::expand(module)?;
    let module: &Module = &expanded;
    let f = module
        .items
        .iter()
        .find(|k| k.name.name == f.name.name)
        .unwrap_or(f);
    lower_instance(module, f, &[]).map_err(|e| crate::groups::as_written(e, module, f))
}

/// The intrinsics: name, argument count.
const INTRINSICS: &[(&str, usize)] = &[
    ("sqrt", 1),
    ("abs", 1),
    ("floor", 1),
    ("ceil", 1),
    ("trunc", 1),
    ("round", 1),
    ("exp", 1),
    ("ln", 1),
    ("exp2", 1),
    ("log2", 1),
    ("log10", 1),
    ("sinh", 1),
    ("cosh", 1),
    ("tanh", 1),
    ("cbrt", 1),
    ("asinh", 1),
    ("acosh", 1),
    ("atanh", 1),
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("asin", 1),
    ("acos", 1),
    ("atan", 1),
    ("sign", 1),
    ("min", 2),
    ("max", 2),
    ("copysign", 2),
    ("powf", 2),
    ("powi", 2),
    ("hypot", 2),
    ("atan2", 2),
    ("fma", 3),
];

impl<'m> Lowerer<'m> {
    fn new_local(&mut self, name: &str, val: Val, mutable: bool) -> Binding {
        self.state.slots.push(Slot {
            val,
            mutable,
            name: name.to_string(),
        });
        Binding::Local(self.state.slots.len() - 1)
    }

    /// A new local `name` holding `val`, bound in the innermost scope.
    fn declare_local(&mut self, name: &str, val: Val, mutable: bool) {
        let binding = self.new_local(name, val, mutable);
        self.scopes
            .last_mut()
            .expect("scope")
            .insert(name.to_string(), binding);
    }

    /// A new tuple of `parts`.
    fn tuple_of(&mut self, parts: Vec<Val>) -> Val {
        self.tuples.push(parts);
        Val::Tuple(self.tuples.len() as u32 - 1)
    }

    fn lookup(&self, id: &Ident) -> Result<Binding> {
        for scope in self.scopes.iter().rev() {
            if let Some(b) = scope.get(&id.name) {
                return Ok(*b);
            }
        }
        let known: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        let help = if self.call_stack.len() > 1 {
            "helpers see only their own parameters and locals; pass values in as arguments"
                .to_string()
        } else if known.is_empty() {
            "declare it as a parameter or with `let`".to_string()
        } else {
            format!("this kernel's fields are: {}", known.join(", "))
        };
        err(id.span, format!("unknown name `{}`", id.name), Some(&help))
    }

    // ----- values and types -------------------------------------------------------------

    fn ty_of(&self, v: Val) -> Option<Ty> {
        match v {
            Val::Node(n) => Some(self.b.ty(n)),
            _ => None,
        }
    }

    /// Gives a literal the type `ty` (or checks a node has it).
    fn coerce(&mut self, v: Val, ty: Ty, span: SpanId, what: &str) -> Result<NodeId> {
        match v {
            Val::Node(n) => {
                let have = self.b.ty(n);
                if have == ty {
                    Ok(n)
                } else {
                    Err(self.mismatch(have, ty, span, what))
                }
            }
            Val::FloatLit(x) if ty.is_float() => Ok(self.b.real(x, ty)),
            Val::IntLit(x) if ty == Ty::Int => Ok(self.b.int(x)),
            Val::FloatLit(x) => err(
                span,
                format!("{what}: expected `{ty}`, found the real literal `{x:?}`"),
                Some("write an integer literal, or convert with `as`"),
            ),
            Val::IntLit(x) if ty.is_float() => err(
                span,
                format!("{what}: expected `{ty}`, found the integer literal `{x}`"),
                Some(&format!("write `{x}.0`")),
            ),
            Val::IntLit(x) => err(
                span,
                format!("{what}: expected `{ty}`, found the integer literal `{x}`"),
                None,
            ),
            Val::Tuple(_) => self.tuple_here(span),
        }
    }

    fn mismatch(&self, have: Ty, want: Ty, span: SpanId, what: &str) -> LowerError {
        let both_real = have.is_float() && want.is_float();
        LowerError {
            span,
            message: if both_real {
                format!("{what}: mixing precisions `{want}` and `{have}`")
            } else {
                format!("{what}: expected `{want}`, found `{have}`")
            },
            help: Some(if both_real {
                format!("convert one side explicitly, e.g. `x as {want}`")
            } else {
                format!("convert with `as {want}` where that makes sense")
            }),
        }
    }

    /// Makes two values the same type for a binary operation.
    fn unify(&mut self, a: Val, b: Val, span: SpanId, what: &str) -> Result<(NodeId, NodeId)> {
        let ty = match (self.ty_of(a), self.ty_of(b)) {
            (Some(t), _) => t,
            (None, Some(t)) => t,
            (None, None) => match (a, b) {
                (Val::IntLit(_), Val::IntLit(_)) => Ty::Int,
                (Val::FloatLit(_), Val::FloatLit(_)) => self.default_real,
                _ => {
                    return err(
                        span,
                        format!("{what}: cannot combine an integer literal with a real literal"),
                        Some("write both as reals, e.g. `2.0`"),
                    )
                }
            },
        };
        Ok((
            self.coerce(a, ty, span, what)?,
            self.coerce(b, ty, span, what)?,
        ))
    }

    /// Gives a literal its default type.
    fn materialize(&mut self, v: Val) -> NodeId {
        match v {
            Val::Node(n) => n,
            Val::FloatLit(x) => self.b.real(x, self.default_real),
            Val::IntLit(x) => self.b.int(x),
            Val::Tuple(_) => {
                unreachable!("tuples are taken apart before they are used (`expr` refuses them)")
            }
        }
    }

    fn const_int(&self, v: Val) -> Option<i64> {
        match v {
            Val::IntLit(x) => Some(x),
            Val::Node(n) => match self.b.node(n) {
                Node::IntConst(x) => Some(x),
                _ => None,
            },
            Val::FloatLit(_) | Val::Tuple(_) => None,
        }
    }
}

fn unsupported_help(what: &str) -> &'static str {
    if what.contains("while") || what.contains("loop") {
        "use a `for` loop with constant bounds (it is unrolled)"
    } else if what.contains("return") {
        "end the function with its value instead of `return`"
    } else if what.contains("match") {
        "use `if` / `else if` / `else`"
    } else if what.contains("closure") {
        "write a `#[stencil_fn]` helper instead"
    } else if what.contains("destructuring") {
        "bind each value with a `let` of its own"
    } else {
        "see docs/language.md for what kernels may contain"
    }
}
