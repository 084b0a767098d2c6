//! Compile-time constant parameters in both front ends: `consts(..)` makes one kernel per
//! choice of values (the first constant varying slowest, then the dimensions), named
//! after the values, with the same IR from the text and the Rust front end.

use kernels_gen::{compile_rust_source, compile_text};

const SOURCE: &str = "
#[stencil(dims = [2, 3], consts(shift = [-1, 2], scaled = [false, true]))]
fn moved<T: Real>(u: In<T>, out: Out<T>, shift: i64, s: T, scaled: bool) {
    let v = u[shift * unit(0)];
    if scaled {
        out = s * v;
    } else {
        out = v;
    }
}
";

#[test]
fn both_front_ends_make_the_same_instances() {
    let text = compile_text(SOURCE).expect("the text front end compiles it");
    let rust = compile_rust_source(SOURCE).expect("the Rust front end compiles it");
    let names: Vec<(String, u8)> = text.iter().map(|k| (k.name.clone(), k.dims)).collect();
    let want = [
        ("moved_shift_m1_scaled_false", 2),
        ("moved_shift_m1_scaled_false", 3),
        ("moved_shift_m1_scaled_true", 2),
        ("moved_shift_m1_scaled_true", 3),
        ("moved_shift_2_scaled_false", 2),
        ("moved_shift_2_scaled_false", 3),
        ("moved_shift_2_scaled_true", 2),
        ("moved_shift_2_scaled_true", 3),
    ];
    assert_eq!(names, want.map(|(n, d)| (n.to_string(), d)));
    for (t, r) in text.iter().zip(&rust) {
        assert_eq!(t.to_string(), r.to_string());
    }
    // The constants are gone from the parameters; the scale stays one.
    let k = &text[6];
    assert_eq!(k.consts.len(), 2);
    assert_eq!(k.scalars.len(), 1);
    assert_eq!(k.fields[0].reach_hi[0], 2);
    assert_eq!(text[0].fields[0].reach_lo[0], -1);
}

#[test]
fn the_text_front_end_reports_misuse() {
    let twice = "#[stencil(dims = 2, consts(a = [0, 1], a = [1]))] fn k<T: Real>(u: In<T>, out: Out<T>, a: i64) { out = u[unit(a)]; }";
    let e = compile_text(twice).expect_err("listed twice").to_string();
    assert!(e.contains("`a` is listed twice"), "{e}");
    let mixed = "#[stencil(dims = 2, consts(a = [0, true]))] fn k<T: Real>(u: In<T>, out: Out<T>, a: i64) { out = u[unit(a)]; }";
    let e = compile_text(mixed).expect_err("mixed").to_string();
    assert!(e.contains("mix integers and booleans"), "{e}");
}

/// The built-in limiters lower as the same helpers written beside the kernel would.
#[test]
fn built_in_limiters_are_the_helpers_written_out() {
    let kernel = "#[stencil(dims = 1)] fn k<T: Real>(q: In<T>, out: Out<T>) { out = minmod(q - q[-1], q[1] - q) + minmod3(q[-1], q, q[1]); }";
    let beside = "
#[stencil_fn]
fn minmod<T: Real>(a: T, b: T) -> T {
    if a > 0.0 && b > 0.0 { a.min(b) } else if a < 0.0 && b < 0.0 { a.max(b) } else { 0.0 }
}
#[stencil_fn]
fn minmod3<T: Real>(a: T, b: T, c: T) -> T {
    if a > 0.0 && b > 0.0 && c > 0.0 { a.min(b).min(c) } else if a < 0.0 && b < 0.0 && c < 0.0 { a.max(b).max(c) } else { 0.0 }
}
";
    let built_in = compile_text(kernel).expect("built-ins");
    let written = compile_text(&format!("{beside}{kernel}")).expect("helpers");
    assert_eq!(built_in[0].to_string(), written[0].to_string());
}

/// `#[when(flag)]` parameters exist only in the kernels made for `flag = true`, in both
/// front ends; the other instance never reads them.
#[test]
fn parameters_of_some_instances() {
    let source = "
#[stencil(dims = 2, consts(scaled = [false, true]))]
fn k<T: Real>(u: In<T>, out: Out<T>, #[when(scaled)] s: T, scaled: bool) {
    if scaled {
        out = s * u;
    } else {
        out = u;
    }
}
";
    let text = compile_text(source).expect("the text front end compiles it");
    let rust = compile_rust_source(source).expect("the Rust front end compiles it");
    assert_eq!(text[0].scalars.len(), 0);
    assert_eq!(text[1].scalars.len(), 1);
    assert_eq!(text[1].scalars[0].name, "s");
    for (t, r) in text.iter().zip(&rust) {
        assert_eq!(t.to_string(), r.to_string());
    }
}

/// Misuse of instances: a name two definitions make, `#[when]` on a constant.
#[test]
fn instance_misuse_is_reported() {
    let clash = "
#[stencil(dims = 1, consts(x = [1]))]
fn k<T: Real>(u: In<T>, out: Out<T>, x: i64) { out = u[x]; }
#[stencil(dims = 1)]
fn k_x_1<T: Real>(u: In<T>, out: Out<T>) { out = u; }
";
    let e = compile_text(clash)
        .expect_err("two kernels named k_x_1")
        .to_string();
    assert!(e.contains("makes a kernel named `k_x_1`"), "{e}");
    let when = "#[stencil(dims = 2, consts(f = [false, true]))] fn k<T: Real>(u: In<T>, out: Out<T>, #[when(f)] f: bool) { out = u; }";
    let e = compile_text(when)
        .expect_err("when on the flag")
        .to_string();
    assert!(e.contains("every instance has it"), "{e}");
}
