//! Every misuse of the stencil language is a compile error with a span on the offending token.
#[test]
fn dsl_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("error/*.rs");
}
