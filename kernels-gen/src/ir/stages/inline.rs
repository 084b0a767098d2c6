//! Staged reads replaced by the stage's nodes shifted to the read's offset: what a back
//! end that keeps nothing on chip runs ([`Kernel::unstaged`]). The shifted nodes are the
//! stage's operations on the values the staged read stands for, so the results are the
//! same bits.

use super::*;

/// The new nodes of the stages' nodes shifted by an offset, per offset: what is built
/// once is reused by every read at that offset.
type Shifted = HashMap<[i32; 3], HashMap<NodeId, NodeId>>;

impl Kernel {
    /// The same kernel with every staged read replaced by the stage's nodes shifted to
    /// the read's offset (field reads moved by it, indices advanced by it, the stages it
    /// reads shifted further). A kernel without stages is returned as it is.
    pub fn unstaged(&self) -> Kernel {
        if self.stages.is_empty() {
            return self.clone();
        }
        self.rebuilt()
    }

    /// The kernel rebuilt node by node, every staged read replaced by the stage's nodes
    /// shifted to its offset, and no stages.
    fn rebuilt(&self) -> Kernel {
        let mut b = KernelBuilder::new();
        // The new node of each old node at the current point.
        let mut here: Vec<NodeId> = Vec::with_capacity(self.nodes.len());
        let mut shifted = Shifted::new();
        for n in 0..self.nodes.len() {
            let ty = self.types[n];
            let new = match self.nodes[n] {
                Node::Staged { stage, offset } => {
                    let value = self.stages[stage as usize].value;
                    self.shift(&mut b, value, offset, &here, &mut shifted)
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
    /// point: its field reads moved and its indices advanced by the offset, the stages it
    /// reads shifted by their reads' offsets plus this one.
    fn shift(
        &self,
        b: &mut KernelBuilder,
        root: NodeId,
        offset: [i32; 3],
        here: &[NodeId],
        shifted: &mut Shifted,
    ) -> NodeId {
        for n in self.reachable(&[root]) {
            if shifted.get(&offset).is_some_and(|m| m.contains_key(&n)) {
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
                Node::Staged { stage, offset: o } => {
                    let value = self.stages[stage as usize].value;
                    let at = [0, 1, 2].map(|a| o[a] + offset[a]);
                    self.shift(b, value, at, here, shifted)
                }
                // Nodes that do not depend on the point are the same everywhere.
                node if operands(&node).is_empty() => here[n as usize],
                node => {
                    let memo = &shifted[&offset];
                    b.add(with_operands(node, |o| memo[&o]), ty)
                }
            };
            shifted.entry(offset).or_default().insert(n, new);
        }
        shifted[&offset][&root]
    }
}
