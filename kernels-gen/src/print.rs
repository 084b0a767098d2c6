//! A readable, deterministic text form of the IR (`kernels-gen --emit ir`).
//!
//! Two front ends lower the same kernel to the same IR exactly when these texts are equal.

use crate::ir::{Access, Binary, BitOp, IndexMap, Kernel, Node, ParamKind};
use std::fmt::{self, Write};

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut params = Vec::new();
        for &(kind, i) in &self.param_order {
            let i = i as usize;
            params.push(match kind {
                ParamKind::Field => {
                    let p = &self.fields[i];
                    let access = match (p.access, p.map) {
                        (Access::In, IndexMap::Same) => "in",
                        (Access::In, IndexMap::Fine) => "in fine",
                        (Access::In, IndexMap::Coarse) => "in coarse",
                        (Access::Out, _) => "out",
                        (Access::InOut, _) => "inout",
                    };
                    format!("{access} {}: {}", p.name, p.elem)
                }
                ParamKind::Scalar if self.scalars[i].held => {
                    format!("{}: Value<{}>", self.scalars[i].name, self.scalars[i].ty)
                }
                ParamKind::Scalar => format!("{}: {}", self.scalars[i].name, self.scalars[i].ty),
                ParamKind::Reduction => {
                    let r = &self.reductions[i];
                    format!("{} {}: {}", r.op.type_name().to_lowercase(), r.name, r.ty)
                }
                ParamKind::Mesh => format!("mesh {}", self.mesh.as_deref().unwrap_or("")),
                ParamKind::Sampled => {
                    let g = &self.sampled[i];
                    format!("sampled {}: {}", g.name, g.elem)
                }
            });
        }
        writeln!(
            f,
            "kernel {}[{}d, halo {}{}{}{}]({}) {{",
            self.name,
            self.dims,
            self.halo(),
            match &self.line {
                Some(l) => format!(", line {}", l.axis),
                None => String::new(),
            },
            match self.red_black {
                Some(c) => format!(", red_black {}", self.scalars[c as usize].name),
                None => String::new(),
            },
            self.consts
                .iter()
                .map(|(p, v)| format!(", {p} = {v}"))
                .collect::<String>(),
            params.join(", ")
        )?;
        for p in &self.fields {
            if p.access.is_read() {
                let d = self.dims as usize;
                writeln!(
                    f,
                    "  ; {} reads {:?}..={:?}",
                    p.name,
                    &p.reach_lo[..d],
                    &p.reach_hi[..d]
                )?;
            }
        }
        for (l, lp) in self.loops.iter().enumerate() {
            let list = |v: &[u32]| {
                v.iter()
                    .map(|n| format!("%{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let stops = match lp.stops_when {
                Some(c) => format!(", stops when carried {c} is false"),
                None => String::new(),
            };
            writeln!(
                f,
                "  ; loop {l} over {:?}: init [{}], next [{}]{stops}",
                lp.over,
                list(&lp.init),
                list(&lp.next)
            )?;
        }
        // A read stage's nodes (computed where it is read) are listed with the point's.
        let mut shown = self.live_nodes();
        if let Some(layout) = self.stage_layout() {
            let d = self.dims as usize;
            let levels = self.stage_levels();
            let mut roots = Vec::new();
            for &(s, _) in &layout.stages {
                let st = &self.stages[s as usize];
                // A chain's later stages say their level (the barriers before them).
                let level = match levels[s as usize] {
                    0 => String::new(),
                    l => format!(", level {l}"),
                };
                writeln!(
                    f,
                    "  ; stage {} = %{} read at {:?}..={:?}{level}",
                    st.name,
                    st.value,
                    &st.reach_lo[..d],
                    &st.reach_hi[..d]
                )?;
                roots.push(st.value);
            }
            shown.extend(self.reachable(&roots));
            shown.sort_unstable();
            shown.dedup();
        }
        for n in shown {
            writeln!(
                f,
                "  %{n}: {} = {}",
                self.types[n as usize],
                self.node_text(n)
            )?;
        }
        for st in &self.stores {
            let name = &self.fields[st.field as usize].name;
            match st.mask {
                Some(m) => writeln!(f, "  store {name} <- %{} if %{m}", st.value)?,
                None => writeln!(f, "  store {name} <- %{}", st.value)?,
            }
        }
        if let Some(l) = &self.line {
            write!(
                f,
                "  solve {} along {}: %{} u[-1] + %{} u + %{} u[+1] = %{}",
                self.fields[l.field as usize].name, l.axis, l.lower, l.diag, l.upper, l.rhs
            )?;
            match l.mask {
                Some(m) => writeln!(f, " if %{m}")?,
                None => writeln!(f)?,
            }
        }
        for &(r, n) in &self.contributions {
            let red = &self.reductions[r as usize];
            writeln!(
                f,
                "  reduce {} {} <- %{n}",
                red.op.type_name().to_lowercase(),
                red.name
            )?;
        }
        f.write_str("}\n")
    }
}

impl Kernel {
    /// The right-hand side of one node, e.g. `add %3, %4`.
    pub fn node_text(&self, n: u32) -> String {
        let mut s = String::new();
        let _ = match self.nodes[n as usize] {
            Node::RealConst(b) => write!(s, "const {:?}", f64::from_bits(b)),
            Node::IntConst(v) => write!(s, "const {v}"),
            Node::BoolConst(v) => write!(s, "const {v}"),
            Node::Scalar(i) => write!(s, "scalar {}", self.scalars[i as usize].name),
            Node::Index(a) => write!(s, "index {a}"),
            Node::Extent(a) => write!(s, "extent {a}"),
            Node::Load { field, offset } => write!(
                s,
                "load {}{:?}",
                self.fields[field as usize].name,
                &offset[..self.dims as usize]
            ),
            Node::Unary(op, a) => write!(s, "{} %{a}", format!("{op:?}").to_lowercase()),
            Node::Binary(op, a, b) => write!(s, "{} %{a}, %{b}", binary_name(op)),
            Node::Fma(a, b, c) => write!(s, "fma %{a}, %{b}, %{c}"),
            Node::Select(c, a, b) => write!(s, "select %{c}, %{a}, %{b}"),
            Node::Cast(a) => write!(s, "cast %{a}"),
            Node::LineSolution(_) => write!(s, "line solution"),
            Node::Staged { stage, offset } => write!(
                s,
                "staged {}{:?}",
                self.stages[stage as usize].name,
                &offset[..self.dims.max(1) as usize]
            ),
            Node::Gather { field, vertex } => {
                write!(s, "gather {}[%{vertex}]", self.fields[field as usize].name)
            }
            Node::Topo { table, pos } => write!(s, "mesh {table:?}[%{pos}]"),
            Node::Sample { grid, x, y } => {
                write!(s, "sample {}(%{x}, %{y})", self.sampled[grid as usize].name)
            }
            Node::LoopPos(l) => write!(s, "loop {l} position"),
            Node::Carried(l, k) => write!(s, "loop {l} carried {k}"),
            Node::LoopResult(l, k) => write!(s, "loop {l} result {k}"),
        };
        s
    }
}

/// A binary operation's name in the text: `add`, `lt`, `bitand`, `shl`, ...
fn binary_name(op: Binary) -> String {
    let name = match op {
        Binary::Compare(c) => format!("{c:?}"),
        Binary::Bit(shift @ (BitOp::Shl | BitOp::Shr)) => format!("{shift:?}"),
        Binary::Bit(o) => format!("bit{o:?}"),
        _ => format!("{op:?}"),
    };
    name.to_lowercase()
}
