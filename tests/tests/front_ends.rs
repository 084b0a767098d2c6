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
