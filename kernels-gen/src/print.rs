//! A readable, deterministic text form of the IR (`kernels-gen --emit ir`).
//!
//! Two front ends lower the same kernel to the same IR exactly when these texts are equal.

use crate::ir::{Access, Kernel, Node, ParamKind};
use std::fmt::{self, Write};

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut params = Vec::new();
        for &(kind, i) in &self.param_order {
            let i = i as usize;
            params.push(match kind {
                ParamKind::Field => {
                    let p = &self.fields[i];
                    let access = match p.access {
                        Access::In => "in",
                        Access::Out => "out",
                    };
                    format!("{access} {}: {}", p.name, p.elem)
                }
                ParamKind::Scalar => format!("{}: {}", self.scalars[i].name, self.scalars[i].ty),
                ParamKind::Reduction => {
                    let r = &self.reductions[i];
                    format!("{} {}: {}", r.op.type_name().to_lowercase(), r.name, r.ty)
                }
            });
        }
        writeln!(
            f,
            "kernel {}[{}d, halo {}]({}) {{",
            self.name,
            self.dims,
            self.halo(),
            params.join(", ")
        )?;
        for p in &self.fields {
            if p.access == Access::In {
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
        for n in self.live_nodes() {
            writeln!(
                f,
                "  %{n}: {} = {}",
                self.types[n as usize],
                self.node_text(n)
            )?;
        }
        for &(field, n) in &self.stores {
            writeln!(f, "  store {} <- %{n}", self.fields[field as usize].name)?;
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
            Node::Binary(op, a, b) => {
                write!(s, "{} %{a}, %{b}", format!("{op:?}").to_lowercase())
            }
            Node::Fma(a, b, c) => write!(s, "fma %{a}, %{b}, %{c}"),
            Node::Select(c, a, b) => write!(s, "select %{c}, %{a}, %{b}"),
            Node::Cast(a) => write!(s, "cast %{a}"),
        };
        s
    }
}
