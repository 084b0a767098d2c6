//! A reference interpreter of the IR: slow, simple and obviously right.
//!
//! It evaluates every point with plain Rust arithmetic, one node at a time, and is the
//! third opinion in the conformance tests beside the generated Rust and the LLVM lowering.
//! It uses the same calling convention as the LLVM entries (see `crate::llvm`).

use crate::ir::{
    fold_binary, Binary, Const, Kernel, Node, ParamKind, Precision, ReduceOp, Ty, Unary,
};

#[derive(Clone, Copy, Debug)]
enum V {
    F(f64),
    I(i64),
    B(bool),
}

impl V {
    fn f(self) -> f64 {
        match self {
            V::F(x) => x,
            V::I(x) => x as f64,
            V::B(b) => b as i64 as f64,
        }
    }
    fn i(self) -> i64 {
        match self {
            V::I(x) => x,
            V::F(x) => x as i64,
            V::B(b) => b as i64,
        }
    }
    fn b(self) -> bool {
        matches!(self, V::B(true))
    }
}

/// Rounds a real result to its type's precision.
fn round(x: f64, t: Ty) -> f64 {
    if t == Ty::F32 {
        x as f32 as f64
    } else {
        x
    }
}

struct FieldSlot {
    ptr: u64,
    sy: i64,
    sz: i64,
    f32: bool,
}

/// Runs `k` at precision `p` over the domain described by `slots`.
///
/// # Safety
/// As for [`crate::llvm::jit::run_host`]: the slots must describe valid memory.
pub unsafe fn run(k: &Kernel, p: Precision, slots: &[u64]) {
    let n = [slots[0] as i64, slots[1] as i64, slots[2] as i64];
    let mut fields = Vec::new();
    let mut scalars = Vec::new();
    let mut results = Vec::new();
    let mut pos = 3;
    for &(kind, i) in &k.param_order {
        match kind {
            ParamKind::Field => {
                fields.push(FieldSlot {
                    ptr: slots[pos],
                    sy: slots[pos + 1] as i64,
                    sz: slots[pos + 2] as i64,
                    f32: k.fields[i as usize].elem.concrete(p) == Ty::F32,
                });
                pos += 3;
            }
            ParamKind::Scalar => {
                let raw = slots[pos];
                scalars.push(match k.scalars[i as usize].ty.concrete(p) {
                    Ty::F32 => V::F(f32::from_bits(raw as u32) as f64),
                    Ty::F64 => V::F(f64::from_bits(raw)),
                    Ty::Int => V::I(raw as i64),
                    _ => V::B(raw != 0),
                });
                pos += 1;
            }
            ParamKind::Reduction => {
                results.push(slots[pos]);
                pos += 1;
            }
        }
    }
    let live = k.live_nodes();
    let mut acc: Vec<f64> = k.reductions.iter().map(|r| r.op.identity()).collect();
    let mut vals = vec![V::I(0); k.nodes.len()];
    for kk in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let idx = [i, j, kk];
                let addr = |f: &FieldSlot, off: [i32; 3]| -> u64 {
                    let lin = (i + off[0] as i64)
                        + (j + off[1] as i64) * f.sy
                        + (kk + off[2] as i64) * f.sz;
                    let size = if f.f32 { 4 } else { 8 };
                    (f.ptr as i64 + lin * size) as u64
                };
                for &nid in &live {
                    let t = k.types[nid as usize].concrete(p);
                    let g = |m: u32| vals[m as usize];
                    vals[nid as usize] = match k.nodes[nid as usize] {
                        Node::RealConst(b) => V::F(round(f64::from_bits(b), t)),
                        Node::IntConst(x) => V::I(x),
                        Node::BoolConst(x) => V::B(x),
                        Node::Scalar(s) => scalars[s as usize],
                        Node::Index(a) => V::I(idx[a as usize]),
                        Node::Extent(a) => V::I(n[a as usize]),
                        Node::Load { field, offset } => {
                            let f = &fields[field as usize];
                            let a = addr(f, offset);
                            V::F(if f.f32 {
                                *(a as *const f32) as f64
                            } else {
                                *(a as *const f64)
                            })
                        }
                        Node::Unary(op, a) => unary(op, g(a), t),
                        Node::Binary(op, a, b) => {
                            binary(op, g(a), g(b), k.types[a as usize].concrete(p), t)
                        }
                        Node::Fma(a, b, c) => V::F(round(g(a).f().mul_add(g(b).f(), g(c).f()), t)),
                        Node::Select(c, a, b) => {
                            if g(c).b() {
                                g(a)
                            } else {
                                g(b)
                            }
                        }
                        Node::Cast(a) => match t {
                            Ty::Int => match g(a) {
                                V::F(x) => V::I(x as i64),
                                v => V::I(v.i()),
                            },
                            _ => V::F(round(g(a).f(), t)),
                        },
                    };
                }
                for &(f, nid) in &k.stores {
                    let fs = &fields[f as usize];
                    let a = addr(fs, [0; 3]);
                    let x = vals[nid as usize].f();
                    if fs.f32 {
                        *(a as *mut f32) = x as f32;
                    } else {
                        *(a as *mut f64) = x;
                    }
                }
                for &(r, nid) in &k.contributions {
                    let red = &k.reductions[r as usize];
                    let x = vals[nid as usize].f();
                    let t = red.ty.concrete(p);
                    let a = &mut acc[r as usize];
                    *a = round(
                        match red.op {
                            ReduceOp::Sum => *a + x,
                            ReduceOp::Max => a.max(x),
                            ReduceOp::Min => a.min(x),
                        },
                        t,
                    );
                }
            }
        }
    }
    for (r, red) in k.reductions.iter().enumerate() {
        if red.ty.concrete(p) == Ty::F32 {
            *(results[r] as *mut f32) = acc[r] as f32;
        } else {
            *(results[r] as *mut f64) = acc[r];
        }
    }
}

fn unary(op: Unary, a: V, t: Ty) -> V {
    match (op, a) {
        (Unary::Neg, V::I(x)) => V::I(x.wrapping_neg()),
        (Unary::Abs, V::I(x)) => V::I(x.wrapping_abs()),
        (Unary::Not, V::B(x)) => V::B(!x),
        (op, a) => {
            let x = a.f();
            V::F(round(
                match op {
                    Unary::Neg => -x,
                    Unary::Abs => x.abs(),
                    Unary::Sqrt => x.sqrt(),
                    Unary::Floor => x.floor(),
                    Unary::Exp => x.exp(),
                    Unary::Ln => x.ln(),
                    Unary::Not => f64::NAN,
                },
                t,
            ))
        }
    }
}

fn binary(op: Binary, a: V, b: V, operand: Ty, t: Ty) -> V {
    use Binary::*;
    if operand == Ty::Int || operand == Ty::Bool {
        // Integer and boolean semantics are defined once, by the constant folder.
        let c = |v: V| match operand {
            Ty::Int => Const::Int(v.i()),
            _ => Const::Bool(v.b()),
        };
        return match fold_binary(op, c(a), c(b)) {
            Some(Const::Int(x)) => V::I(x),
            Some(Const::Bool(x)) => V::B(x),
            _ => unreachable!("checked: {op:?} on {operand}"),
        };
    }
    let (x, y) = (a.f(), b.f());
    match op {
        Eq => V::B(x == y),
        Ne => V::B(x != y),
        Lt => V::B(x < y),
        Le => V::B(x <= y),
        Gt => V::B(x > y),
        Ge => V::B(x >= y),
        _ => V::F(round(
            match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                Min => x.min(y),
                Max => x.max(y),
                CopySign => x.copysign(y),
                Pow => {
                    if x < 0.0 {
                        f64::NAN
                    } else {
                        x.powf(y)
                    }
                }
                _ => f64::NAN,
            },
            t,
        )),
    }
}
