//! Compile-time checks of the kernel and element-wise macros: each case in
//! `tests/compile_fail/` is a mismatched declaration and its expected error.
//! They live in this crate, not the facade, so that trybuild's project
//! builds this crate's few dependencies rather than the facade's many.

#[test]
fn mismatched_declarations_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
