//! Staged values: `let f = stage(e);` computes `e` at every point a thread block's points
//! read it from (its tile plus a halo) and keeps it on chip, so that the kernel reads `f`
//! at offsets like a field (`f[(-1, 0)]`) without recomputing it or going through device
//! memory.
//!
//! In the IR a stage is a value node of its own ([`Stage::value`]) computed at the point
//! where it is read: [`Node::Staged`] reads it at an offset from the current point. The
//! PTX entry (`llvm/codegen/staged.rs`) computes the stage's nodes over a thread block's
//! tile first, the CPU along the rows its points read (`back/rust/staged.rs`); the
//! interpreter and the host JIT run [`Kernel::unstaged`], the same kernel with each
//! staged read replaced by the stage's nodes shifted to its offset, which computes the
//! same operations on the same values.

use super::*;

/// A staged value of a kernel: `value` evaluated at any point, read at the offsets
/// `reach_lo ..= reach_hi` (per axis) from the current point.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The name it is bound to in the kernel (`f` of `let f = stage(..)`; `f.1` for a
    /// tuple's part without a name of its own).
    pub name: String,
    /// The node of its value at the point it is evaluated at.
    pub value: NodeId,
    /// Smallest offset it is read at, per axis (<= 0 on the axes it is read along; 0 on
    /// the others).
    pub reach_lo: [i32; 3],
    /// Largest offset it is read at, per axis.
    pub reach_hi: [i32; 3],
}

/// What a staging back end keeps on chip: the stages the kernel reads and the box of
/// offsets, the union of their reaches, over which each is computed around a tile.
#[derive(Clone, Debug, PartialEq)]
pub struct StageLayout {
    /// The stages read, in stage order, with their value types.
    pub stages: Vec<(u32, Ty)>,
    /// The box's low corner (<= 0 per axis).
    pub lo: [i32; 3],
    /// The box's high corner (>= 0 per axis).
    pub hi: [i32; 3],
}

impl StageLayout {
    /// The bytes one value of each stage takes on chip at precision `p`, in the order of
    /// [`StageLayout::stages`].
    pub fn value_bytes(&self, p: Precision) -> Vec<u32> {
        self.stages
            .iter()
            .map(|&(_, t)| match t.concrete(p) {
                Ty::F32 | Ty::I32 => 4,
                Ty::U8 | Ty::Bool => 1,
                _ => 8,
            })
            .collect()
    }
}

/// `node` with each operand `n` replaced by `f(n)`.
pub fn with_operands(node: Node, mut f: impl FnMut(NodeId) -> NodeId) -> Node {
    match node {
        Node::Unary(op, a) => Node::Unary(op, f(a)),
        Node::Cast(a) => Node::Cast(f(a)),
        Node::Binary(op, a, b) => Node::Binary(op, f(a), f(b)),
        Node::Fma(a, b, c) => Node::Fma(f(a), f(b), f(c)),
        Node::Select(a, b, c) => Node::Select(f(a), f(b), f(c)),
        Node::Gather { field, vertex } => Node::Gather {
            field,
            vertex: f(vertex),
        },
        Node::Topo { table, pos } => Node::Topo { table, pos: f(pos) },
        Node::Sample { grid, x, y } => Node::Sample {
            grid,
            x: f(x),
            y: f(y),
        },
        leaf => leaf,
    }
}

impl Kernel {
    /// The nodes `roots` need (operands first), in id order.
    pub fn reachable(&self, roots: &[NodeId]) -> Vec<NodeId> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = roots.to_vec();
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n as usize], true) {
                continue;
            }
            stack.extend(self.dependencies(n));
        }
        (0..self.nodes.len() as NodeId)
            .filter(|&n| seen[n as usize])
            .collect()
    }

    /// Whether the kernel reads a staged value.
    pub fn is_staged(&self) -> bool {
        !self.stages.is_empty() && self.stage_layout().is_some()
    }

    /// The stages the kernel reads and the box they are computed over (`None`: it reads
    /// none).
    pub fn stage_layout(&self) -> Option<StageLayout> {
        let mut read = vec![false; self.stages.len()];
        for n in self.live_nodes() {
            if let Node::Staged { stage, .. } = self.nodes[n as usize] {
                read[stage as usize] = true;
            }
        }
        let stages: Vec<(u32, Ty)> = (0..self.stages.len() as u32)
            .filter(|&s| read[s as usize])
            .map(|s| (s, self.types[self.stages[s as usize].value as usize]))
            .collect();
        if stages.is_empty() {
            return None;
        }
        let mut lo = [0; 3];
        let mut hi = [0; 3];
        for &(s, _) in &stages {
            let st = &self.stages[s as usize];
            for a in 0..3 {
                lo[a] = lo[a].min(st.reach_lo[a]);
                hi[a] = hi[a].max(st.reach_hi[a]);
            }
        }
        Some(StageLayout { stages, lo, hi })
    }

    /// The same kernel with every staged read replaced by the stage's nodes shifted to the
    /// read's offset (field reads moved by it, indices advanced by it): what a back end
    /// that keeps nothing on chip runs. The shifted nodes are the stage's operations on
    /// the values the staged read stands for, so the results are the same bits. A kernel
    /// without stages is returned as it is.
    pub fn unstaged(&self) -> Kernel {
        if self.stages.is_empty() {
            return self.clone();
        }
        let mut b = KernelBuilder::new();
        // The new node of each old node at the current point.
        let mut here: Vec<NodeId> = Vec::with_capacity(self.nodes.len());
        // The new nodes of each stage's nodes shifted by an offset.
        let mut shifted: HashMap<[i32; 3], HashMap<NodeId, NodeId>> = HashMap::new();
        for n in 0..self.nodes.len() {
            let ty = self.types[n];
            let new = match self.nodes[n] {
                Node::Staged { stage, offset } => {
                    let value = self.stages[stage as usize].value;
                    let memo = shifted.entry(offset).or_default();
                    self.shift(&mut b, value, offset, &here, memo)
                }
                node => b.add(with_operands(node, |o| here[o as usize]), ty),
            };
            here.push(new);
        }
        let (nodes, types) = b.finish();
        let map = |n: NodeId| here[n as usize];
        Kernel {
            nodes,
            types,
            stores: self
                .stores
                .iter()
                .map(|s| Store {
                    field: s.field,
                    value: map(s.value),
                    mask: s.mask.map(map),
                })
                .collect(),
            contributions: self
                .contributions
                .iter()
                .map(|&(r, n)| (r, map(n)))
                .collect(),
            line: self.line.map(|l| LineSolve {
                lower: map(l.lower),
                diag: map(l.diag),
                upper: map(l.upper),
                rhs: map(l.rhs),
                mask: l.mask.map(map),
                ..l
            }),
            loops: self
                .loops
                .iter()
                .map(|l| RuntimeLoop {
                    init: l.init.iter().map(|&n| map(n)).collect(),
                    next: l.next.iter().map(|&n| map(n)).collect(),
                    ..l.clone()
                })
                .collect(),
            stages: Vec::new(),
            ..self.clone()
        }
    }

    /// The new node of `root` (a stage's node) evaluated `offset` away from the current
    /// point: its field reads moved and its indices advanced by the offset.
    fn shift(
        &self,
        b: &mut KernelBuilder,
        root: NodeId,
        offset: [i32; 3],
        here: &[NodeId],
        memo: &mut HashMap<NodeId, NodeId>,
    ) -> NodeId {
        for n in self.reachable(&[root]) {
            if memo.contains_key(&n) {
                continue;
            }
            let ty = self.types[n as usize];
            let new = match self.nodes[n as usize] {
                Node::Load { field, offset: o } => b.add(
                    Node::Load {
                        field,
                        offset: [0, 1, 2].map(|a| o[a] + offset[a]),
                    },
                    ty,
                ),
                Node::Index(a) if offset[a as usize] != 0 => {
                    let i = b.add(Node::Index(a), Ty::Int);
                    let d = b.int(offset[a as usize] as i64);
                    b.binary(Binary::Add, i, d)
                }
                // Nodes that do not depend on the point are the same everywhere.
                node if operands(&node).is_empty() => here[n as usize],
                node => b.add(with_operands(node, |o| memo[&o]), ty),
            };
            memo.insert(n, new);
        }
        memo[&root]
    }
}
