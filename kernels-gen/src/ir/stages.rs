//! Staged values: `let f = stage(e);` computes `e` at every point a thread block's points
//! read it from (its tile plus a halo) and keeps it on chip, so that the kernel reads `f`
//! at offsets like a field (`f[(-1, 0)]`) without recomputing it or going through device
//! memory. A stage may read earlier stages at offsets (a chain: the cells' reconstructions
//! staged, then the faces' fluxes from them), so that a value read by several later ones
//! is computed once.
//!
//! In the IR a stage is a value node of its own ([`Stage::value`]) computed at the point
//! where it is read: [`Node::Staged`] reads it at an offset from the current point. The
//! PTX entry (`llvm/codegen/staged.rs`) computes the stages over a thread block's tile
//! first, a [`StageGroup`] (a `stage(..)` call) at a time, by level with a barrier between
//! levels; the CPU computes them
//! along the rows its points read (`back/rust/staged.rs`), a chain's lower levels along
//! the rows its higher levels read; the interpreter and the host JIT run
//! [`Kernel::unstaged`], the same kernel with each staged read replaced by the stage's
//! nodes shifted to its offset, which computes the same operations on the same values.

use super::*;

mod inline;

/// A staged value of a kernel: `value` evaluated at any point, read at the offsets
/// `reach_lo ..= reach_hi` (per axis) from the current point, by the kernel or by the
/// stages that read it (the box their `stage(..)` call is computed over, moved by their
/// reads' offsets).
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The name it is bound to in the kernel (`f` of `let f = stage(..)`; `f.1` for a
    /// tuple's part without a name of its own).
    pub name: String,
    /// The node of its value at the point it is evaluated at.
    pub value: NodeId,
    /// Smallest offset it is read at, per axis (<= 0 on the axes it is read along; 0 on
    /// the others), by the kernel and through the stages that read it.
    pub reach_lo: [i32; 3],
    /// Largest offset it is read at, per axis.
    pub reach_hi: [i32; 3],
    /// Which `stage(..)` call it comes from, numbered in the kernel's order: a tuple's
    /// parts share their call's number and are computed together.
    pub call: u32,
}

/// What a staging back end keeps on chip: the stages the kernel reads (directly or
/// through other stages), the box of offsets around a tile that covers all their reaches
/// (a summary: the back ends use each group's own box), and their groups, each with its
/// own box, over which its arrays are laid out.
#[derive(Clone, Debug, PartialEq)]
pub struct StageLayout {
    /// The stages read, in stage order, with their value types.
    pub stages: Vec<(u32, Ty)>,
    /// The box's low corner (<= 0 per axis).
    pub lo: [i32; 3],
    /// The box's high corner (>= 0 per axis).
    pub hi: [i32; 3],
    /// The stages by `stage(..)` call, in the order they are computed: by level, then
    /// as written.
    pub groups: Vec<StageGroup>,
}

/// The read stages of one `stage(..)` call (a tuple's parts, or one value): computed
/// together, over the box `lo ..= hi` of their reaches around the tile (within the
/// layout's box), after the groups of lower levels.
#[derive(Clone, Debug, PartialEq)]
pub struct StageGroup {
    /// The group's stages, as positions in [`StageLayout::stages`].
    pub stages: Vec<usize>,
    /// The low corner of the box of its stages' reaches.
    pub lo: [i32; 3],
    /// The high corner.
    pub hi: [i32; 3],
    /// 0 for stages that read no stage, else one more than the highest level they read:
    /// a group is computed after every group of a lower level is stored.
    pub level: usize,
}

impl StageLayout {
    /// The box of offsets around the tile over which each stage's array is laid out (that
    /// of its group), in the order of [`StageLayout::stages`].
    pub fn array_boxes(&self) -> Vec<([i32; 3], [i32; 3])> {
        let mut boxes = vec![([0; 3], [0; 3]); self.stages.len()];
        for g in &self.groups {
            for &i in &g.stages {
                boxes[i] = (g.lo, g.hi);
            }
        }
        boxes
    }

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

    /// The staged reads among the nodes `roots` need: `(stage, offset)` of each
    /// [`Node::Staged`].
    pub fn staged_reads(&self, roots: &[NodeId]) -> Vec<(u32, [i32; 3])> {
        self.reachable(roots)
            .into_iter()
            .filter_map(|n| match self.nodes[n as usize] {
                Node::Staged { stage, offset } => Some((stage, offset)),
                _ => None,
            })
            .collect()
    }

    /// Which stages are read: by the kernel's live nodes, or by a stage that is read.
    pub fn stages_read(&self) -> Vec<bool> {
        let mut read = vec![false; self.stages.len()];
        for (s, _) in self.staged_reads(&self.live_nodes()) {
            read[s as usize] = true;
        }
        // A stage reads only earlier ones: one pass from the last marks every chain.
        for s in (0..self.stages.len()).rev() {
            if read[s] {
                for (t, _) in self.staged_reads(&[self.stages[s].value]) {
                    read[t as usize] = true;
                }
            }
        }
        read
    }

    /// Each stage's level, that of its `stage(..)` call: 0 for a call whose values read no
    /// stage, else one more than the highest level of the calls they read (a call's
    /// values are computed together, so a value that reads nothing waits with its call,
    /// and whatever reads it waits for the whole call).
    pub fn stage_levels(&self) -> Vec<usize> {
        // Calls are numbered in order and read only earlier calls, whose levels are final
        // by the time a later call's parts are met.
        let calls = self
            .stages
            .iter()
            .map(|s| s.call as usize + 1)
            .max()
            .unwrap_or(0);
        let mut call_level = vec![0; calls];
        for st in &self.stages {
            for (t, _) in self.staged_reads(&[st.value]) {
                let read = call_level[self.stages[t as usize].call as usize];
                let l = &mut call_level[st.call as usize];
                *l = (*l).max(read + 1);
            }
        }
        self.stages
            .iter()
            .map(|s| call_level[s.call as usize])
            .collect()
    }

    /// The stages the kernel reads, their groups and the box they are computed over
    /// (`None`: it reads none).
    pub fn stage_layout(&self) -> Option<StageLayout> {
        let read = self.stages_read();
        let stages: Vec<(u32, Ty)> = (0..self.stages.len() as u32)
            .filter(|&s| read[s as usize])
            .map(|s| (s, self.types[self.stages[s as usize].value as usize]))
            .collect();
        if stages.is_empty() {
            return None;
        }
        let level_of = self.stage_levels();
        let mut groups: Vec<StageGroup> = Vec::new();
        let (mut lo, mut hi) = ([0; 3], [0; 3]);
        for (i, &(s, _)) in stages.iter().enumerate() {
            let st = &self.stages[s as usize];
            let call = st.call;
            let same_call =
                |g: &StageGroup| self.stages[stages[g.stages[0]].0 as usize].call == call;
            let g = match groups.iter().position(same_call) {
                Some(g) => g,
                None => {
                    groups.push(StageGroup {
                        stages: Vec::new(),
                        lo: [0; 3],
                        hi: [0; 3],
                        level: 0,
                    });
                    groups.len() - 1
                }
            };
            let group = &mut groups[g];
            group.stages.push(i);
            group.level = group.level.max(level_of[s as usize]);
            for a in 0..3 {
                group.lo[a] = group.lo[a].min(st.reach_lo[a]);
                group.hi[a] = group.hi[a].max(st.reach_hi[a]);
                lo[a] = lo[a].min(st.reach_lo[a]);
                hi[a] = hi[a].max(st.reach_hi[a]);
            }
        }
        // Stable: groups of one level stay in the order written.
        groups.sort_by_key(|g| g.level);
        Some(StageLayout {
            stages,
            lo,
            hi,
            groups,
        })
    }
}
