//! What the back ends ask of a kernel: its halo, live nodes and their order, loop
//! membership, roots, operation counts, and whether it may be tiled or rerun.

use super::*;

impl Kernel {
    /// The halo width the kernel needs around its domain (over all inputs).
    pub fn halo(&self) -> u32 {
        self.fields.iter().map(FieldParam::halo).max().unwrap_or(0)
    }

    /// Nodes reachable from the stores and contributions, in arena (dependency) order.
    pub fn live_nodes(&self) -> Vec<NodeId> {
        self.reachable(&self.roots())
    }

    /// What node `n` needs computed first: its operands, and for a loop's result the loop's
    /// initial and next values.
    pub fn dependencies(&self, n: NodeId) -> Vec<NodeId> {
        match self.nodes[n as usize] {
            Node::LoopResult(l, _) => {
                let l = &self.loops[l as usize];
                l.init.iter().chain(&l.next).copied().collect()
            }
            node => operands(&node),
        }
    }

    /// For each node, the run-time loop whose iterations compute it: the loop's position
    /// and carried values and everything computed from them. Other nodes are computed
    /// once per point (loop-invariant values are hoisted out of loops by construction).
    pub fn loop_membership(&self) -> Vec<Option<u32>> {
        let mut member: Vec<Option<u32>> = vec![None; self.nodes.len()];
        for (n, node) in self.nodes.iter().enumerate() {
            member[n] = match *node {
                Node::LoopPos(l) | Node::Carried(l, _) => Some(l),
                Node::LoopResult(..) => None,
                other => operands(&other)
                    .into_iter()
                    .find_map(|o| member[o as usize]),
            };
        }
        member
    }

    /// The live nodes `live` (in arena order) in the order back ends compute them: each
    /// node once per point, except the nodes of a run-time loop's iterations, which form
    /// one [`Step::Loop`] placed just before the loop's first result.
    pub fn schedule(&self, live: &[NodeId]) -> Vec<Step> {
        let member = self.loop_membership();
        let mut bodies: Vec<Vec<NodeId>> = vec![Vec::new(); self.loops.len()];
        for &n in live {
            if let Some(l) = member[n as usize] {
                bodies[l as usize].push(n);
            }
        }
        let mut placed = vec![false; self.loops.len()];
        let mut steps = Vec::new();
        for &n in live.iter().filter(|&&n| member[n as usize].is_none()) {
            if let Node::LoopResult(l, _) = self.nodes[n as usize] {
                if !std::mem::replace(&mut placed[l as usize], true) {
                    let body = std::mem::take(&mut bodies[l as usize]);
                    steps.push(Step::Loop { index: l, body });
                }
            }
            steps.push(Step::Node(n));
        }
        steps
    }

    /// Whether this is a vertex kernel (it has a `Mesh` parameter).
    pub fn is_vertex(&self) -> bool {
        self.mesh.is_some()
    }

    /// The nodes the kernel's effects need: stored values and masks, contributions, and a
    /// line solve's coefficients and mask.
    pub fn roots(&self) -> Vec<NodeId> {
        let mut roots: Vec<NodeId> = self
            .stores
            .iter()
            .flat_map(|s| std::iter::once(s.value).chain(s.mask))
            .chain(self.contributions.iter().map(|&(_, n)| n))
            .collect();
        if let Some(l) = &self.line {
            roots.extend([l.lower, l.diag, l.upper, l.rhs]);
            roots.extend(l.mask);
        }
        roots
    }

    /// Whether launching the kernel twice leaves the same result as launching it once: true
    /// unless it updates a field in place and reads that field's own value at the point
    /// (a red-black sweep reads only the other colour, so repeating it changes nothing;
    /// `u = u + e` does). Launch-shape tuning runs only such kernels repeatedly.
    pub fn reruns_idempotently(&self) -> bool {
        let in_place: Vec<u32> = (0..self.fields.len() as u32)
            .filter(|&f| self.fields[f as usize].access == Access::InOut)
            .collect();
        !self.live_nodes().into_iter().any(|n| {
            matches!(self.nodes[n as usize], Node::Load { field, offset } if offset == [0, 0, 0] && in_place.contains(&field))
        })
    }

    /// Whether a thread may compute several points at once (tile variants of the PTX
    /// entries): every grid kernel but line kernels. A red-black kernel's tile holds
    /// points of both colours (only its colour's are stored, and they read only the other
    /// colour); a grid transfer's tile reads its mapped fields at mapped offsets
    /// ([`IndexMap::tile_offset`]).
    pub fn is_tileable(&self) -> bool {
        self.line.is_none() && self.mesh.is_none()
    }

    /// How many live nodes of each kind: a structural summary for tests and reports.
    pub fn op_counts(&self) -> OpCounts {
        let mut c = OpCounts::default();
        for n in self.live_nodes() {
            match self.nodes[n as usize] {
                Node::Load { .. } | Node::Gather { .. } => c.loads += 1,
                Node::Binary(b, ..) if !b.is_comparison() => c.arith += 1,
                Node::Unary(..) | Node::Fma(..) => c.arith += 1,
                Node::Select(..) => c.selects += 1,
                Node::RealConst(_) | Node::IntConst(_) | Node::BoolConst(_) => c.consts += 1,
                _ => {}
            }
        }
        c
    }

    /// Whether any real value's type is the generic `T`.
    pub fn is_generic(&self) -> bool {
        self.types.contains(&Ty::Real)
            || self.fields.iter().any(|f| f.elem == Ty::Real)
            || self.scalars.iter().any(|s| s.ty == Ty::Real)
            || self.reductions.iter().any(|r| r.ty == Ty::Real)
    }
}

/// A step of a point's computation (see [`Kernel::schedule`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Compute one node.
    Node(NodeId),
    /// Run run-time loop `index`, computing `body` (in order) in each iteration.
    Loop {
        /// The loop's number in [`Kernel::loops`].
        index: u32,
        /// The live nodes of an iteration.
        body: Vec<NodeId>,
    },
}

/// Counts of live operations in a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Field reads.
    pub loads: usize,
    /// Arithmetic operations (unary, binary, fma).
    pub arith: usize,
    /// Selects (from `if`).
    pub selects: usize,
    /// Distinct constants.
    pub consts: usize,
}

/// The operands of a node.
pub fn operands(node: &Node) -> Vec<NodeId> {
    match *node {
        Node::Unary(_, a) | Node::Cast(a) => vec![a],
        Node::Binary(_, a, b) => vec![a, b],
        Node::Fma(a, b, c) | Node::Select(a, b, c) => vec![a, b, c],
        Node::Gather { vertex, .. } => vec![vertex],
        Node::Topo { pos, .. } => vec![pos],
        Node::Sample { x, y, .. } => vec![x, y],
        _ => vec![],
    }
}
