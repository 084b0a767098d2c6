//! Guarded evaluation: which arms of an `if` are computed only when taken.
//!
//! The IR turns every `if` into a [`Node::Select`] whose two arms are both computed. That
//! is right for cheap arms (a select costs less than a branch), but a kernel that treats
//! its domain's edges apart, say a boundary flux with square roots and divisions, would
//! pay for the edge case at every point. This pass finds, for each select, the nodes that
//! only its arm needs (nothing else uses them), and where those cost enough it plans a
//! branch: the code generator then computes them in a conditional block and joins the
//! arms with a phi. Selects on one condition share one branch, so that an edge's several
//! flux components, which share most of their work, are guarded together.
//!
//! Values do not change: the taken arm computes exactly what the select would have
//! chosen. Reads from memory that only an arm needs are placed in its branch too when the
//! condition does not itself come from memory; under a condition on data they stay
//! before the branch, where their latency overlaps with the other reads. (The GPU's fast
//! path still issues all of a thread's reads together before the arithmetic, so there a
//! guarded read is made anyway; it is skipped on the guarded edge path and on the host.)

use crate::ir::{operands, Binary, Comparison, Kernel, Node, NodeId, Unary};
use std::collections::{BTreeSet, HashMap};

/// The least cost of the work an arm guards for it to get a branch of its own, in units
/// of one add (see [`cost`]): a branch and its join cost about six instructions whichever
/// way it goes, and the threads of a warp that disagree run both arms, so an arm must
/// save well more than that when skipped (two divisions or roots, say).
pub const BRANCH_THRESHOLD: u32 = 20;

/// How many times the threshold an arm under a condition on data must guard.
pub const DATA_FACTOR: u32 = 3;

/// One step of the computation at one level of nesting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Compute one node.
    Node(NodeId),
    /// Take branch number `n` of [`Plan::branches`].
    Branch(usize),
}

/// A conditional block pair: the work only the `then` arms of some selects on `cond` need,
/// the work only their `else` arms need, and the selects, which become phis at the join.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    /// The condition (a `bool` node computed before the branch).
    pub cond: NodeId,
    /// What each arm computes (`[then, else]`), in order.
    pub arms: [Vec<Unit>; 2],
    /// The selects joined after the branch.
    pub selects: Vec<NodeId>,
}

/// The order of a kernel's computation with its branches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// What is computed unconditionally, in order.
    pub top: Vec<Unit>,
    /// Every branch, referred to by [`Unit::Branch`].
    pub branches: Vec<Branch>,
}

impl Plan {
    /// The nodes computed under some branch.
    pub fn guarded_nodes(&self) -> usize {
        self.branches
            .iter()
            .flat_map(|b| b.arms.iter().flatten())
            .filter(|u| matches!(u, Unit::Node(_)))
            .count()
    }
}

/// The relative cost of computing a node once (an add is 1), roughly the instructions a
/// GPU issues for it: a correctly rounded division or root takes about ten, the
/// language's own transcendentals tens to a hundred.
pub fn cost(node: &Node) -> u32 {
    match *node {
        Node::Unary(Unary::Sqrt, _) => 10,
        Node::Unary(Unary::Exp | Unary::Ln | Unary::Log2 | Unary::Log10, _) => 50,
        Node::Unary(Unary::Exp2 | Unary::Tanh | Unary::Cbrt, _) => 55,
        Node::Unary(Unary::Sinh | Unary::Cosh | Unary::Asinh | Unary::Acosh, _) => 110,
        Node::Unary(Unary::Atanh, _) => 60,
        Node::Binary(Binary::Div | Binary::Rem, ..) => 10,
        Node::Binary(Binary::Pow, ..) => 100,
        Node::Binary(Binary::Hypot, ..) => 20,
        // Both reductions run (the integer one of Payne and Hanek is most of it).
        Node::Unary(Unary::Sin | Unary::Cos | Unary::Tan, _) => 120,
        Node::Unary(Unary::Asin | Unary::Acos | Unary::Atan, _) => 50,
        Node::Binary(Binary::Atan2, ..) => 70,
        // A read from memory: an address and a load, and the bytes it moves.
        Node::Load { .. } => 10,
        Node::Unary(..) | Node::Binary(..) | Node::Fma(..) | Node::Select(..) | Node::Cast(_) => 1,
        _ => 0,
    }
}

/// Whether a node may be computed under a branch: arithmetic and field reads.
fn movable(node: &Node) -> bool {
    matches!(
        node,
        Node::Unary(..)
            | Node::Binary(..)
            | Node::Fma(..)
            | Node::Select(..)
            | Node::Cast(_)
            | Node::Load { .. }
    )
}

/// A candidate region: the nodes only one arm of the selects on `cond` (inside `parent`)
/// needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Region {
    cond: NodeId,
    arm: usize,
    parent: Option<usize>,
}

/// The regions found so far and their nesting.
#[derive(Default)]
struct Regions {
    list: Vec<Region>,
    index: HashMap<Region, usize>,
}

impl Regions {
    fn child(&mut self, parent: Option<usize>, cond: NodeId, arm: usize) -> usize {
        let r = Region { cond, arm, parent };
        let n = self.list.len();
        *self.index.entry(r).or_insert_with(|| {
            self.list.push(r);
            n
        })
    }

    fn ancestors(&self, r: Option<usize>) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut at = r;
        while let Some(x) = at {
            chain.push(x);
            at = self.list[x].parent;
        }
        chain
    }

    /// The innermost region holding both (`None`: the top level).
    fn common(&self, a: Option<usize>, b: Option<usize>) -> Option<usize> {
        let outer_of_b = self.ancestors(b);
        self.ancestors(a)
            .into_iter()
            .find(|x| outer_of_b.contains(x))
    }
}

/// Plans the branches of `kernel` (its live nodes `live`, ascending): `None` when the
/// kernel has run-time loops (they keep their selects) or nothing is worth a branch.
pub fn plan(kernel: &Kernel, live: &[NodeId]) -> Option<Plan> {
    plan_with(kernel, live, &kernel.roots(), BRANCH_THRESHOLD)
}

/// [`plan`] of the nodes `live` that the values `roots` need, rather than the kernel's
/// effects: a staged kernel's stages (`llvm/codegen/staged.rs`).
pub fn plan_for(kernel: &Kernel, live: &[NodeId], roots: &[NodeId]) -> Option<Plan> {
    plan_with(kernel, live, roots, BRANCH_THRESHOLD)
}

/// [`plan`] with chosen roots and threshold.
fn plan_with(kernel: &Kernel, live: &[NodeId], roots: &[NodeId], threshold: u32) -> Option<Plan> {
    if !kernel.loops.is_empty() || kernel.line.is_some() {
        return None;
    }
    let n = kernel.nodes.len();
    let traits = Traits::of(kernel);
    let mut users: Vec<Vec<NodeId>> = vec![Vec::new(); n];
    for &x in live {
        for o in operands(&kernel.nodes[x as usize]) {
            users[o as usize].push(x);
        }
    }
    let mut rooted = vec![false; n];
    for &r in roots {
        rooted[r as usize] = true;
    }

    // Each node's region: the innermost one all its uses lie in (users come later).
    let mut regions = Regions::default();
    let mut region: Vec<Option<usize>> = vec![None; n];
    for &x in live.iter().rev() {
        let node = &kernel.nodes[x as usize];
        if rooted[x as usize] || !movable(node) || users[x as usize].is_empty() {
            continue;
        }
        let mut place: Option<Option<usize>> = None;
        for &u in &users[x as usize] {
            let at = region[u as usize];
            let want = match kernel.nodes[u as usize] {
                Node::Select(c, a, b) if c != x && (a == x) != (b == x) => {
                    Some(regions.child(at, c, usize::from(b == x)))
                }
                _ => at,
            };
            place = Some(match place {
                None => want,
                Some(p) => regions.common(p, want),
            });
            if place == Some(None) {
                break;
            }
        }
        let mut place = place.flatten();
        // A read stays out of branches on data: issued before them, it overlaps with other
        // reads; issued inside, its latency waits on the condition.
        if matches!(node, Node::Load { .. }) {
            while let Some(r) = place {
                if traits.reads_memory[regions.list[r].cond as usize] {
                    place = regions.list[r].parent;
                } else {
                    break;
                }
            }
        }
        region[x as usize] = place;
    }

    // Keep the regions whose work (their nested regions' included) is worth a branch.
    let mut work = vec![0u32; regions.list.len()];
    for &x in live {
        for r in regions.ancestors(region[x as usize]) {
            work[r] += cost(&kernel.nodes[x as usize]);
        }
    }
    // - A rarely true condition (a domain edge) runs its `else` arm almost everywhere: a
    //   branch around that arm would cost without saving.
    // - Any other condition on the index alone (a red-black colouring; but also
    //   `index(0) != 0`, whose rare arm is the `else`) gets no branch: a colouring splits
    //   every warp.
    // - A condition on data may split warps, and the work in its arms is no longer shared
    //   between the points of a thread: its arms must guard `DATA_FACTOR` times as much.
    let mut kept: Vec<bool> = regions
        .list
        .iter()
        .zip(&work)
        .map(|(r, &w)| {
            let c = r.cond as usize;
            let on_data = traits.reads_memory[c];
            let rare = traits.rare[c];
            let on_index_alone = traits.on_index[c] && !on_data;
            let needed = if on_data {
                DATA_FACTOR * threshold
            } else {
                threshold
            };
            let index_pattern = on_index_alone && !rare;
            let common_arm = r.arm == 1 && rare;
            w >= needed && !index_pattern && !common_arm
        })
        .collect();
    // Drop a branch that cannot be taken (its arms would need what it joins, or it lies on
    // a cycle of needs), and try again.
    loop {
        if !kept.iter().any(|&k| k) {
            return None;
        }
        let layout = Layout::new(kernel, live, &regions, &region, &kept);
        match layout.plan() {
            Ok(plan) => return Some(plan),
            Err(culprit) => {
                for (r, k) in kept.iter_mut().enumerate() {
                    if layout.branch_of_region[r] == Some(culprit) {
                        *k = false;
                    }
                }
            }
        }
    }
}

/// What each node's value comes from, found in one pass over the arena (operands come
/// before their users).
struct Traits {
    /// Computed from a field read.
    reads_memory: Vec<bool>,
    /// Computed from the point's index.
    on_index: Vec<bool>,
    /// An index plus or minus terms that are indices or do not depend on the index (no
    /// products, divisions or remainders of indices).
    linear: Vec<bool>,
    /// A condition that holds only on a lower-dimensional part of the domain: such a sum
    /// of indices compared for equality with something else (`index(0) == 0`,
    /// `index(1) == extent(1) - 1`), a conjunction with one, or a disjunction of such.
    rare: Vec<bool>,
}

impl Traits {
    fn of(kernel: &Kernel) -> Traits {
        let n = kernel.nodes.len();
        let mut t = Traits {
            reads_memory: vec![false; n],
            on_index: vec![false; n],
            linear: vec![false; n],
            rare: vec![false; n],
        };
        for (x, node) in kernel.nodes.iter().enumerate() {
            let ops = operands(node);
            let any = |v: &[bool]| ops.iter().any(|&o| v[o as usize]);
            t.reads_memory[x] = matches!(
                node,
                Node::Load { .. } | Node::Gather { .. } | Node::Sample { .. } | Node::Staged { .. }
            ) || any(&t.reads_memory);
            t.on_index[x] = matches!(node, Node::Index(_)) || any(&t.on_index);
            let part = |t: &Traits, o: NodeId| t.linear[o as usize] || !t.on_index[o as usize];
            let linear = match *node {
                Node::Index(_) => true,
                Node::Cast(a) => t.linear[a as usize],
                Node::Binary(Binary::Add | Binary::Sub, a, b) => {
                    (t.linear[a as usize] || t.linear[b as usize]) && part(&t, a) && part(&t, b)
                }
                _ => false,
            };
            t.linear[x] = linear;
            let sum_vs = |a: NodeId, b: NodeId| t.linear[a as usize] && part(&t, b);
            let rare = match *node {
                Node::Binary(Binary::Compare(Comparison::Eq), a, b) => sum_vs(a, b) || sum_vs(b, a),
                Node::Binary(Binary::And, a, b) => t.rare[a as usize] || t.rare[b as usize],
                Node::Binary(Binary::Or, a, b) => t.rare[a as usize] && t.rare[b as usize],
                _ => false,
            };
            t.rare[x] = rare;
        }
        t
    }
}

/// A level of nesting: `None` for the top, else an arm of a branch.
type Level = Option<(usize, usize)>;

/// The branches that the kept regions make, and where each live node is computed.
struct Layout<'a> {
    kernel: &'a Kernel,
    live: &'a [NodeId],
    /// The level each node is computed at.
    level: Vec<Level>,
    /// The branch each kept region belongs to.
    branch_of_region: Vec<Option<usize>>,
    /// The level each branch is taken at.
    branch_level: Vec<Level>,
    /// The branch that joins each select (if any).
    joined_by: Vec<Option<usize>>,
    branches: Vec<Branch>,
}

impl<'a> Layout<'a> {
    fn new(
        kernel: &'a Kernel,
        live: &'a [NodeId],
        regions: &Regions,
        region: &[Option<usize>],
        kept: &[bool],
    ) -> Layout<'a> {
        let n = kernel.nodes.len();
        let effective = |r: Option<usize>| regions.ancestors(r).into_iter().find(|&x| kept[x]);
        // Branches: one per condition and enclosing kept region.
        let mut branch_of_region: Vec<Option<usize>> = vec![None; regions.list.len()];
        let mut branch_key: HashMap<(NodeId, Option<usize>), usize> = HashMap::new();
        let mut parent_region: Vec<Option<usize>> = Vec::new();
        let mut branches: Vec<Branch> = Vec::new();
        for (r, reg) in regions.list.iter().enumerate() {
            if !kept[r] {
                continue;
            }
            let parent = effective(reg.parent);
            let b = *branch_key.entry((reg.cond, parent)).or_insert_with(|| {
                branches.push(Branch {
                    cond: reg.cond,
                    arms: [Vec::new(), Vec::new()],
                    selects: Vec::new(),
                });
                parent_region.push(parent);
                branches.len() - 1
            });
            branch_of_region[r] = Some(b);
        }
        let level_of = |r: Option<usize>| -> Level {
            r.map(|r| {
                let b = branch_of_region[r].expect("kept regions have branches");
                (b, regions.list[r].arm)
            })
        };
        let eff: Vec<Option<usize>> = (0..n).map(|x| effective(region[x])).collect();
        let level: Vec<Level> = eff.iter().map(|&r| level_of(r)).collect();
        let branch_level: Vec<Level> = parent_region.iter().map(|&r| level_of(r)).collect();
        // A select joins the branch on its condition at its own level when one of its
        // arms is computed in that branch.
        let mut joined_by: Vec<Option<usize>> = vec![None; n];
        for &x in live {
            if let Node::Select(c, a, b) = kernel.nodes[x as usize] {
                if let Some(&br) = branch_key.get(&(c, eff[x as usize])) {
                    if level[a as usize] == Some((br, 0)) || level[b as usize] == Some((br, 1)) {
                        joined_by[x as usize] = Some(br);
                        branches[br].selects.push(x);
                    }
                }
            }
        }
        Layout {
            kernel,
            live,
            level,
            branch_of_region,
            branch_level,
            joined_by,
            branches,
        }
    }

    /// What computes node `x` at its own level: itself, or the branch that joins it.
    fn owner(&self, x: usize) -> Unit {
        self.joined_by[x].map_or(Unit::Node(x as NodeId), Unit::Branch)
    }

    /// What stands for node `x` at level `at` (the node, or the branch it is computed in
    /// or joined by); `None` when `x` is computed outside `at`, before it.
    fn unit_at(&self, x: usize, at: Level) -> Option<Unit> {
        let mut unit = self.owner(x);
        let mut lv = self.level[x];
        loop {
            if lv == at {
                return Some(unit);
            }
            let (b, _) = lv?;
            unit = Unit::Branch(b);
            lv = self.branch_level[b];
        }
    }

    /// Whether level `at` lies inside branch `b`.
    fn inside(&self, mut at: Level, b: usize) -> bool {
        while let Some((x, _)) = at {
            if x == b {
                return true;
            }
            at = self.branch_level[x];
        }
        false
    }

    /// The plan, or a branch that cannot be taken: one whose arms need a select it joins,
    /// or one on a cycle of needs.
    fn plan(&self) -> Result<Plan, usize> {
        // Every unit of every level, with all the nodes it computes.
        let mut members: HashMap<(Level, Unit), Vec<usize>> = HashMap::new();
        for &x in self.live {
            let x = x as usize;
            let mut unit = self.owner(x);
            let mut lv = self.level[x];
            loop {
                members.entry((lv, unit)).or_default().push(x);
                let Some((b, _)) = lv else { break };
                unit = Unit::Branch(b);
                lv = self.branch_level[b];
            }
        }
        let mut branches = self.branches.clone();
        let top = self.order(&members, None)?;
        for (b, branch) in branches.iter_mut().enumerate() {
            for arm in 0..2 {
                branch.arms[arm] = self.order(&members, Some((b, arm)))?;
            }
        }
        Ok(Plan { top, branches })
    }

    /// Orders the units of one level so that each comes after what it needs (Kahn's
    /// algorithm, the unit with the earliest node first). A unit inside a branch may not
    /// need a select that branch joins: its value exists only after the join.
    fn order(
        &self,
        members: &HashMap<(Level, Unit), Vec<usize>>,
        at: Level,
    ) -> Result<Vec<Unit>, usize> {
        let units: Vec<(Unit, &Vec<usize>)> = members
            .iter()
            .filter(|((l, _), _)| *l == at)
            .map(|((_, u), xs)| (*u, xs))
            .collect();
        let position: HashMap<Unit, usize> = units
            .iter()
            .enumerate()
            .map(|(i, (u, _))| (*u, i))
            .collect();
        let mut needed_by: Vec<Vec<usize>> = vec![Vec::new(); units.len()];
        let mut waiting = vec![0usize; units.len()];
        for (i, (_, xs)) in units.iter().enumerate() {
            let mut needs = BTreeSet::new();
            for &x in xs.iter() {
                for o in operands(&self.kernel.nodes[x]) {
                    let o = o as usize;
                    if let Some(j) = self.joined_by[o] {
                        // Inside the branch, or joined by it (its phi would take the
                        // other's phi, which comes after the arms).
                        if self.inside(self.level[x], j) || self.joined_by[x] == Some(j) {
                            return Err(j);
                        }
                    }
                    if let Some(u) = self.unit_at(o, at) {
                        let j = position[&u];
                        if j != i {
                            needs.insert(j);
                        }
                    }
                }
            }
            waiting[i] = needs.len();
            for j in needs {
                needed_by[j].push(i);
            }
        }
        let first = |i: usize| units[i].1.iter().min().copied().unwrap_or(usize::MAX);
        let mut ready: BTreeSet<(usize, usize)> = (0..units.len())
            .filter(|&i| waiting[i] == 0)
            .map(|i| (first(i), i))
            .collect();
        let mut out = Vec::with_capacity(units.len());
        while let Some((_, i)) = ready.pop_first() {
            out.push(units[i].0);
            for &k in &needed_by[i] {
                waiting[k] -= 1;
                if waiting[k] == 0 {
                    ready.insert((first(k), k));
                }
            }
        }
        if out.len() == units.len() {
            return Ok(out);
        }
        // A cycle: give up the first branch left waiting.
        Err((0..units.len())
            .filter(|&i| waiting[i] > 0)
            .find_map(|i| match units[i].0 {
                Unit::Branch(b) => Some(b),
                Unit::Node(_) => None,
            })
            .expect("a cycle of needs passes through a branch"))
    }
}
