//! A reference interpreter of the IR: slow, simple and obviously right.
//!
//! It evaluates every point with plain Rust arithmetic, one node at a time, and is the
//! third opinion in the conformance tests beside the generated Rust and the LLVM lowering.
//! It uses the same calling convention as the LLVM entries (see `crate::llvm`).

use crate::ir::{
    fold_binary, Binary, Const, IndexMap, Kernel, Node, ParamKind, Precision, ReduceOp, Ty, Unary,
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
    map: IndexMap,
}

/// Runs `k` at precision `p` over the domain described by `slots`.
///
/// # Safety
/// As for [`crate::llvm::jit::run_host`]: the slots must describe valid memory.
///
/// # Panics
/// On a vertex kernel or one that samples a grid, which the interpreter does not run
/// (their CPU path is the generated Rust, compared with the GPU in tests).
pub unsafe fn run(k: &Kernel, p: Precision, slots: &[u64]) {
    // Staged values are computed where they are read.
    let unstaged;
    let k = if k.stages.is_empty() {
        k
    } else {
        unstaged = k.unstaged();
        &unstaged
    };
    assert!(
        !k.is_vertex() && k.sampled.is_empty(),
        "the interpreter does not run vertex kernels or kernels that sample grids (`{}`)",
        k.name
    );
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
                    map: k.fields[i as usize].map,
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
            ParamKind::Mesh => unreachable!("only in vertex kernels"),
            ParamKind::Sampled => unreachable!("refused above"),
        }
    }
    let live = k.live_nodes();
    let mut acc: Vec<f64> = k.reductions.iter().map(|r| r.op.identity()).collect();
    let mut vals = vec![V::I(0); k.nodes.len()];
    // Address of field `f` at domain point `idx` plus `off`, through the field's map.
    let addr = |f: &FieldSlot, idx: [i64; 3], off: [i32; 3]| -> u64 {
        let at = |a: usize| f.map.apply(idx[a]) + off[a] as i64;
        let lin = at(0) + at(1) * f.sy + at(2) * f.sz;
        let size = if f.f32 { 4 } else { 8 };
        (f.ptr as i64 + lin * size) as u64
    };
    let read = |f: &FieldSlot, a: u64| -> f64 {
        if f.f32 {
            *(a as *const f32) as f64
        } else {
            *(a as *const f64)
        }
    };
    let write = |f: &FieldSlot, a: u64, x: f64| {
        if f.f32 {
            *(a as *mut f32) = x as f32;
        } else {
            *(a as *mut f64) = x;
        }
    };
    let eval = |vals: &mut Vec<V>, idx: [i64; 3]| {
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
                    V::F(read(f, addr(f, idx, offset)))
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
                Node::LineSolution(_) => unreachable!("never live in a finished kernel"),
                Node::Staged { .. } => unreachable!("the interpreter runs the unstaged kernel"),
                Node::Sample { .. } => unreachable!("refused above"),
                Node::Gather { .. }
                | Node::Topo { .. }
                | Node::LoopPos(_)
                | Node::Carried(..)
                | Node::LoopResult(..) => unreachable!("only in vertex kernels"),
            };
        }
    };
    if let Some(line) = &k.line {
        let axis = line.axis as usize;
        let f = &fields[line.field as usize];
        let t = k.fields[line.field as usize].elem.concrete(p);
        let r = |x: f64| round(x, t);
        let len = n[axis];
        let mut cp = vec![0.0; len.max(0) as usize];
        let mut dp = vec![0.0; len.max(0) as usize];
        let mut others = [n[0], n[1], n[2]];
        others[axis] = 1;
        for kk in 0..others[2] {
            for j in 0..others[1] {
                for i in 0..others[0] {
                    let start = [i, j, kk];
                    let at = |x: i64| {
                        let mut idx = start;
                        idx[axis] = x;
                        idx
                    };
                    if len == 0 {
                        continue;
                    }
                    if let Some(m) = line.mask {
                        eval(&mut vals, at(0));
                        if !vals[m as usize].b() {
                            continue;
                        }
                    }
                    let mut before = [0; 3];
                    before[axis] = -1;
                    let u_before = read(f, addr(f, at(0), before));
                    let u_after = read(
                        f,
                        addr(f, at(len - 1), [0, 1, 2].map(|a| (a == axis) as i32)),
                    );
                    for x in 0..len {
                        eval(&mut vals, at(x));
                        let g = |m: u32| vals[m as usize].f();
                        let (a, b, c, mut d) =
                            (g(line.lower), g(line.diag), g(line.upper), g(line.rhs));
                        if x == 0 {
                            d = r(d - r(a * u_before));
                        }
                        if x == len - 1 {
                            d = r(d - r(c * u_after));
                        }
                        let xi = x as usize;
                        let (denom, d) = if x == 0 {
                            (b, d)
                        } else {
                            (r(b - r(a * cp[xi - 1])), r(d - r(a * dp[xi - 1])))
                        };
                        cp[xi] = r(c / denom);
                        dp[xi] = r(d / denom);
                    }
                    let mut next = dp[len as usize - 1];
                    write(f, addr(f, at(len - 1), [0; 3]), next);
                    for x in (0..len - 1).rev() {
                        let xi = x as usize;
                        next = r(dp[xi] - r(cp[xi] * next));
                        write(f, addr(f, at(x), [0; 3]), next);
                    }
                }
            }
        }
    } else {
        for kk in 0..n[2] {
            for j in 0..n[1] {
                for i in 0..n[0] {
                    let idx = [i, j, kk];
                    eval(&mut vals, idx);
                    for st in &k.stores {
                        if st.mask.is_some_and(|m| !vals[m as usize].b()) {
                            continue;
                        }
                        let fs = &fields[st.field as usize];
                        write(fs, addr(fs, idx, [0; 3]), vals[st.value as usize].f());
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
                    Unary::Ceil => x.ceil(),
                    Unary::Trunc => x.trunc(),
                    Unary::Round => x.round(),
                    Unary::Exp => x.exp(),
                    Unary::Ln => x.ln(),
                    Unary::Exp2 => x.exp2(),
                    Unary::Log2 => x.log2(),
                    Unary::Log10 => x.log10(),
                    Unary::Sinh => x.sinh(),
                    Unary::Cosh => x.cosh(),
                    Unary::Tanh => x.tanh(),
                    Unary::Cbrt => x.cbrt(),
                    Unary::Asinh => x.asinh(),
                    Unary::Acosh => x.acosh(),
                    Unary::Atanh => x.atanh(),
                    Unary::Sin => x.sin(),
                    Unary::Cos => x.cos(),
                    Unary::Tan => x.tan(),
                    Unary::Asin => x.asin(),
                    Unary::Acos => x.acos(),
                    Unary::Atan => x.atan(),
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
    // Comparisons of reals too: the constant folder's (whatever the precision).
    if let Some(Const::Bool(c)) = fold_binary(op, Const::Real(x), Const::Real(y)) {
        return V::B(c);
    }
    V::F(round(
        match op {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div => x / y,
            Min => x.min(y),
            Max => x.max(y),
            CopySign => x.copysign(y),
            Hypot => x.hypot(y),
            Atan2 => x.atan2(y),
            Pow => {
                // NaN for a negative base, except `x^0 = 1` (as the device gives).
                if x < 0.0 && y != 0.0 {
                    f64::NAN
                } else {
                    x.powf(y)
                }
            }
            _ => f64::NAN,
        },
        t,
    ))
}
