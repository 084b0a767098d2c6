//! The surface syntax tree shared by both front ends.
//!
//! The `#[stencil]` macro (through `syn`, see [`crate::front::rust`]) and the `.stencil`
//! text format (through `pest`, see [`crate::front::text`]) both produce this tree; one
//! lowering pass ([`crate::lower`]) checks it and turns it into the kernel IR. Every node
//! carries a [`SpanId`]: an index into the front end's own table of source positions, so the
//! lowering can point its errors at the offending token without knowing where the text came
//! from.

pub use crate::ops::{BitOp, Comparison};

/// Index into a front end's table of source positions.
pub type SpanId = u32;

/// A name with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name as written.
    pub name: String,
    /// Where it was written.
    pub span: SpanId,
}

/// A source unit: kernels and helper functions that may call each other, and the
/// parameter groups they take.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// The functions in source order.
    pub items: Vec<FnDef>,
    /// The parameter groups (`#[stencil_group] struct ..`) in source order.
    pub groups: Vec<GroupDef>,
}

/// A parameter group, `#[stencil_group] struct Scheme<T> { g: T, west: i64 }`: values
/// that kernels and helpers take as one parameter `s: Scheme<T>` and read as `s.g`, or,
/// for a group whose members are all of its type parameter, fields taken as one parameter
/// `from: In<State<T>>` (`Out`, `InOut`) and read as `from.w`, `from.w[(1, 0)]`. The
/// launcher takes the Rust struct (of values, or of `&Field<T>`s); inside the compiler
/// the group is its members, one scalar or field parameter each (see [`crate::groups`]).
#[derive(Clone, Debug)]
pub struct GroupDef {
    /// The struct's name.
    pub name: Ident,
    /// Its type parameter, if any (`T` in `Scheme<T>`), which members' types may name.
    pub generic: Option<Ident>,
    /// The members in order: name and type (a scalar type or the type parameter).
    pub members: Vec<(Ident, TypeExpr)>,
    /// Where it is reported: the name (macro) or the whole item (text front end).
    pub span: SpanId,
}

/// Where a scalar parameter made from a group parameter came from (see [`GroupDef`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MemberOf {
    /// The group parameter's name (`s` in `s: Scheme<T>`).
    pub param: String,
    /// The group's type as written at the parameter (`Scheme<T>`).
    pub group_type: String,
    /// The member's name.
    pub member: String,
    /// The group's name (`Scheme`).
    pub group: String,
}

/// Whether a function is a kernel (`#[stencil]`) or an inlined helper (`#[stencil_fn]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    /// A kernel launched over a grid.
    Kernel,
    /// A helper inlined at each call.
    Helper,
}

/// Options given in the attribute, e.g. `#[stencil(dims = 2, halo = 1)]`.
///
/// The text front end accepts the same `key = integer` options as the macro.
#[derive(Clone, Debug, Default)]
pub struct Attrs {
    /// Explicit dimension, needed when the kernel uses no offsets; several (`dims = [2,
    /// 3]`) make one kernel per dimension from one definition.
    pub dims: Option<(Vec<u8>, SpanId)>,
    /// Declared halo width: reading farther from the point is an error.
    pub halo: Option<(u32, SpanId)>,
    /// `line = AXIS`: a line kernel, one thread per grid line along `AXIS`, which solves the
    /// tridiagonal system its body describes (see `tridiagonal`).
    pub line: Option<(u8, SpanId)>,
    /// `red_black = PARAM`: the kernel updates only the points (or, in a line kernel, the
    /// lines) whose index sum has the parity given by the `i64` scalar `PARAM`.
    pub red_black: Option<Ident>,
    /// `line = PARAM`: a line kernel along the axis given by the compile-time constant
    /// `PARAM` (one of [`Attrs::consts`]), so each instance solves along its own axis.
    pub line_param: Option<Ident>,
    /// `consts(p = [v1, v2], ..)`: parameters that are compile-time constants. The
    /// definition becomes one kernel per combination of their values, each with the
    /// parameter replaced by its value (offsets and `line` may then depend on it).
    pub consts: Vec<ConstParam>,
}

/// A parameter listed in `consts(..)`: its name and the values a kernel is made for.
#[derive(Clone, Debug)]
pub struct ConstParam {
    /// The parameter (an `i64` or `bool` parameter of the kernel).
    pub name: Ident,
    /// The values, each with where it is written.
    pub values: Vec<(ConstValue, SpanId)>,
}

/// The value of a compile-time constant parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConstValue {
    /// An `i64` value.
    Int(i64),
    /// A `bool` value.
    Bool(bool),
}

impl std::fmt::Display for ConstValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConstValue::Int(v) => write!(f, "{v}"),
            ConstValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl ConstValue {
    /// The value as part of an identifier: `4`, `m1` for -1, `true`.
    pub fn ident_part(&self) -> String {
        match self {
            ConstValue::Int(v) if *v < 0 => format!("m{}", v.unsigned_abs()),
            other => other.to_string(),
        }
    }
}

/// The value of an attribute option: `dims = 2` or `red_black = colour`.
#[derive(Clone, Debug)]
pub enum AttrValue {
    /// An integer.
    Int(u64),
    /// A name.
    Name(String),
    /// A list of integers: `[2, 3]`.
    List(Vec<u64>),
}

impl Attrs {
    /// Sets option `key` from either front end; the error names the option's expected form.
    pub fn set(&mut self, key: &str, value: AttrValue, span: SpanId) -> Result<(), String> {
        let int = |what: &str| match &value {
            AttrValue::Int(n) => Ok(*n),
            AttrValue::Name(_) | AttrValue::List(_) => Err(format!("`{key}` takes {what}")),
        };
        let small = |n: u64| u8::try_from(n).unwrap_or(u8::MAX);
        match key {
            "dims" => {
                let list = match &value {
                    AttrValue::Int(n) => vec![small(*n)],
                    AttrValue::List(ns) if !ns.is_empty() => ns.iter().map(|&n| small(n)).collect(),
                    _ => {
                        return Err(
                            "`dims` takes a number of dimensions, `dims = 2`, or a list of them, `dims = [2, 3]`"
                                .into(),
                        )
                    }
                };
                self.dims = Some((list, span));
            }
            "halo" => {
                let n = int("a width: `halo = 1`")?;
                self.halo = Some((u32::try_from(n).unwrap_or(u32::MAX), span));
            }
            // `line = axis` names a compile-time constant (see `consts`).
            "line" => match &value {
                AttrValue::Name(name) => {
                    self.line_param = Some(Ident { name: name.clone(), span })
                }
                _ => {
                    let n = int("an axis, `line = 0`, or a constant parameter, `line = axis`")?;
                    self.line = Some((u8::try_from(n).unwrap_or(u8::MAX), span));
                }
            },
            "red_black" => match value {
                AttrValue::Name(name) => self.red_black = Some(Ident { name, span }),
                AttrValue::Int(_) | AttrValue::List(_) => {
                    return Err(
                        "`red_black` names the `i64` parameter that selects the colour: `red_black = colour`"
                            .into(),
                    )
                }
            },
            _ => {
                return Err(format!(
                    "unknown stencil option `{key}`\n\n= help: the options are `dims = N` (or `dims = [2, 3]`), `halo = N`, `line = AXIS`, `red_black = PARAM` and `consts(PARAM = [VALUE, ..])`"
                ))
            }
        }
        Ok(())
    }

    /// Adds `name = [values]` of `consts(..)`; the error says what is wrong with it.
    pub fn add_const(
        &mut self,
        name: Ident,
        values: Vec<(ConstValue, SpanId)>,
    ) -> Result<(), String> {
        if self.consts.iter().any(|c| c.name.name == name.name) {
            return Err(format!("`{}` is listed twice in `consts(..)`", name.name));
        }
        if values.is_empty() {
            return Err(format!(
                "`{}` needs at least one value: `consts({} = [0, 1])`",
                name.name, name.name
            ));
        }
        for (i, (v, _)) in values.iter().enumerate() {
            if values[..i].iter().any(|(w, _)| w == v) {
                return Err(format!("value {v} of `{}` is listed twice", name.name));
            }
            if std::mem::discriminant(v) != std::mem::discriminant(&values[0].0) {
                return Err(format!(
                    "the values of `{}` mix integers and booleans",
                    name.name
                ));
            }
        }
        self.consts.push(ConstParam { name, values });
        Ok(())
    }
}

/// A kernel or helper definition.
#[derive(Clone, Debug)]
pub struct FnDef {
    /// Kernel or helper.
    pub kind: FnKind,
    /// Attribute options.
    pub attrs: Attrs,
    /// The function's name.
    pub name: Ident,
    /// Generic parameters, e.g. `T` in `fn f<T: Real>`; each must be bounded by `Real`.
    pub generics: Vec<Generic>,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Declared return type (helpers only).
    pub ret: Option<TypeExpr>,
    /// The body.
    pub body: Block,
    /// The whole function, for errors that concern it as a whole.
    pub span: SpanId,
}

/// A generic parameter `T: Bound`.
#[derive(Clone, Debug)]
pub struct Generic {
    /// The parameter's name.
    pub name: Ident,
    /// Its bounds as written (must be exactly `Real`).
    pub bounds: Vec<Ident>,
}

/// A parameter `name: Type`.
#[derive(Clone, Debug)]
pub struct Param {
    /// The parameter's name.
    pub name: Ident,
    /// Its declared type.
    pub ty: TypeExpr,
    /// `#[when(flag)]`: the parameter exists only in the kernels made for `flag = true`
    /// (a `bool` listed in `consts(..)`).
    pub when: Option<Ident>,
    /// Set on the scalar parameters a group parameter is expanded into ([`crate::groups`]).
    pub member_of: Option<MemberOf>,
}

/// A type as written.
#[derive(Clone, Debug)]
pub enum TypeExpr {
    /// A plain name: `T`, `f32`, `f64`, `i64`, `bool`.
    Name(Ident),
    /// A generic application: `In<T>`, `Out<f64>`, `Max<T>`.
    Apply {
        /// `In`, `Out`, `Max`, ...
        head: Ident,
        /// Type arguments.
        args: Vec<TypeExpr>,
        /// The whole type.
        span: SpanId,
    },
    /// `(T, T)`: a tuple type (a helper's result).
    Tuple {
        /// The parts' types.
        items: Vec<TypeExpr>,
        /// The whole type.
        span: SpanId,
    },
    /// Any other type form, kept only to report it.
    Unsupported {
        /// What it was.
        what: String,
        /// Where.
        span: SpanId,
    },
}

impl TypeExpr {
    /// The span of the whole type.
    pub fn span(&self) -> SpanId {
        match self {
            TypeExpr::Name(id) => id.span,
            TypeExpr::Apply { span, .. }
            | TypeExpr::Tuple { span, .. }
            | TypeExpr::Unsupported { span, .. } => *span,
        }
    }
}

/// `{ stmts; tail }`
#[derive(Clone, Debug)]
pub struct Block {
    /// Statements in order.
    pub stmts: Vec<Stmt>,
    /// The value of the block, if it ends in an expression without `;`.
    pub tail: Option<Box<Expr>>,
    /// The whole block.
    pub span: SpanId,
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `let [mut] name [: ty] = init;`
    Let {
        /// Bound name.
        name: Ident,
        /// `let mut`.
        mutable: bool,
        /// Optional annotation.
        ty: Option<TypeExpr>,
        /// Initial value (required).
        init: Option<Expr>,
        /// The whole statement.
        span: SpanId,
    },
    /// `let (a, mut b, _) = init;`: a tuple's parts bound to names (`_` binds none).
    LetTuple {
        /// The names, each with whether it is `mut`.
        names: Vec<(Ident, bool)>,
        /// The tuple.
        init: Expr,
        /// The whole statement.
        span: SpanId,
    },
    /// `target = value;` or `target op= value;`
    Assign {
        /// The assigned expression (a name; anything else is an error).
        target: Expr,
        /// `Some(op)` for compound assignment `op=`.
        op: Option<BinOp>,
        /// The value.
        value: Expr,
        /// The whole statement.
        span: SpanId,
    },
    /// `for var in start..end { body }` (or `..=`), bounds constant after folding.
    For {
        /// Loop variable.
        var: Ident,
        /// Lower bound.
        start: Expr,
        /// Upper bound.
        end: Expr,
        /// `..=` instead of `..`.
        inclusive: bool,
        /// Loop body.
        body: Block,
        /// The whole loop.
        span: SpanId,
    },
    /// `for item in mesh.neighbours() { .. }`: a loop over a list known only at run time
    /// (vertex kernels).
    ForEach {
        /// The loop variable.
        var: Ident,
        /// What it runs over, e.g. `mesh.triangles()`.
        iter: Expr,
        /// The body.
        body: Block,
        /// Where.
        span: SpanId,
    },
    /// An expression evaluated for its effect, e.g. `speed.reduce(c);` or an `if` statement.
    Expr(Expr),
    /// A construct the language does not have, kept only to report it.
    Unsupported {
        /// What it was, e.g. "`while` loop".
        what: String,
        /// Where.
        span: SpanId,
    },
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `==`, `!=`, `<`, `<=`, `>`, `>=`
    Compare(Comparison),
    /// `&`, `|`, `^` (integers bit by bit; booleans), `<<`, `>>` (integers)
    Bit(BitOp),
}

impl BinOp {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Compare(c) => c.symbol(),
            BinOp::Bit(o) => o.symbol(),
        }
    }

    /// Whether the operator compares and yields `bool`.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Compare(_))
    }
}

/// A literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// `1.5`, `2e-3`, with an optional suffix `f32`/`f64`.
    Float(f64, Option<String>),
    /// `3`, with an optional suffix.
    Int(i64, Option<String>),
    /// `true` / `false`.
    Bool(bool),
}

/// An expression with its span.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it was written.
    pub span: SpanId,
}

/// Expression forms.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A literal.
    Lit(Lit),
    /// A name: a local, a parameter (a bare field name is its centre value), a loop variable.
    Name(Ident),
    /// `op x`
    Unary(UnOp, Box<Expr>),
    /// `a op b`
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `f(args)`: an intrinsic, a builtin (`index`, `extent`, `coord`) or a helper.
    Call {
        /// The called name.
        func: Ident,
        /// Arguments.
        args: Vec<Expr>,
    },
    /// `recv.method(args)`: intrinsic method syntax (`x.sqrt()`) or `acc.reduce(v)`.
    MethodCall {
        /// The receiver.
        receiver: Box<Expr>,
        /// The method name.
        method: Ident,
        /// Arguments after the receiver.
        args: Vec<Expr>,
    },
    /// `u[(dx, dy)]` or `u[dx]`: a field read at an offset from the current point.
    Index {
        /// The indexed expression (must name an input field).
        base: Box<Expr>,
        /// Offset components, one per dimension.
        offsets: Vec<Expr>,
    },
    /// `if cond { .. } else { .. }`
    If {
        /// Condition.
        cond: Box<Expr>,
        /// Then block.
        then: Block,
        /// Else branch: a block expression or another `if`.
        otherwise: Option<Box<Expr>>,
    },
    /// `{ .. }` used as an expression.
    Block(Block),
    /// `expr as ty`
    Cast(Box<Expr>, TypeExpr),
    /// `(expr)`
    Paren(Box<Expr>),
    /// `s.g`: member `g` of a group parameter `s` (see [`GroupDef`]).
    Member {
        /// The expression before the dot (must name a group parameter).
        base: Box<Expr>,
        /// The member's name.
        member: Ident,
    },
    /// `(a, b, ..)`: a tuple of two or more values (a helper's result, destructured by
    /// `let (x, y) = ..`).
    Tuple(Vec<Expr>),
    /// `Flux { w: fw, q: fq, p: fp }`: a group built at a helper call, for a helper
    /// parameter of that group (see [`GroupDef`]); each member's value once.
    GroupLit {
        /// The group's name.
        name: Ident,
        /// Each member named with its value, as written.
        members: Vec<(Ident, Expr)>,
    },
    /// `break` (no label, no value).
    Break,
    /// `continue` (no label).
    Continue,
    /// A construct the language does not have, kept only to report it.
    Unsupported(String),
}
