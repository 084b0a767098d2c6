//! Structural assertions on the compiler's output (in the style of Devito's codegen tests):
//! operation counts, CSE, folding, footprints, rather than golden files.

use kernels_gen::compile_text;
use kernels_gen::ir::{Binary, Comparison, Kernel, Node};

fn one(src: &str) -> Kernel {
    let mut ks = compile_text(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert_eq!(ks.len(), 1);
    ks.remove(0)
}

/// The CPU code of the one kernel in `src`.
fn cpu(src: &str) -> String {
    kernels_gen::back::rust::cpu_function(&one(src), &quote::quote!(rt)).to_string()
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

/// The nodes a plan computes unconditionally.
fn unguarded(plan: &kernels_gen::branches::Plan) -> Vec<u32> {
    plan.top
        .iter()
        .filter_map(|u| match u {
            kernels_gen::branches::Unit::Node(n) => Some(*n),
            kernels_gen::branches::Unit::Branch(_) => None,
        })
        .collect()
}

#[test]
fn costly_if_arms_become_one_branch_per_condition() {
    let k = one(
        "#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, a: Out<T>, b: Out<T>) {
        let edge = index(0) == 0;
        let s = (u * u + 1.0).sqrt();
        a = if edge { s / (u + 2.0) } else { u };
        b = if edge { (s + 1.0).sqrt() / (u + 3.0) } else { u[(1, 0)] };
    }",
    );
    let plan = kernels_gen::branches::plan(&k, &k.live_nodes()).expect("a branch");
    assert_eq!(plan.branches.len(), 1, "{plan:?}");
    assert_eq!(
        plan.branches[0].selects.len(),
        2,
        "both selects join the branch"
    );
    // The square roots and divisions, the shared one included, are all guarded.
    let costly = |n: &u32| {
        let node = &k.nodes[*n as usize];
        kernels_gen::branches::cost(node) >= 10 && !matches!(node, Node::Load { .. })
    };
    assert!(!unguarded(&plan).iter().any(costly), "{plan:?}\n{k}");
    // `s` (a multiply, an add, a root), `a`'s arm (an add, a division), `b`'s arm (two
    // adds, a root, a division).
    assert_eq!(plan.guarded_nodes(), 3 + 2 + 4, "{plan:?}\n{k}");
}

#[test]
fn cheap_if_arms_stay_selects() {
    let k = one("#[stencil] fn f<T: Real>(u: In<T>, out: Out<T>) {
        out = if u > 0.0 { 2.0 * u + 1.0 } else { u[(1, 0)] - u };
    }");
    assert_eq!(kernels_gen::branches::plan(&k, &k.live_nodes()), None);
}

#[test]
fn an_arm_that_needs_a_select_of_its_own_branch_stays_unguarded() {
    // `b`'s arm needs `a`, which exists only after the branch on `edge` joins.
    let k = one("#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, out: Out<T>) {
        let edge = index(1) == 0;
        let a = if edge { (u + 1.0).sqrt() / (u + 2.0) } else { u };
        let b = if edge { (a + 1.0).sqrt() / (a * a + 3.0) } else { u[(0, 1)] };
        out = a + b;
    }");
    assert_eq!(kernels_gen::branches::plan(&k, &k.live_nodes()), None);
}

#[test]
fn the_conformance_suites_guarded_kernel_branches_where_it_should() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/kernels/suite.stencil"
    );
    let source = std::fs::read_to_string(path).expect("the suite's text");
    let kernels = kernels_gen::compile_text(&source).expect("the suite compiles");
    let k = kernels
        .iter()
        .find(|k| k.name == "guarded")
        .expect("guarded");
    let plan = kernels_gen::branches::plan(k, &k.live_nodes()).expect("branches");
    // The edge's branch joins both of its selects; `deep`'s branch holds a nested one;
    // the `south` selects (one arm needs the other select) stay selects.
    assert_eq!(plan.branches.len(), 3, "{plan:?}");
    let joining: Vec<usize> = plan.branches.iter().map(|b| b.selects.len()).collect();
    assert_eq!(joining.iter().filter(|&&n| n == 2).count(), 1, "{plan:?}");
    let nested = plan.branches.iter().any(|b| {
        b.arms
            .iter()
            .flatten()
            .any(|u| matches!(u, kernels_gen::branches::Unit::Branch(_)))
    });
    assert!(nested, "{plan:?}");
    let on_equality = plan.branches.iter().any(|b| {
        matches!(
            k.nodes[b.cond as usize],
            Node::Binary(Binary::Compare(Comparison::Eq), ..)
        )
    });
    assert!(!on_equality, "the `south` condition got a branch: {plan:?}");
}

#[test]
fn only_the_rare_arm_of_an_edge_condition_is_guarded() {
    // Off the edge (almost everywhere) the costly arm runs anyway: no branch for it.
    let k = one("#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, out: Out<T>) {
        let edge = index(0) == 0 || index(0) == extent(0) - 1;
        out = if edge { u } else { (u + 1.0).sqrt() / (u * u + 2.0) };
    }");
    assert_eq!(kernels_gen::branches::plan(&k, &k.live_nodes()), None);
    // On the edge only: guarded.
    let k = one("#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, out: Out<T>) {
        let edge = index(0) == 0 || index(0) == extent(0) - 1;
        out = if edge { (u + 1.0).sqrt() / (u * u + 2.0) } else { u };
    }");
    let plan = kernels_gen::branches::plan(&k, &k.live_nodes()).expect("a branch");
    assert_eq!(plan.branches.len(), 1);
}

#[test]
fn a_colouring_of_the_index_gets_no_branch() {
    // Red and black points alternate within every warp: a branch would split them all.
    let k = one(
        "#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, f: In<T>, out: Out<T>) {
        let red = (index(0) + index(1)) % 2 == 0;
        out = if red { (f + u[(1, 0)] + u[(-1, 0)] + u[(0, 1)] + u[(0, -1)]) / 4.0 } else { u };
    }",
    );
    assert_eq!(kernels_gen::branches::plan(&k, &k.live_nodes()), None);
}

#[test]
fn reads_only_an_arm_needs_move_into_its_branch() {
    // A Runge-Kutta stage that reads the old state only when it keeps part of it.
    let k = one("#[stencil(dims = 2)]
        fn f<T: Real>(u: In<T>, v: In<T>, old_u: In<T>, old_v: In<T>, a: Out<T>, b: Out<T>, keep: T) {
            a = if keep > 0.0 { keep * old_u + u } else { u };
            b = if keep > 0.0 { keep * old_v + v } else { v };
        }");
    let plan = kernels_gen::branches::plan(&k, &k.live_nodes()).expect("a branch");
    let loads_in_top = unguarded(&plan)
        .iter()
        .filter(|&&n| matches!(k.nodes[n as usize], Node::Load { .. }))
        .count();
    assert_eq!(
        loads_in_top, 2,
        "only `u` and `v` are read unconditionally: {plan:?}\n{k}"
    );
}

#[test]
fn a_condition_on_data_needs_more_work_to_branch() {
    // Two roots and a division: enough under a condition on the index, not on data.
    let k = one("#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, out: Out<T>) {
        out = if u > 0.0 { (u + 1.0).sqrt() / (u + 2.0).sqrt() } else { u };
    }");
    assert_eq!(kernels_gen::branches::plan(&k, &k.live_nodes()), None);
}

#[test]
fn reads_stay_out_of_branches_on_data() {
    let k = one(
        "#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, v: In<T>, out: Out<T>) {
        out = if u > 0.0 { (v[(1, 0)] + 1.0).powf(1.5) / (v[(0, 1)] + 2.0) } else { u };
    }",
    );
    let plan = kernels_gen::branches::plan(&k, &k.live_nodes()).expect("a branch");
    let loads_in_top = unguarded(&plan)
        .iter()
        .filter(|&&n| matches!(k.nodes[n as usize], Node::Load { .. }))
        .count();
    assert_eq!(loads_in_top, 3, "{plan:?}\n{k}");
}

#[test]
fn a_condition_on_data_near_an_edge_still_branches() {
    // `x` depends on the index through the edge's select, but `x > 0.5` is a condition on
    // data, not a pattern of the index.
    let k = one("#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, out: Out<T>) {
        let x = if index(0) == 0 { u[(1, 0)] } else { u };
        out = if x > 0.5 { (x + 1.0).powf(1.5) / (x + 2.0) } else { x };
    }");
    let plan = kernels_gen::branches::plan(&k, &k.live_nodes()).expect("a branch");
    assert_eq!(plan.branches.len(), 1, "{plan:?}");
}

#[test]
fn a_select_on_a_select_of_the_same_condition_is_not_joined_with_it() {
    // `q`'s phi would take `p`'s phi, which exists only after the join: no such branch.
    let k = one(
        "#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, a: Out<T>, b: Out<T>) {
        let e = index(0) == 0;
        let p = if e { (u + 1.0).sqrt() / (u + 2.0) } else { u };
        let q = if e { (u + 3.0).sqrt() / (u + 4.0) } else { p };
        a = p;
        b = q;
    }",
    );
    if let Some(plan) = kernels_gen::branches::plan(&k, &k.live_nodes()) {
        for b in &plan.branches {
            assert!(b.selects.len() < 2, "{plan:?}");
        }
    }
}

/// The parity tests of `index(0)` the CPU's paired middle loop decides: either operand
/// order, `==` and `!=`, and constants the remainder never equals.
#[test]
fn parity_tests_of_the_index_along_x_are_decided_for_even_and_odd_points() {
    let k = one(
        "#[stencil(dims = 2)] fn f<T: Real>(u: In<T>, a: Out<T>, b: Out<T>, c: Out<T>, d: Out<T>) {
        a = if 1 == index(0) % 2 { u } else { 2.0 * u };
        b = if index(0) % 2 != 0 { u } else { 3.0 * u };
        c = if index(0) % 2 == 2 { u } else { 4.0 * u };
        d = if index(0) % 2 != -1 { u } else { 5.0 * u };
    }",
    );
    let mut decided: Vec<(bool, bool)> =
        kernels_gen::back::edges::decided_by_parity(&k, &k.live_nodes(), 0)
            .into_iter()
            .map(|(_, even, odd)| (even, odd))
            .collect();
    decided.sort();
    // `1 == i % 2` and `i % 2 != 0`: false, true; `== 2`: never; `!= -1`: always.
    assert_eq!(
        decided,
        [(false, false), (false, true), (false, true), (true, true)],
        "{k}"
    );
}

/// A kernel with edge tests that weighs by the parity of `index(0)` runs the middle of a
/// row in pairs on the CPU, reading its coarse field at one index per pair; one without
/// parity tests does not.
#[test]
fn parity_kernels_run_the_middle_of_a_row_in_pairs_on_the_cpu() {
    let paired = cpu("#[stencil] fn p<T: Real>(coarse: Coarse<T>, fine: Out<T>) {
        let low = if index(0) % 2 == 1 { 0.5 * (coarse + coarse[(1, 0)]) } else { coarse };
        fine = if index(0) == 0 { 0.0 } else { low };
    }");
    // A counted loop over pairs, the coarse index one per pair (affine in the counter).
    assert!(paired.contains("let t = t0 + 2 * p"), "{paired}");
    assert!(paired.contains("let iac = iac0 + p"), "{paired}");
    let single = cpu("#[stencil] fn s<T: Real>(u: In<T>, out: Out<T>) {
        out = if index(0) == 0 { 0.0 } else { u[(-1, 0)] };
    }");
    assert!(!single.contains("t0 + 2 * p"), "{single}");
}

/// Tests of the index along axis 1 are decided on interior rows: the CPU code keeps a
/// second middle loop for them, and a kernel without such tests has none.
#[test]
fn interior_rows_decide_the_tests_along_axis_1_on_the_cpu() {
    let k = one("#[stencil(dims = 2)] fn s<T: Real>(u: In<T>, out: Out<T>) {
        out = if index(0) == 0 || index(1) == extent(1) - 1 { 0.0 } else { u };
    }");
    let decided = kernels_gen::back::edges::decided_in_interior_rows(&k, &k.live_nodes());
    assert_eq!(
        decided.iter().map(|&(_, v)| v).collect::<Vec<_>>(),
        [false],
        "{k}"
    );
    let rows = cpu("#[stencil(dims = 2)] fn s<T: Real>(u: In<T>, out: Out<T>) {
        out = if index(0) == 0 || index(1) == extent(1) - 1 { 0.0 } else { u };
    }");
    assert!(rows.contains("(j >="), "{rows}");
    let plain = cpu("#[stencil(dims = 2)] fn p<T: Real>(u: In<T>, out: Out<T>) {
        out = if index(0) == 0 { 0.0 } else { u };
    }");
    assert!(!plain.contains("(j >="), "{plain}");
}

/// Parity tests of `j` (and `k`) split a row's middle loop into copies for rows of even
/// and of odd index, each with those tests decided; a kernel without them has one copy.
#[test]
fn row_parity_tests_split_the_middle_loop_on_the_cpu() {
    let k = one("#[stencil(dims = 3)] fn p<T: Real>(u: In<T>, out: Out<T>) {
        let wy = if index(1) % 2 == 1 { 0.5 } else { 1.0 };
        let wz = if 0 != index(2) % 2 { 0.25 } else { 1.0 };
        out = if index(0) == 0 { 0.0 } else { wy * wz * u };
    }");
    let decided = |axis| {
        kernels_gen::back::edges::decided_by_parity(&k, &k.live_nodes(), axis)
            .into_iter()
            .map(|(_, even, odd)| (even, odd))
            .collect::<Vec<_>>()
    };
    assert_eq!(decided(1), [(false, true)], "{k}");
    assert_eq!(decided(2), [(false, true)], "{k}");
    assert!(decided(0).is_empty(), "{k}");
    let split = cpu("#[stencil(dims = 3)] fn p<T: Real>(u: In<T>, out: Out<T>) {
        let wy = if index(1) % 2 == 1 { 0.5 } else { 1.0 };
        let wz = if 0 != index(2) % 2 { 0.25 } else { 1.0 };
        out = if index(0) == 0 { 0.0 } else { wy * wz * u };
    }");
    assert!(split.contains("if j & 1 == 0"), "{split}");
    assert!(split.contains("if k & 1 == 0"), "{split}");
    // Four copies of the middle loop: the row-parity test of `j` once, that of `k` in
    // each of its arms; the body is emitted four times (f32 and f64, each for AVX and
    // for the baseline).
    assert_eq!(split.matches("if j & 1 == 0").count(), 4, "{split}");
    assert_eq!(split.matches("if k & 1 == 0").count(), 8, "{split}");
    let plain = cpu("#[stencil(dims = 3)] fn q<T: Real>(u: In<T>, out: Out<T>) {
        out = if index(0) == 0 { 0.0 } else { u };
    }");
    assert!(!plain.contains("& 1 == 0"), "{plain}");
}
