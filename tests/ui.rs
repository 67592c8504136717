//! Compile-time checks of the macros: each case under `tests/ui/` must fail with the error in
//! its `.stderr` (regenerate with `TRYBUILD=overwrite cargo test --test ui`), and each case
//! under `tests/ui/pass/` must compile and run.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
