//! Structural assertions on the compiler's output (in the style of Devito's codegen tests):
//! operation counts, CSE, folding, footprints, rather than golden files.

use kernels_gen::compile_text;
use kernels_gen::ir::{Kernel, Node};

fn one(src: &str) -> Kernel {
    let mut ks = compile_text(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert_eq!(ks.len(), 1);
    ks.remove(0)
}

#[test]
fn repeated_reads_and_subexpressions_are_shared() {
    let k = one("#[stencil] fn f<T: Real>(u: In<T>, out: Out<T>) {
        let a = u[(1, 0)] * u[(1, 0)];
        out = (u[(1, 0)] * u[(1, 0)]) + a + u[(1, 0)];
    }");
    let c = k.op_counts();
    assert_eq!(c.loads, 1, "{k}");
    // one mul (shared), two adds
    assert_eq!(c.arith, 3, "{k}");
}

#[test]
fn nine_point_stencil_from_loops_has_nine_loads() {
    let k = one("#[stencil] fn lap9<T: Real>(u: In<T>, out: Out<T>) {
        let mut s: T = 0.0;
        for j in -1..=1 { for i in -1..=1 { s += u[(i, j)]; } }
        out = s - 9.0 * u;
    }");
    assert_eq!(k.op_counts().loads, 9, "{k}");
    assert_eq!(k.halo(), 1);
    assert_eq!(k.fields[0].reach_lo, [-1, -1, 0]);
    assert_eq!(k.fields[0].reach_hi, [1, 1, 0]);
}

#[test]
fn constants_fold_and_dead_code_disappears() {
    let k = one("#[stencil] fn f<T: Real>(u: In<T>, out: Out<T>) {
        let unused = u[(5, 0)] * 2.0;
        let two = 1.0 + 1.0;
        let n = (3 * 4 - 2) / 5;
        out = if n == 2 { u * two * 1.0 } else { u[(-7, 0)] };
    }");
    // `unused` and the dead branch read at offsets 5 and -7: neither may widen the halo.
    assert_eq!(k.halo(), 0, "{k}");
    let c = k.op_counts();
    assert_eq!((c.loads, c.arith, c.selects), (1, 1, 0), "{k}");
    assert!(k
        .nodes
        .iter()
        .any(|n| *n == Node::RealConst(2.0f64.to_bits())));
}

#[test]
fn if_statements_become_selects_on_mutable_locals() {
    let k = one("#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, out: Out<T>) {
        let mut v = u;
        if u > 0.0 { v = 2.0 * u; } else if u < -1.0 { v = -u; }
        out = v;
    }");
    assert_eq!(k.op_counts().selects, 2, "{k}");
}

#[test]
fn dimension_and_halo_come_from_the_offsets() {
    let k = one("#[stencil] fn f<T: Real>(a: In<T>, b: In<T>, out: Out<T>) {
        out = a[(0, 0, -2)] + b[(3, 0, 0)];
    }");
    assert_eq!(k.dims, 3);
    assert_eq!(k.fields[0].halo(), 2);
    assert_eq!(k.fields[1].halo(), 3);
    assert_eq!(k.halo(), 3);
}

#[test]
fn generic_and_concrete_kernels() {
    let g = one("#[stencil] fn f<T: Real>(u: In<T>, out: Out<T>) { out = u[1] * 0.5; }");
    assert!(g.is_generic());
    let c = one(
        "#[stencil] fn f(u: In<f64>, lo: In<f32>, out: Out<f32>) { out = (u[1] as f32) + lo; }",
    );
    assert!(!c.is_generic());
}

#[test]
fn errors_name_the_problem_and_the_fix() {
    let e = compile_text("#[stencil] fn f<T: Real>(u: In<T>, out: Out<T>) { u = out[1]; }")
        .unwrap_err();
    assert!(
        e.message.contains("input field") || e.message.contains("cannot be read"),
        "{e}"
    );
    assert!(e.message.contains("help:"), "{e}");
    let e =
        compile_text("#[stencil] fn f(a: In<f32>, b: In<f64>, out: Out<f64>) { out = a[1] + b; }")
            .unwrap_err();
    assert!(e.message.contains("mixing precisions"), "{e}");
}

#[test]
fn helpers_are_inlined_and_recursion_is_refused() {
    let k = one("#[stencil_fn] fn sq<T: Real>(x: T) -> T { x * x }
        #[stencil] fn f<T: Real>(u: In<T>, out: Out<T>) { out = sq(u[1]) + sq(u[1]); }");
    assert_eq!(k.op_counts().arith, 2, "{k}");
    let e = compile_text(
        "#[stencil_fn] fn g<T: Real>(x: T) -> T { g(x) }
        #[stencil] fn f<T: Real>(u: In<T>, out: Out<T>) { out = g(u[1]); }",
    )
    .unwrap_err();
    assert!(e.message.contains("recursive"), "{e}");
}
