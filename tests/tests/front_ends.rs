//! The macro and the `.stencil` text front end lower the same kernels to the same IR.

use stencil_tests::kernels::ALL;

#[test]
fn text_and_macro_lower_to_the_same_ir() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/suite.stencil");
    let src = std::fs::read_to_string(path).expect("suite.stencil");
    let kernels = kernels_gen::compile_text(&src).unwrap_or_else(|e| panic!("{path}:{e}"));
    assert_eq!(kernels.len(), ALL.len(), "same number of kernels");
    for k in &kernels {
        let macro_version = ALL
            .iter()
            .find(|c| c.name == k.name && c.dims == k.dims as usize)
            .unwrap_or_else(|| panic!("kernel {} only in the text file", k.name));
        assert_eq!(
            k.to_string(),
            macro_version.ir,
            "IR of `{}` differs",
            k.name
        );
    }
}

#[test]
fn a_changed_kernel_gives_a_different_ir() {
    // The comparison above can fail: one changed constant changes the IR text.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/suite.stencil");
    let src = std::fs::read_to_string(path).expect("suite.stencil");
    let changed = src.replace("- 4.0 * u", "- 4.5 * u");
    assert_ne!(src, changed);
    let kernels = kernels_gen::compile_text(&changed).expect("still valid");
    let lap5 = kernels.iter().find(|k| k.name == "lap5").expect("lap5");
    assert_ne!(lap5.to_string(), ALL[0].ir);
}

#[test]
fn text_errors_report_line_and_column() {
    let src = "#[stencil]\nfn f<T: Real>(u: In<T>, out: Out<T>) {\n    out = u[(1, 0)] + v;\n}\n";
    let e = kernels_gen::compile_text(src).unwrap_err();
    assert_eq!((e.line, e.col), (3, 23), "{e}");
    assert!(e.message.contains("unknown name `v`"), "{e}");

    let src = "#[stencil]\nfn f<T: Real>(u: In<T>, out: Out<T>) {\n    out = u[(1, 0)] +;\n}\n";
    let e = kernels_gen::compile_text(src).unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(e.message.contains("expected"), "{e}");
}

/// Integer and boolean fields, bit operations and their compound forms read the same in
/// the text format as in the macro (operator precedence included).
#[test]
fn bit_operations_parse_alike_in_both_front_ends() {
    use stencil_tests::kernels::bits;
    assert_eq!(text_ir(bits::mix::SOURCE, "mix"), bits::mix::IR);
    // `|` binds looser than `^`, `^` than `&`, `&` than `<<`, `<<` than `+`.
    let loose = "#[stencil(dims = 1)]\nfn k(a: In<i32>, out: Out<i32>) {\n    out = a | a ^ a & a << 1 + 1;\n}\n";
    let tight = "#[stencil(dims = 1)]\nfn k(a: In<i32>, out: Out<i32>) {\n    out = a | (a ^ (a & (a << (1 + 1))));\n}\n";
    let ir =
        |s: &str| kernels_gen::compile_text(s).unwrap_or_else(|e| panic!("{e}"))[0].to_string();
    assert_eq!(ir(loose), ir(tight));
}

/// Parameter groups (`#[stencil_group]` structs, from a library and from the module) and
/// member reads read the same in the text format as in the macro.
#[test]
fn groups_parse_alike_in_both_front_ends() {
    use stencil_tests::kernels::groups::grouped::step;
    assert!(step::SOURCE.contains("stencil_group"));
    assert_eq!(text_ir(step::SOURCE, "step"), step::IR);
    // A group with members per axis, in a kernel for 2D and 3D.
    use stencil_tests::kernels::groups::per_axis::diffuse;
    let text = stencil_tests::harness::undocumented(diffuse::d3::SOURCE);
    let kernels = kernels_gen::compile_text(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let by_dims = |d: u8| kernels.iter().find(|k| k.name == "diffuse" && k.dims == d);
    assert_eq!(by_dims(2).expect("2D").to_string(), diffuse::d2::IR);
    assert_eq!(by_dims(3).expect("3D").to_string(), diffuse::d3::IR);
    // Groups taken as fields, passed on by name and built at helper calls (of fields
    // and of staged values).
    use stencil_tests::kernels::groups::of_fields::{exchange, staged_pair};
    assert!(exchange::SOURCE.contains("Pair {"));
    assert_eq!(text_ir(exchange::SOURCE, "exchange"), exchange::IR);
    assert_eq!(text_ir(staged_pair::SOURCE, "staged_pair"), staged_pair::IR);
}

/// The IR the text front end gives kernel `name` of a macro module's `SOURCE` (which the
/// macro keeps as written there).
fn text_ir(source: &str, name: &str) -> String {
    let text = stencil_tests::harness::undocumented(source);
    let kernels = kernels_gen::compile_text(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let k = kernels.iter().find(|k| k.name == name);
    k.unwrap_or_else(|| panic!("{name} not in its own source"))
        .to_string()
}
