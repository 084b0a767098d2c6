//! `break` and `continue` in loops with constant bounds, which are unrolled, and in loops
//! over the mesh. An exit does not jump: each loop keeps two hidden boolean locals, *alive* (no `break` taken
//! yet) and *going on* (no `continue` taken in this iteration), which `break` and
//! `continue` set to false on their path. Being locals, they are forked and joined by
//! `if` like any other: after `if c { break; }` alive is `select(c, false, alive)` (an
//! exit itself counts only where the enclosing flags let it run). Every
//! later write (to a local, an output or a reduction) is guarded by the conjunction of
//! the flags of all enclosing loops: it keeps the old value where a flag is false. On a
//! GPU that is a predicated write, the same for every thread; the iterations of an unrolled
//! loop after a `break` are still computed (their results are discarded). A loop over the
//! mesh carries its alive flag from one iteration to the next and stops once it is false
//! ([`crate::ir::RuntimeLoop::stops_when`]): on a GPU a thread leaves the loop, and the
//! warp leaves it when all its threads have.

use super::{err, Lowerer, Result, Slot, Val};
use crate::ast::SpanId;
use crate::ir::{Binary, Node, NodeId};

/// A loop being lowered: the slots of its alive and going-on flags.
#[derive(Clone, Copy, Debug)]
pub(super) struct OpenLoop {
    alive: usize,
    going_on: usize,
}

impl Lowerer<'_> {
    /// A hidden boolean local holding `true`.
    pub(super) fn flag(&mut self, name: &str) -> usize {
        let t = self.b.boolean(true);
        self.state.slots.push(Slot {
            val: Val::Node(t),
            mutable: true,
            name: name.to_string(),
        });
        self.state.slots.len() - 1
    }

    /// Opens an unrolled loop (see the module's text).
    pub(super) fn open_unrolled_loop(&mut self) {
        let alive = self.flag("(no break yet)");
        let going_on = self.flag("(no continue yet)");
        self.open_loops.push(OpenLoop { alive, going_on });
    }

    /// Opens a loop over the mesh whose alive flag is slot `alive` (carried by the loop).
    pub(super) fn open_mesh_loop(&mut self, alive: usize) {
        let going_on = self.flag("(no continue yet)");
        self.open_loops.push(OpenLoop { alive, going_on });
    }

    /// Starts an iteration of the innermost unrolled loop: no `continue` taken.
    pub(super) fn begin_iteration(&mut self) {
        if let Some(OpenLoop { going_on, .. }) = self.open_loops.last() {
            let t = self.b.boolean(true);
            self.state.slots[*going_on].val = Val::Node(t);
        }
    }

    /// Closes the innermost loop.
    pub(super) fn close_loop(&mut self) {
        self.open_loops.pop();
    }

    /// `break` (or `continue`, when `is_break` is false) at `span`.
    pub(super) fn exit(&mut self, is_break: bool, span: SpanId) -> Result<Option<Val>> {
        let word = if is_break { "break" } else { "continue" };
        match self.open_loops.last().copied() {
            None => err(
                span,
                format!("`{word}` outside a loop"),
                Some("`break` and `continue` leave `for` loops"),
            ),
            Some(OpenLoop { alive, going_on }) => {
                // Only where this point is reached: an exit after an earlier one is none.
                let slot = if is_break { alive } else { going_on };
                let f = self.b.boolean(false);
                let now = match self.state.slots[slot].val {
                    Val::Node(old) => self.guarded(f, old),
                    _ => f,
                };
                self.state.slots[slot].val = Val::Node(now);
                Ok(None)
            }
        }
    }

    /// The condition under which a write here takes effect: the flags of all enclosing
    /// unrolled loops (`None`: always).
    fn write_guard(&mut self) -> Option<NodeId> {
        let mut guard: Option<NodeId> = None;
        let flags: Vec<usize> = self
            .open_loops
            .iter()
            .flat_map(|l| [l.alive, l.going_on])
            .collect();
        for slot in flags {
            let Val::Node(flag) = self.state.slots[slot].val else {
                continue;
            };
            if matches!(self.b.node(flag), Node::BoolConst(true)) {
                continue;
            }
            guard = Some(match guard {
                None => flag,
                Some(g) => self.b.binary(Binary::And, g, flag),
            });
        }
        guard
    }

    /// `new` where the enclosing loops go on, else `old`.
    pub(super) fn guarded(&mut self, new: NodeId, old: NodeId) -> NodeId {
        match self.write_guard() {
            Some(g) => self.b.select(g, new, old),
            None => new,
        }
    }

    /// Whether a write here may not take effect (a `break` or `continue` came before it
    /// on some path).
    pub(super) fn writes_guarded(&mut self) -> bool {
        self.write_guard().is_some()
    }
}
