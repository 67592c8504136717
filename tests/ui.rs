//! Compile-time checks of the macros: each case under `tests/ui/` must fail with the error in
//! its `.stderr` (regenerate with `TRYBUILD=overwrite cargo test --test ui`). Inputs that must
//! compile are tested in `tests/integration/macro_shapes.rs`: as trybuild "pass" cases they
//! made trybuild build every dependency again with code generation, not just check them.
//! One case is not the macros': `dropped_builders.rs`, the public API's `#[must_use]`
//! builders, configurations and clients, dropped unused.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
