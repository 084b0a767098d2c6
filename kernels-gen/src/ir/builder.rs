//! [`KernelBuilder`]: the node arena, hash-consed as it is built (common subexpression
//! elimination) and folded where operands are constants.

use super::fold::{fold_binary, fold_unary};
use super::*;

/// Builds a kernel's node arena with hash-consing (CSE) and constant folding.
#[derive(Default)]
pub struct KernelBuilder {
    nodes: Vec<Node>,
    types: Vec<Ty>,
    dedup: HashMap<(Node, Ty), NodeId>,
}

impl KernelBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// The type of a node already built.
    pub fn ty(&self, n: NodeId) -> Ty {
        self.types[n as usize]
    }

    /// The node itself.
    pub fn node(&self, n: NodeId) -> Node {
        self.nodes[n as usize]
    }

    /// Adds a node (or returns the identical one built before).
    pub fn add(&mut self, node: Node, ty: Ty) -> NodeId {
        if let Some(&id) = self.dedup.get(&(node, ty)) {
            return id;
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(node);
        self.types.push(ty);
        self.dedup.insert((node, ty), id);
        id
    }

    /// A real constant of type `ty`.
    pub fn real(&mut self, v: f64, ty: Ty) -> NodeId {
        // Normalise so that all NaNs share one node.
        let v = if v.is_nan() { f64::NAN } else { v };
        self.add(Node::RealConst(v.to_bits()), ty)
    }

    /// An integer constant.
    pub fn int(&mut self, v: i64) -> NodeId {
        self.add(Node::IntConst(v), Ty::Int)
    }

    /// A boolean constant.
    pub fn boolean(&mut self, v: bool) -> NodeId {
        self.add(Node::BoolConst(v), Ty::Bool)
    }

    /// The constant value of a node, if it is one.
    pub fn constant(&self, n: NodeId) -> Option<Const> {
        match self.node(n) {
            Node::RealConst(b) => Some(Const::Real(f64::from_bits(b))),
            Node::IntConst(v) => Some(Const::Int(v)),
            Node::BoolConst(v) => Some(Const::Bool(v)),
            _ => None,
        }
    }

    fn constant_node(&mut self, c: Const, ty: Ty) -> NodeId {
        match c {
            Const::Real(v) => self.real(v, ty),
            Const::Int(v) => self.int(v),
            Const::Bool(v) => self.boolean(v),
        }
    }

    /// A unary operation, folded when the operand is constant.
    pub fn unary(&mut self, op: Unary, a: NodeId) -> NodeId {
        let ty = self.ty(a);
        if let Some(c) = self.constant(a) {
            if let Some(r) = fold_unary(op, c) {
                return self.constant_node(r, ty);
            }
        }
        // --x == x, !!x == x
        if let Node::Unary(inner, x) = self.node(a) {
            if inner == op && matches!(op, Unary::Neg | Unary::Not) {
                return x;
            }
        }
        self.add(Node::Unary(op, a), ty)
    }

    /// A binary operation on operands of equal type, folded where that is exact.
    pub fn binary(&mut self, op: Binary, a: NodeId, b: NodeId) -> NodeId {
        let operand_ty = self.ty(a);
        let ty = if op.is_comparison() {
            Ty::Bool
        } else {
            operand_ty
        };
        if let (Some(x), Some(y)) = (self.constant(a), self.constant(b)) {
            if let Some(r) = fold_binary(op, x, y) {
                return self.constant_node(r, ty);
            }
        }
        if let Some(n) = self.simplify_identity(op, a, b) {
            return n;
        }
        self.add(Node::Binary(op, a, b), ty)
    }

    /// Algebraic identities that hold exactly in IEEE arithmetic (and for integers).
    fn simplify_identity(&mut self, op: Binary, a: NodeId, b: NodeId) -> Option<NodeId> {
        let is = |s: &Self, n: NodeId, v: f64| match s.constant(n) {
            Some(Const::Real(x)) => x == v && x.is_sign_positive(),
            Some(Const::Int(x)) => x as f64 == v,
            _ => false,
        };
        let int = self.ty(a) == Ty::Int;
        match op {
            Binary::Mul if is(self, b, 1.0) => Some(a),
            Binary::Mul if is(self, a, 1.0) => Some(b),
            Binary::Div if is(self, b, 1.0) => Some(a),
            // x - 0 == x for every float (including -0.0); x + 0 only for integers.
            Binary::Sub if is(self, b, 0.0) => Some(a),
            Binary::Add if int && is(self, b, 0.0) => Some(a),
            Binary::Add if int && is(self, a, 0.0) => Some(b),
            Binary::And | Binary::Or => {
                let (x, y) = (self.constant(a), self.constant(b));
                let absorbing = op == Binary::Or;
                match (x, y) {
                    (Some(Const::Bool(v)), _) => Some(if v == absorbing { a } else { b }),
                    (_, Some(Const::Bool(v))) => Some(if v == absorbing { b } else { a }),
                    _ if a == b => Some(a),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `a * b + c` with a single rounding.
    pub fn fma(&mut self, a: NodeId, b: NodeId, c: NodeId) -> NodeId {
        let ty = self.ty(a);
        if let (Some(Const::Real(x)), Some(Const::Real(y)), Some(Const::Real(z))) =
            (self.constant(a), self.constant(b), self.constant(c))
        {
            return self.real(x.mul_add(y, z), ty);
        }
        self.add(Node::Fma(a, b, c), ty)
    }

    /// `if c { a } else { b }`.
    pub fn select(&mut self, c: NodeId, a: NodeId, b: NodeId) -> NodeId {
        if a == b {
            return a;
        }
        match self.constant(c) {
            Some(Const::Bool(true)) => a,
            Some(Const::Bool(false)) => b,
            _ => {
                let ty = self.ty(a);
                self.add(Node::Select(c, a, b), ty)
            }
        }
    }

    /// Converts `a` to `ty`.
    pub fn cast(&mut self, a: NodeId, ty: Ty) -> NodeId {
        if self.ty(a) == ty {
            return a;
        }
        if let Some(c) = self.constant(a) {
            let folded = match (c, ty) {
                (Const::Int(v), t) if t.is_float() => Some(Const::Real(v as f64)),
                (Const::Real(v), t) if t.is_float() => Some(Const::Real(v)),
                (Const::Real(v), Ty::Int) => Some(Const::Int(v as i64)),
                (Const::Bool(v), Ty::Int) => Some(Const::Int(v as i64)),
                _ => None,
            };
            // Real -> real folding is exact only when widening or staying generic; a
            // narrowing conversion of a constant is done by the back end's rounding.
            if let Some(r) = folded {
                return self.constant_node(r, ty);
            }
        }
        self.add(Node::Cast(a), ty)
    }

    /// Finishes the arena.
    pub fn finish(self) -> (Vec<Node>, Vec<Ty>) {
        (self.nodes, self.types)
    }
}
